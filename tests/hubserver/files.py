"""Build small but real weight files for test repos: safetensors and (split) GGUF."""

from __future__ import annotations

import json
import math
import struct
import tempfile
from pathlib import Path

import numpy as np

_ST_WIDTH = {"F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "U8": 1, "I64": 8}


def safetensors_bytes(tensors: dict[str, tuple[str, list[int]]], *, pad_to: int = 8) -> bytes:
    """A valid safetensors file of zero-filled tensors {name: (dtype, shape)}."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * _ST_WIDTH[dtype]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % pad_to)
    return struct.pack("<Q", len(text)) + text + b"\0" * offset


def gguf_bytes(arch: str, kv: dict[str, object], tensors: dict[str, np.ndarray]) -> bytes:
    """One GGUF file (see split_gguf_bytes)."""
    (content,) = split_gguf_bytes("model.gguf", arch, kv, tensors).values()
    return content


def split_gguf_bytes(name: str, arch: str, kv: dict[str, object], tensors: dict[str, np.ndarray],
                     max_tensors: int = 0) -> dict[str, bytes]:
    """GGUF file(s) written by gguf.GGUFWriter; split into parts of `max_tensors` when > 0.

    kv values: int -> UINT32 (UINT64 from 2**32), float -> FLOAT32, bool -> BOOL,
    str -> STRING, list -> ARRAY.
    Returns {file name: bytes}; split parts are named <stem>-0000i-of-0000n.gguf.
    """
    import gguf

    with tempfile.TemporaryDirectory() as tmp:
        writer = gguf.GGUFWriter(Path(tmp) / name, arch, split_max_tensors=max_tensors)
        for key, value in kv.items():
            _add(writer, key, value)
        for tensor_name, array in tensors.items():
            writer.add_tensor(tensor_name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        return {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir())}


def _add(writer, key: str, value: object) -> None:
    if isinstance(value, bool):
        writer.add_bool(key, value)
    elif isinstance(value, int) and value >= 2**32:
        writer.add_uint64(key, value)
    elif isinstance(value, int):
        writer.add_uint32(key, value)
    elif isinstance(value, float):
        writer.add_float32(key, value)
    elif isinstance(value, str):
        writer.add_string(key, value)
    else:
        writer.add_array(key, list(value))
