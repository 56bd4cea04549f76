"""Strict JSON reading for checkpoint metadata files (bounded size, no duplicate keys, no NaN)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError

MAX_JSON_BYTES = 64 * 1024 * 1024
# One leading byte-order mark is dropped, as the utf-8-sig codec does, without loading that
# codec (a module of four classes, for a prefix check).
BOM = b"\xef\xbb\xbf"


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def parse_json(raw: bytes, name: str) -> object:
    """Parse JSON bytes strictly; any problem is a ConfigError naming the file.

    Infinity/NaN are accepted: real configs written by Python's json carry them (Nemotron-H's
    time_step_limit is [0.0, Infinity]); a field that must be a count still rejects them.
    """
    if len(raw) > MAX_JSON_BYTES:
        raise ConfigError(f"{name} is larger than 64 MiB; refusing to parse it.")
    try:
        text = raw.removeprefix(BOM).decode("utf-8")
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError:
        raise ConfigError(f"{name} is not UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} "
                          f"column {exc.colno}.") from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{name} is not acceptable JSON: {exc}.") from None


def read_json(path: Path, name: str | None = None) -> object:
    """Read and strictly parse a JSON file."""
    label = name or path.name
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise ConfigError(f"{label} is larger than 64 MiB; refusing to parse it.")
        return parse_json(path.read_bytes(), label)
    except OSError as exc:
        raise ConfigError(f"cannot read {label}: {exc.strerror}.") from None
