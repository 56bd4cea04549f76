"""The standard test repos: static fixtures from tests/fixtures/hub plus generated weights.

  kvfit-test/tiny-qwen3  real Qwen3-0.6B config; 2 root shards + index, original/,
                         consolidated.safetensors and pytorch_model.bin (several copies)
  kvfit-test/quantized   config + hf_quant_config.json + index + 1 shard
  kvfit-test/moving      two commits (1111..., 2222...); main -> 1111...
  kvfit-test/tiny-gguf   GGUF only: a 3-part split Q4_K_M/, a single Q8_0, an mmproj file
  kvfit-test/broken      malformed safetensors and GGUF files (select them by blob URL)
  kvfit-test/private, kvfit-test/gated   access-controlled (token "hf_good" is allowed)
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from .files import gguf_bytes, safetensors_bytes, split_gguf_bytes
from .state import Blob, HubState

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hub"
QWEN3_CONFIG = (FIXTURES / "repos" / "kvfit-test--tiny-qwen3" / "main" / "config.json").read_bytes()
GOOD_TOKEN = "hf_good"
GGUF_LAYERS = 4


def layer_tensors(layers: range, dtype: str = "BF16") -> dict[str, tuple[str, list[int]]]:
    """Two tiny tensors per layer, named like transformers' model.layers.N.*."""
    out = {}
    for n in layers:
        out[f"model.layers.{n}.self_attn.q_proj.weight"] = (dtype, [4, 8])
        out[f"model.layers.{n}.mlp.down_proj.weight"] = (dtype, [8, 4])
    return out


def sharded(layer_count: int, shards: int) -> dict[str, bytes]:
    """Root shards model-0000i-of-0000n.safetensors plus a consistent index."""
    files, weight_map, total = {}, {}, 0
    per = -(-layer_count // shards)
    for i in range(shards):
        tensors = layer_tensors(range(i * per, min(layer_count, (i + 1) * per)))
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        files[name] = safetensors_bytes(tensors)
        weight_map.update(dict.fromkeys(tensors, name))
        total += sum(2 * 4 * 8 for _ in tensors)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    files["model.safetensors.index.json"] = json.dumps(index, indent=2).encode()
    return files


def gguf_kv(arch: str = "qwen3", layers: int = GGUF_LAYERS, vocab: int = 64) -> dict[str, object]:
    """Metadata of a tiny qwen3-like GGUF."""
    return {f"{arch}.block_count": layers, f"{arch}.context_length": 40960,
            f"{arch}.embedding_length": 64, f"{arch}.feed_forward_length": 128,
            f"{arch}.attention.head_count": 4, f"{arch}.attention.head_count_kv": 2,
            f"{arch}.attention.key_length": 16, "general.file_type": 15,
            "tokenizer.ggml.tokens": [f"t{i}" for i in range(vocab)]}


def gguf_tensors(layers: int = GGUF_LAYERS) -> dict[str, np.ndarray]:
    """An embedding plus two attention tensors per layer (llama.cpp 'blk.N.' names)."""
    out = {"token_embd.weight": np.zeros((8, 64), dtype=np.float16)}
    for n in range(layers):
        out[f"blk.{n}.attn_q.weight"] = np.zeros((64, 64), dtype=np.float16)
        out[f"blk.{n}.attn_k.weight"] = np.zeros((32, 64), dtype=np.float32)
    return out


def gguf_repo() -> dict[str, bytes]:
    """A GGUF-only repo with two quantizations (one split in 3) and a vision projector."""
    parts = split_gguf_bytes("tiny-Q4_K_M.gguf", "qwen3", gguf_kv(), gguf_tensors(),
                             max_tensors=3)
    files = {f"Q4_K_M/{name}": data for name, data in parts.items()}
    files["tiny-Q8_0.gguf"] = gguf_bytes("qwen3", gguf_kv(), gguf_tensors())
    files["mmproj-tiny-f16.gguf"] = gguf_bytes("clip", {}, {"v.w": np.zeros(4, np.float32)})
    files["README.md"] = b"# tiny gguf\n"
    return files


def broken_repo() -> dict[str, bytes | Blob]:
    """Files that must fail cleanly."""
    good = gguf_bytes("qwen3", gguf_kv(), gguf_tensors())
    return {
        "config.json": QWEN3_CONFIG,
        "absurd.safetensors": struct.pack("<Q", 2**40) + b"{}" + b"\0" * 64,
        "beyond.safetensors": struct.pack("<Q", 5000) + b'{"a": 1}' + b"\0" * 90,
        "badjson.safetensors": struct.pack("<Q", 10) + b'{"a": [1, ' + b"\0" * 16,
        "offsets.safetensors": _bad_offsets(),
        "truncated.gguf": good[: len(good) - 100],
        "cut-header.gguf": good[:200],
        "unknown-arch.gguf": gguf_bytes("mamba9", gguf_kv("mamba9"), {}),
    }


def _bad_offsets() -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 4096]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * 16


def build_standard_hub(state: HubState) -> None:
    """Populate `state` with every standard test repo."""
    tiny = {**sharded(28, 2),
            "original/consolidated.safetensors": safetensors_bytes(layer_tensors(range(28))),
            "consolidated.safetensors": safetensors_bytes(layer_tensors(range(28))),
            "pytorch_model.bin": b"\0" * 4096, "README.md": b"# tiny\n"}
    state.load_tree(FIXTURES / "repos", extra={"kvfit-test/tiny-qwen3": tiny})
    quant = {"quant_method": "fp8", "kv_cache_quant_algo": "FP8"}
    state.add_commit("kvfit-test/quantized", {
        "config.json": QWEN3_CONFIG, "hf_quant_config.json": json.dumps(quant).encode(),
        **sharded(28, 1)})
    state.add_commit("kvfit-test/tiny-gguf", gguf_repo())
    state.add_commit("kvfit-test/broken", broken_repo())
    for name in ("private", "gated"):
        state.add_commit(f"kvfit-test/{name}", {"config.json": QWEN3_CONFIG})
        repo = state.repos[f"kvfit-test/{name}"]
        repo.private, repo.gated = name == "private", name == "gated"
        repo.tokens.add(GOOD_TOKEN)
