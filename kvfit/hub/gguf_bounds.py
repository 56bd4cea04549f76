"""Bounds before work: walk a GGUF header's structure before gguf parses it.

Every count and length in the header (key/value count, string lengths, array lengths and
item types, tensor count, dimensions) is checked against the bytes that remain and a sane
maximum *before* anything is allocated or iterated, so a file that declares 2^40 array items
or a million tensor infos in a few bytes is refused at once. The walk only reads integers;
the values themselves are decoded afterwards by the gguf package.
"""

from __future__ import annotations

import struct

from ..errors import ConfigError

MAX_TENSORS = 100_000          # real checkpoints: a few thousand per file
MAX_KEYS = 65_536              # real checkpoints: tens
MAX_STRING = 1 << 20           # one key, value or tensor name
MAX_ARRAY = 1 << 24            # tokenizer vocabularies and merges stay far below
MAX_DEPTH = 3                  # arrays of arrays
MAX_DIMS = 4                   # GGML_MAX_DIMS
_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


class Incomplete(Exception):
    """The header continues past the bytes given (but may fit within the limit)."""


class _Walk:
    def __init__(self, buf: bytes, name: str, limit: int, capped: bool):
        self.buf, self.name, self.limit, self.pos = buf, name, limit, 24
        self.capped = capped

    def corrupt(self, why: str) -> ConfigError:
        return ConfigError(f"{self.name} is not a readable GGUF file: truncated or corrupt "
                           f"({why}).")

    def need(self, n: int, what: str, *, total: bool = False) -> None:
        """Require `n` more bytes: ConfigError past the limit, Incomplete past the buffer
        (`total`: a lower bound for the rest of the header, checked against the limit only)."""
        if n > self.limit - self.pos and self.capped:
            raise ConfigError(f"{self.name}: the GGUF header is larger than {self.limit:,} bytes "
                              f"(kvfit's limit; {what} at byte {self.pos:,} needs {n:,} more); "
                              "the file is corrupt or unusual.")
        if n > self.limit - self.pos:
            raise self.corrupt(f"{what} at byte {self.pos:,} needs {n:,} bytes but only "
                               f"{max(0, self.limit - self.pos):,} remain in the file")
        if not total and n > len(self.buf) - self.pos:
            raise Incomplete

    def u32(self) -> int:
        self.need(4, "an integer")
        (value,) = struct.unpack_from("<I", self.buf, self.pos)
        self.pos += 4
        return value

    def u64(self) -> int:
        self.need(8, "an integer")
        (value,) = struct.unpack_from("<Q", self.buf, self.pos)
        self.pos += 8
        return value

    def string(self, what: str) -> None:
        length = self.u64()
        if length > MAX_STRING:
            raise self.corrupt(f"{what} at byte {self.pos - 8:,} declares a {length:,}-byte "
                               f"string; kvfit's limit is {MAX_STRING:,}")
        self.need(length, what)
        self.pos += length

    def value(self, vtype: int, key_no: int, depth: int = 0) -> None:
        if vtype in _SCALAR:
            self.need(_SCALAR[vtype], "a value")
            self.pos += _SCALAR[vtype]
        elif vtype == _STRING:
            self.string(f"the string value of key #{key_no}")
        elif vtype == _ARRAY and depth < MAX_DEPTH:
            self.array(key_no, depth)
        else:
            raise self.corrupt(f"key #{key_no} has an unknown or too deeply nested value type "
                               f"{vtype}")

    def array(self, key_no: int, depth: int) -> None:
        itype, count = self.u32(), self.u64()
        if count > MAX_ARRAY:
            raise self.corrupt(f"key #{key_no} declares an array of {count:,} items; kvfit's "
                               f"limit is {MAX_ARRAY:,}")
        smallest = _SCALAR.get(itype, 8 if itype == _STRING else 12)
        self.need(count * smallest, f"an array of {count:,} items (key #{key_no})",
                  total=itype not in _SCALAR)
        if itype in _SCALAR:
            self.pos += count * smallest
            return
        for _ in range(count):
            self.value(itype, key_no, depth + 1)

    def tensor(self, index: int) -> None:
        self.string(f"the name of tensor #{index}")
        dims = self.u32()
        if not 1 <= dims <= MAX_DIMS:
            raise self.corrupt(f"tensor #{index} declares {dims} dimensions; GGUF allows 1 to "
                               f"{MAX_DIMS}")
        self.need(8 * dims + 12, f"tensor info #{index}")
        self.pos += 8 * dims + 12


def scan(buf: bytes, name: str, limit: int, capped: bool = False) -> int:
    """Walk the header in `buf` (the file's first bytes; the file, or with `capped` kvfit's
    header limit, allows at most `limit` bytes). Returns the offset where the tensor infos
    end; raises Incomplete when more bytes are needed, ConfigError when a count or length
    cannot be genuine."""
    if len(buf) < 24 or buf[:4] != b"GGUF":
        if len(buf) < 24 and limit > len(buf):
            raise Incomplete
        raise ConfigError(f"{name} is not a GGUF file (missing 'GGUF' magic or truncated).")
    version, tensors, keys = struct.unpack_from("<IQQ", buf, 4)
    if version not in (2, 3) or tensors > MAX_TENSORS or keys > MAX_KEYS:
        raise ConfigError(f"{name}: implausible GGUF header (version {version}, {tensors:,} "
                          f"tensors, {keys:,} keys); the file is corrupt.")
    walk = _Walk(buf, name, limit, capped)
    walk.need(keys * 13 + tensors * 24, f"{keys:,} keys and {tensors:,} tensor infos", total=True)
    for key_no in range(keys):
        walk.string(f"key #{key_no}")
        walk.value(walk.u32(), key_no)
    for index in range(tensors):
        walk.tensor(index)
    return walk.pos
