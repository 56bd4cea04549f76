"""Read a GGUF header (key/value metadata + tensor infos) from the file's first bytes.

The header is read as a growing prefix: FIRST_READ_BYTES, doubled until it holds the whole
header (up to MAX_PREFIX_BYTES), every count and length checked by gguf_bounds.scan before
anything is decoded. Tensor data is never read: only names, GGML types and byte sizes are
kept. Truncated or corrupt files raise ConfigError.
"""

# gguf.GGUFReader memory-maps a whole file and maps every tensor's data, so it cannot read a
# header from the first bytes of a remote file: this small reader decodes the header alone,
# with gguf's own constants (value types, GGML types and their sizes, default alignment).

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .gguf_bounds import Incomplete, scan

FIRST_READ_BYTES = 8 * 2**20
MAX_PREFIX_BYTES = 64 * 2**20
MAX_KEPT_ARRAY = 4096
_PARSE_ERRORS = (ValueError, IndexError, KeyError, OverflowError, TypeError, struct.error)


@dataclass(frozen=True, slots=True)
class GgufHeader:
    """One GGUF file's header.

    fields: metadata values (scalars, strings, arrays up to MAX_KEPT_ARRAY items).
    array_lengths: item counts of longer arrays (tokenizer vocabularies), values dropped.
    tensors: {name: (GGML type name, stored bytes)}.
    data_end: the byte offset where the last tensor's data ends (<= file size).
    """

    fields: dict[str, Any]
    array_lengths: dict[str, int]
    tensors: dict[str, tuple[str, int]]
    data_end: int


def read_local_gguf(path: str, size: int | None = None) -> GgufHeader:
    """Parse a GGUF file on disk; ConfigError if it is truncated or corrupt."""
    size = os.path.getsize(path) if size is None else size
    with open(path, "rb") as handle:
        def read_range(start: int, length: int) -> bytes:
            handle.seek(start)
            return handle.read(length)
        return read_remote_gguf(read_range, os.path.basename(path), size)


def read_remote_gguf(read_range: Callable[[int, int], bytes], name: str,
                     size: int | None) -> GgufHeader:
    """Parse a GGUF from ranged reads (read_range(start, length) -> bytes); `size`, when
    known, is the file's size."""
    header = _parse(bounded_prefix(read_range, name, size), name)
    if size is not None:
        _check_fits(header, size, name)
    return header


def bounded_prefix(read_range: Callable[[int, int], bytes], name: str,
                   size: int | None) -> bytes:
    """The file's first bytes, grown until they hold the whole header, after every count and
    length in it was checked (gguf_bounds.scan) against the bytes left and a sane maximum."""
    limit = MAX_PREFIX_BYTES if size is None else min(size, MAX_PREFIX_BYTES)
    capped = size is None or size > MAX_PREFIX_BYTES
    want = min(FIRST_READ_BYTES, limit)
    prefix = read_range(0, want)
    if len(prefix) < want:                            # the file ends here
        limit, capped = len(prefix), False
    while True:
        try:
            scan(prefix, name, limit, capped)
            return prefix
        except Incomplete:                            # len(prefix) < limit
            want = min(len(prefix), limit - len(prefix))
            more = read_range(len(prefix), want)
            prefix += more
            if len(more) < want:
                limit, capped = len(prefix), False


def _parse(prefix: bytes, name: str) -> GgufHeader:
    """The header in `prefix` (which holds all of it: bounded_prefix)."""
    try:
        return _Reader(prefix).header()
    except _PARSE_ERRORS as exc:
        raise ConfigError(f"{name} is not a readable GGUF file: truncated or corrupt "
                          f"({exc.__class__.__name__}: {exc}).") from None


class _Reader:
    """A little-endian GGUF v2/v3 header, read front to back."""

    def __init__(self, buf: bytes):
        from gguf import GGUFValueType as T

        self.buf, self.pos = buf, 0
        self.scalars = {T.UINT8: "B", T.INT8: "b", T.UINT16: "H", T.INT16: "h", T.UINT32: "I",
                        T.INT32: "i", T.FLOAT32: "f", T.BOOL: "?", T.UINT64: "Q", T.INT64: "q",
                        T.FLOAT64: "d"}
        self.string_type, self.array_type, self.u32_type = T.STRING, T.ARRAY, T.UINT32

    def unpack(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def raw_string(self) -> bytes:
        (length,) = self.unpack("Q")
        if self.pos + length > len(self.buf):
            raise ValueError(f"a {length:,}-byte string at byte {self.pos - 8:,} runs past the "
                             "header")
        self.pos += length
        return self.buf[self.pos - length:self.pos]

    def leaves(self, vtype: int, out: list) -> None:
        """Append the value's items to `out`: an array's items flattened (as gguf's
        ReaderField.contents() gives them), strings as undecoded bytes."""
        if vtype == self.string_type:
            out.append(self.raw_string())
        elif vtype == self.array_type:
            itype, count = self.unpack("IQ")
            if itype in self.scalars:
                out.extend(self.unpack(f"{count}{self.scalars[itype]}"))
            else:
                for _ in range(count):
                    self.leaves(itype, out)
        else:
            out.extend(self.unpack(self.scalars[vtype]))

    def header(self) -> GgufHeader:
        from gguf import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT, GGMLQuantizationType

        _magic, _version, n_tensors, n_keys = self.unpack("4sIQQ")
        fields: dict[str, Any] = {}
        lengths: dict[str, int] = {}
        seen: set[str] = set()
        alignment = GGUF_DEFAULT_ALIGNMENT
        for _ in range(n_keys):
            key = self.raw_string().decode("utf-8")
            if key in seen:
                raise KeyError(f"duplicate key {key}")
            seen.add(key)
            (vtype,) = self.unpack("I")
            items: list = []
            self.leaves(vtype, items)
            if key == "general.alignment":
                if vtype != self.u32_type or not items[0] or items[0] & (items[0] - 1):
                    raise ValueError("general.alignment must be a UINT32 power of two")
                alignment = items[0]
            if key.startswith("GGUF."):                # the name gguf's own entries take
                continue
            if vtype != self.array_type:
                fields[key] = items[0].decode("utf-8") if vtype == self.string_type else items[0]
            elif len(items) > MAX_KEPT_ARRAY:
                lengths[key] = len(items)
            else:
                fields[key] = [v.decode("utf-8") if isinstance(v, bytes) else v for v in items]
        tensors: dict[str, tuple[str, int]] = {}
        offsets = []
        for _ in range(n_tensors):
            name = self.raw_string().decode("utf-8")
            (n_dims,) = self.unpack("I")
            dims = self.unpack(f"{n_dims}Q")
            raw_type, offset = self.unpack("IQ")
            qtype = GGMLQuantizationType(raw_type)
            block, type_size = GGML_QUANT_SIZES[qtype]
            count = 1
            for dim in dims:
                count *= dim
            if name in tensors:
                raise ValueError("duplicate tensor names")
            tensors[name] = (qtype.name, count * type_size // block)
            offsets.append(offset)
        data_offset = -(-self.pos // alignment) * alignment
        end = max((data_offset + off + n for off, (_, n) in zip(offsets, tensors.values(),
                                                                 strict=True)),
                  default=data_offset)
        return GgufHeader(fields, lengths, tensors, end)


def _check_fits(header: GgufHeader, size: int, name: str) -> None:
    """Tensor data must end within the file."""
    if header.data_end > size:
        raise ConfigError(f"{name} is truncated: its tensors need {header.data_end:,} bytes but "
                          f"the file has {size:,}.")
