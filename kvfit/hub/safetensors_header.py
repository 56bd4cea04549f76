"""Read and strictly validate safetensors headers, from the Hub (Range requests) or disk.

Format: an 8-byte little-endian header length N, N bytes of JSON mapping tensor names to
{dtype, shape, data_offsets: [begin, end]} (offsets relative to the data area that follows
the header), then the data. A header is rejected (ConfigError) when N is absurd (over
MAX_HEADER_BYTES) or runs past the file, the JSON is malformed, or an offset range falls
outside the data area, overlaps another tensor, or disagrees with dtype x shape; also for
duplicate keys, NaN/Infinity, nesting or integers Python cannot convert, unknown dtypes,
more than MAX_DIMS dimensions and sizes past 2^64.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..checkpoint.metadata import FileEntry
from ..errors import ConfigError

MAX_HEADER_BYTES = 100_000_000
FIRST_READ_BYTES = 128 * 1024
DTYPE_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
    "I64": 64, "U64": 64, "F64": 64, "C64": 64, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}
MAX_DIMS = 16
MAX_U64 = 2**64 - 1
ReadRange = Callable[[str, int, int], bytes]


@dataclass(frozen=True, slots=True)
class TensorHeader:
    """One tensor: the file holding it, safetensors dtype, shape, and stored size in bytes."""

    file: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int


def read_safetensors_headers(files: Iterable[FileEntry], read_range: ReadRange
                             ) -> dict[str, TensorHeader]:
    """Headers of every file, merged {tensor name: TensorHeader}; duplicates are an error.

    read_range(path, start, length) returns up to `length` bytes of `path` from `start`;
    see local_reader() for files on disk, HubClient.read_range for the Hub.
    """
    tensors: dict[str, TensorHeader] = {}
    for entry in files:
        for name, info in read_one_header(entry, read_range).items():
            if name in tensors:
                raise ConfigError(f"tensor {name} appears in both {tensors[name].file} and "
                                  f"{info.file}.")
            tensors[name] = info
    return tensors


def read_one_header(entry: FileEntry, read_range: ReadRange) -> dict[str, TensorHeader]:
    """One file's header; one read when it fits in FIRST_READ_BYTES, else two."""
    prefix = read_range(entry.path, 0, FIRST_READ_BYTES)
    length = header_length(prefix, entry)
    body = prefix[8 : 8 + length]
    if len(body) < length:
        body += read_range(entry.path, 8 + len(body), length - len(body))
    if len(body) < length:
        raise ConfigError(f"{entry.path}: the header is truncated ({len(body)} of {length} bytes).")
    return parse_header(body, entry)


def header_length(prefix: bytes, entry: FileEntry) -> int:
    """The declared JSON header length N, checked against the limit and the file size."""
    if len(prefix) < 8:
        raise ConfigError(f"{entry.path} is too short to be a safetensors file "
                          f"({len(prefix)} bytes).")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length < 2 or length > MAX_HEADER_BYTES:
        raise ConfigError(f"{entry.path} declares a {length:,}-byte safetensors header; "
                          f"expected 2 to {MAX_HEADER_BYTES:,} bytes - the file is corrupt or "
                          "not safetensors.")
    if entry.size is not None and 8 + length > entry.size:
        raise ConfigError(f"{entry.path} declares a {length:,}-byte header, past the end of "
                          f"the {entry.size:,}-byte file.")
    return length


def parse_header(body: bytes, entry: FileEntry) -> dict[str, TensorHeader]:
    """Validate the JSON header; returns {tensor name: TensorHeader}."""
    try:
        doc = json.loads(body.decode("utf-8"), object_pairs_hook=_no_duplicates,
                         parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{entry.path}: the safetensors header is not valid JSON ({exc}).") from None
    except RecursionError:
        raise ConfigError(f"{entry.path}: the safetensors header nests too deeply to be a "
                          "safetensors header.") from None
    except ValueError as exc:  # duplicate keys, NaN/Infinity, integers past Python's digit limit
        why = ("an integer has thousands of digits, more than any size" if "digits" in str(exc)
               else str(exc)[:120])
        raise ConfigError(f"{entry.path}: the safetensors header is not acceptable JSON "
                          f"({why}).") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{entry.path}: the safetensors header is not a JSON object.")
    meta = doc.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ConfigError(f"{entry.path}: the safetensors __metadata__ must map names to strings.")
    data_size = None if entry.size is None else entry.size - 8 - len(body)
    tensors = {name: _tensor(entry.path, name, spec, data_size)
               for name, spec in doc.items() if name != "__metadata__"}
    _check_no_overlap(entry.path, tensors, doc)
    return tensors


def _tensor(path: str, name: str, spec: object, data_size: int | None) -> TensorHeader:
    """One header entry, validated."""
    where = f"{path}: tensor {name!r}"
    if not isinstance(spec, dict):
        raise ConfigError(f"{where} is not an object.")
    dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
    if not isinstance(dtype, str) or not _int_list(shape) or not _int_list(offsets) \
            or len(offsets) != 2:
        raise ConfigError(f"{where} needs a string dtype, an integer shape and two integer "
                          "data_offsets.")
    if len(shape) > MAX_DIMS or any(v > MAX_U64 for v in (*shape, *offsets)):
        raise ConfigError(f"{where} has {len(shape)} dimensions or a size past 2^64; not a "
                          "genuine safetensors header.")
    begin, end = offsets
    if begin < 0 or end < begin or (data_size is not None and end > data_size):
        limit = "" if data_size is None else f" (data area is {data_size:,} bytes)"
        raise ConfigError(f"{where} has data_offsets [{begin}, {end}] out of range{limit}.")
    bits = DTYPE_BITS.get(dtype)
    if bits is None:
        raise ConfigError(f"{where} has the unknown dtype {dtype[:40]!r}; safetensors dtypes are "
                          f"{', '.join(sorted(DTYPE_BITS))}.")
    count = math.prod(shape)
    if (count * bits) % 8 == 0 and count * bits // 8 != end - begin:
        raise ConfigError(f"{where}: {dtype} x {shape} needs {count * bits // 8:,} bytes but "
                          f"its offsets span {end - begin:,}.")
    return TensorHeader(path, dtype, tuple(shape), end - begin)


def _check_no_overlap(path: str, tensors: dict[str, TensorHeader], doc: dict) -> None:
    """Tensor byte ranges must not overlap."""
    spans = sorted((doc[n]["data_offsets"][0], doc[n]["data_offsets"][1], n)
                   for n in tensors if tensors[n].nbytes)
    for (_, end, first), (begin, _, second) in zip(spans, spans[1:], strict=False):
        if begin < end:
            raise ConfigError(f"{path}: tensors {first!r} and {second!r} overlap.")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:80]!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _int_list(value: object) -> bool:
    """A list of non-negative ints (bools excluded)."""
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)


def local_reader(root: str | Path) -> ReadRange:
    """A read_range over files below a local directory."""
    base = Path(root)

    def read(path: str, start: int, length: int) -> bytes:
        with open(base / path, "rb") as handle:
            handle.seek(start)
            return handle.read(length)

    return read
