"""Numbers read from outside kvfit: flags, presets, tool output, logs.

One reader for all of them: ASCII digits only - no sign, no '_' separators, no other
scripts' digits (Python's int() and float() also take '+8', '١٢', '1_000' and, for floats,
'nan', 'inf' and '1e309'); a real number may also have a decimal point, a minus sign and an
exponent; space around a number is not part of it. At most MAX_CHARS characters (no
4,300-digit conversion error), and a range per field. Anything else is one UsageError
paragraph (exit 2). FIELDS gives the range of every numeric plan field, so a flag, a preset
key, `kvfit fit` and `--sweep` refuse the same value with the same words.
"""

from __future__ import annotations

import math
import re

from .errors import UsageError

MAX_CHARS = 40           # longer than any number kvfit takes (2**64 has 20 digits)
_WHOLE = re.compile(r"[0-9]+", re.ASCII)
_TOKENS = re.compile(r"([0-9]+)([kKmM]?)", re.ASCII)
_REAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?", re.ASCII)


def shown(value, limit: int = 64) -> str:
    """The value as a message quotes it: repr, cut to about `limit` characters."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a number of about {int(value.bit_length() * 0.30103):,} digits"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 16]}...' ({len(str(value)):,} characters)"


def parse_whole(text) -> int | None:
    """A whole number >= 0 written in ASCII digits (at most MAX_CHARS), else None."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text if text >= 0 else None
    if not isinstance(text, str):
        return None
    text = text.strip()
    if len(text) > MAX_CHARS or not _WHOLE.fullmatch(text):
        return None
    return int(text)


def parse_tokens(text) -> int | None:
    """A token count >= 0: ASCII digits with an optional k (x 1,024) or m (x 1,048,576) suffix
    (at most MAX_CHARS characters), else None."""
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        return None
    if isinstance(text, int):
        return text if text >= 0 else None
    text = text.strip()
    m = _TOKENS.fullmatch(text) if len(text) <= MAX_CHARS else None
    if m is None:
        return None
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2}[m.group(2).lower()]


def parse_real(text) -> float | None:
    """A finite number written in ASCII (decimal or e-notation, at most MAX_CHARS), else None."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return float(text) if abs(text) < 10**300 else None
    if isinstance(text, float):
        return text if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    text = text.strip()
    if len(text) > MAX_CHARS or not _REAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _bound(x) -> str:
    return f"{int(x):,}" if x == int(x) and abs(x) < 1e15 else f"{x:g}"


def whole(value, what: str, lo: int = 1, hi: int = 1_000_000) -> int:
    """`value` (text or int) as a whole number from lo to hi, or exit 2 naming `what`."""
    n = parse_whole(value)
    if n is None or not lo <= n <= hi:
        raise UsageError(f"{what} must be a whole number from {lo:,} to {hi:,} "
                         f"(got {shown(value)}).")
    return n


def real(value, what: str, lo: float, hi: float, *, lo_open: bool = False,
         hi_open: bool = False) -> float:
    """`value` (text or number) as a finite number in the range, or exit 2 naming `what`."""
    x = parse_real(value)
    ok = x is not None and (lo < x if lo_open else lo <= x) and (x < hi if hi_open else x <= hi)
    if not ok:
        span = f"{'(' if lo_open else '['}{_bound(lo)}, {_bound(hi)}{')' if hi_open else ']'}"
        raise UsageError(f"{what} must be a number in {span} (got {shown(value)}).")
    return x


def in_field(name: str, value, what: str | None = None):
    """A plan field's value checked against its FIELDS range (text or number); `what` names
    it in the message (default: its plan flag)."""
    flag, kind, lo, hi, *opens = FIELDS[name]
    if kind is int:
        return whole(value, what or flag, lo, hi)
    return real(value, what or flag, lo, hi, lo_open=bool(opens and opens[0]),
                hi_open=len(opens) > 1 and bool(opens[1]))


def check_fields(values: dict) -> None:
    """Every FIELDS entry `values` holds (not None), in range; exit 2 on the first that is not."""
    for name in FIELDS:
        value = values.get(name)
        if value is not None and not (name == "tp" and value == "auto"):
            in_field(name, value)


def flag(name: str, what: str | None = None):
    """An argparse `type` for plan field `name`: the FIELDS range, refused as UsageError."""
    def convert(text: str):
        return in_field(name, text, what)
    convert.__name__ = FIELDS[name][1].__name__
    return convert


def any_whole(flag_name: str, hi: int = 2**62):
    """An argparse `type` for a whole number 0..hi (engine flags; their own checks follow)."""
    def convert(text: str) -> int:
        return whole(text, flag_name, 0, hi)
    convert.__name__ = "int"
    return convert


def any_real(flag_name: str, hi: float = 1e15):
    """An argparse `type` for a finite number 0..hi (engine flags; their own checks follow)."""
    def convert(text: str) -> float:
        return real(text, flag_name, 0.0, hi)
    convert.__name__ = "float"
    return convert


MAX_NODES = 4096
# plan field -> (flag, type, lowest, highest[, lowest excluded[, highest excluded]])
FIELDS = {
    "gpus": ("--gpus", int, 1, 1_000_000),
    "nodes": ("--nodes", int, 1, MAX_NODES),
    "tp": ("--tp", int, 1, 1_000_000),
    "pp": ("--pp", int, 1, 4096),
    "max_nodes": ("--max-nodes", int, 1, MAX_NODES),
    "concurrent_users": ("--concurrent-users", int, 1, 1_000_000),
    "active_sequences_per_user": ("--active-sequences-per-user", int, 1, 1_000_000),
    "engine_tp": ("--engine-tp", int, 1, 1_000_000),
    "utilization": ("--utilization", float, 0.0, 1.0, True),
    "tune_max_utilization": ("--tune-max-utilization", float, 0.0, 1.0, True),
    "runtime_reserve_gib": ("--runtime-reserve-gib", float, 0.0, 100_000.0, False, True),
    "device_memory_gib": ("--device-memory-gib", float, 0.0, 100_000.0, True),
    "weight_gib": ("--weight-gib", float, 0.0, 1e6, True, True),
    "timeout": ("--timeout", float, 0.0, 86_400.0, True),
    "engine_timeout": ("--engine-timeout", float, 0.0, 604_800.0, True),
}
