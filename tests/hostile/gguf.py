"""Raw GGUF v3 bytes with declared counts the caller chooses (not written by gguf.GGUFWriter,
which would refuse to lie)."""

from __future__ import annotations

import struct

U8, U32, STRING, ARRAY, U64 = 0, 4, 8, 9, 10


def string(text: str | bytes, declared: int | None = None) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw) if declared is None else declared) + raw


def kv(key: str, vtype: int, payload: bytes) -> bytes:
    return string(key) + struct.pack("<I", vtype) + payload


def kv_u32(key: str, value: int) -> bytes:
    return kv(key, U32, struct.pack("<I", value))


def kv_u64(key: str, value: int) -> bytes:
    return kv(key, U64, struct.pack("<Q", value))


def kv_str(key: str, value: str) -> bytes:
    return kv(key, STRING, string(value))


def kv_array(key: str, item_type: int, count: int, items: bytes = b"") -> bytes:
    return kv(key, ARRAY, struct.pack("<IQ", item_type, count) + items)


def tensor_info(name: str, dims: list[int], ggml_type: int = 0, offset: int = 0) -> bytes:
    return (string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
            + struct.pack("<IQ", ggml_type, offset))


def gguf(kvs: list[bytes], tensors: list[bytes] = (), *, n_kv: int | None = None,
         n_tensors: int | None = None, tail: bytes = b"") -> bytes:
    """Header with the given key/values and tensor infos; counts default to the true ones."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv)
    return head + b"".join(kvs) + b"".join(tensors) + tail
