"""A local stand-in for the Hugging Face Hub, for tests and benchmarks (no network)."""

from .files import gguf_bytes, safetensors_bytes, split_gguf_bytes
from .server import HubServer
from .state import Blob, Fault, Hit, HubState

__all__ = ["Blob", "Fault", "Hit", "HubServer", "HubState", "gguf_bytes", "safetensors_bytes",
           "split_gguf_bytes"]
