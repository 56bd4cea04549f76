"""Read a GGUF header (key/value metadata + tensor infos) with the `gguf` package.

Local files are parsed in place. A remote file is read as a growing prefix: the first
FIRST_READ_BYTES go to a temporary file that gguf parses; if the header runs past the
prefix, the prefix doubles, up to MAX_PREFIX_BYTES. Tensor data is never mapped: only
names, GGML types and byte sizes are kept. Truncated or corrupt files raise ConfigError.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..errors import ConfigError
from .gguf_bounds import Incomplete, scan

FIRST_READ_BYTES = 8 * 2**20
MAX_PREFIX_BYTES = 64 * 2**20
MAX_KEPT_ARRAY = 4096
_PARSE_ERRORS = (ValueError, IndexError, KeyError, OverflowError, TypeError, UnicodeDecodeError)


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
        bounded_prefix(read_range, os.path.basename(path), size)
    header, _ = _parse(path, os.path.basename(path))
    _check_fits(header, size, os.path.basename(path))
    return header


def read_remote_gguf(read_range: Callable[[int, int], bytes], name: str,
                     size: int | None) -> GgufHeader:
    """Parse a remote GGUF from ranged reads (read_range(start, length) -> bytes)."""
    prefix = bounded_prefix(read_range, name, size)
    want = FIRST_READ_BYTES if size is None else min(FIRST_READ_BYTES, size)
    eof = len(prefix) < want or (size is not None and len(prefix) >= size)
    while True:
        header, data_start = _parse_bytes(prefix, name, strict=eof)
        # Every header byte is genuine only if the header ended strictly inside the prefix.
        if header is not None and (eof or data_start < len(prefix)):
            if size is not None:
                _check_fits(header, size, name)
            return header
        if len(prefix) >= MAX_PREFIX_BYTES:
            raise ConfigError(f"{name}: the GGUF header is larger than {MAX_PREFIX_BYTES:,} bytes "
                              "(kvfit's limit); the file is corrupt or unusual.")
        want = min(len(prefix), MAX_PREFIX_BYTES - len(prefix))
        if size is not None:
            want = min(want, size - len(prefix))
        more = read_range(len(prefix), want)
        prefix += more
        eof = len(more) < want or (size is not None and len(prefix) >= size)


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


def _parse_bytes(prefix: bytes, name: str, *, strict: bool) -> tuple[GgufHeader | None, int]:
    """Parse a prefix via an anonymous in-memory file (Linux memfd: nothing is left in the
    temp dir even if kvfit is killed), else a temporary file; (None, 0) when it is too short
    (unless strict)."""
    with _prefix_file(prefix) as path:
        try:
            return _parse(path, name)
        except ConfigError:
            if strict:
                raise
            return None, 0


@contextmanager
def _prefix_file(data: bytes) -> Iterator[str]:
    """A path holding `data` for as long as the block runs."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create("kvfit-gguf-prefix")
        try:
            with open(fd, "wb", closefd=False) as handle:
                handle.write(data)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    fd, tmp = tempfile.mkstemp(suffix=".gguf", prefix="kvfit-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        yield tmp
    finally:
        os.unlink(tmp)


def _parse(path: str, name: str) -> tuple[GgufHeader, int]:
    """(header, offset where tensor data starts) for a file holding at least the header."""
    try:
        reader = _reader_class()(path)
        fields, lengths = _fields(reader)
    except _PARSE_ERRORS as exc:
        raise ConfigError(f"{name} is not a readable GGUF file: truncated or corrupt "
                          f"({exc.__class__.__name__}: {exc}).") from None
    tensors = {t[0]: (t[1], t[2]) for t in reader.infos}
    end = max((reader.data_offset + off + n for _, _, n, off in reader.infos),
              default=reader.data_offset)
    return GgufHeader(fields, lengths, tensors, end), reader.data_offset


def _fields(reader) -> tuple[dict[str, Any], dict[str, int]]:
    """Metadata values as plain Python, skipping the GGUF.* bookkeeping entries."""
    from gguf import GGUFValueType

    fields: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        if field.types and field.types[0] == GGUFValueType.ARRAY \
                and len(field.data) > MAX_KEPT_ARRAY:
            lengths[key] = len(field.data)
            continue
        fields[key] = field.contents()
    return fields, lengths


def _check_fits(header: GgufHeader, size: int, name: str) -> None:
    """Tensor data must end within the file."""
    if header.data_end > size:
        raise ConfigError(f"{name} is truncated: its tensors need {header.data_end:,} bytes but "
                          f"the file has {size:,}.")


@cache
def _reader_class():
    """A gguf.GGUFReader that records tensor infos instead of mapping tensor data."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFReader

    class HeaderReader(GGUFReader):
        def _build_tensors(self, start_offs: int, fields: list) -> None:
            """Keep (name, GGML type, bytes, offset) per tensor; map no tensor data."""
            self.infos = []
            for field in fields:
                _, name, _, dims, raw_type, offset = field.parts
                qtype = GGMLQuantizationType(int(raw_type[0]))
                block, type_size = GGML_QUANT_SIZES[qtype]
                count = 1
                for dim in dims.tolist():
                    count *= int(dim)
                nbytes = count * type_size // block
                self.infos.append((bytes(name).decode("utf-8"), qtype.name, nbytes,
                                   int(offset[0])))
            if len({info[0] for info in self.infos}) != len(self.infos):
                raise ValueError("duplicate tensor names")
            self.data_offset = start_offs

    return HeaderReader

