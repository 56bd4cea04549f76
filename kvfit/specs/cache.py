"""A cache of validated spec data, so a plan skips YAML parsing and schema validation.

Entries are keyed by the sha256 of the kvfit version, the spec's schema and the spec file's
bytes: a changed file, schema or release misses, so an edited spec is always revalidated.
Only specs that passed every check are stored, and each entry carries the sha256 of its
data's canonical JSON: an entry of the wrong shape, or whose data was edited, is discarded
(and revalidated from the YAML), never trusted.

Two stores are read, in order:
- the shipped data (kvfit/specs/shipped.json, built by `python -m kvfit.specs.ship` from
  the bundled specs), so even the first run on a new machine skips parsing and validation;
- the user cache in $KVFIT_CACHE_DIR, else $XDG_CACHE_HOME/kvfit, else ~/.cache/kvfit, for
  specs that changed since the shipped data was built. If it cannot be written, kvfit works
  without it. KVFIT_CACHE_DIR=off disables it, and nothing is created.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from .. import __version__
from ..paths import schema_path

FORMAT = 2
SHIPPED = Path(__file__).resolve().parent / "shipped.json"


def cache_dir() -> Path | None:
    """The spec cache folder, or None when disabled (KVFIT_CACHE_DIR=off)."""
    env = os.environ.get("KVFIT_CACHE_DIR")
    if env is not None and env.strip().lower() == "off":
        return None
    if env:
        return Path(env).expanduser() / "specs"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kvfit" / "specs"


@cache
def _schema_bytes(schema: str) -> bytes:
    return schema_path(schema).read_bytes()


def key(raw: bytes, schema: str, allow_null: bool = False) -> str:
    """Cache key for one spec file's bytes under one schema (and whether nulls may pass)."""
    h = hashlib.sha256(__version__.encode())
    h.update(_schema_bytes(schema))
    h.update(raw)
    if allow_null:
        h.update(b"\0nulls allowed")
    return h.hexdigest()


def digest(data) -> str:
    """sha256 of the compact JSON of validated data, in its key order (order is meaning:
    fields are reported in spec order), which an entry must match."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry(k: str, data) -> dict:
    """The stored form of validated data under key `k`."""
    return {"format": FORMAT, "key": k, "sha256": digest(data), "data": data}


def _trusted(k: str, doc) -> tuple[bool, object]:
    """(ok, data) for a stored entry: the right shape, key and checksum."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != k:
        return False, None
    data, want = doc.get("data"), doc.get("sha256")
    if data is None or not isinstance(want, str):
        return False, None
    try:
        return digest(data) == want, data
    except (TypeError, ValueError):
        return False, None


@cache
def shipped() -> tuple[dict, bool]:
    """(key -> entry, whether the file's own sha256 matches it), ({}, False) when the shipped
    data is absent or unreadable. `python -m kvfit.specs.ship`
    writes the sha256 of everything after the first line into that line, so one hash of the
    file stands for every entry's checksum; a file edited since (or without the line) has
    each entry checked on its own."""
    try:
        raw = SHIPPED.read_bytes()
        doc = json.loads(raw)
    except (OSError, ValueError):
        return {}, False
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return {}, False
    entries = doc.get("entries")
    if not isinstance(entries, dict):
        return {}, False
    body = raw.partition(b"\n")[2]
    return entries, doc.get("sha256") == hashlib.sha256(body).hexdigest()


def _from_shipped(k: str):
    entries, whole = shipped()
    found = entries.get(k)
    if found is None:
        return None
    if whole and isinstance(found, dict) and found.get("format") == FORMAT and \
            found.get("key") == k and found.get("data") is not None:
        return found["data"]
    ok, data = _trusted(k, found)
    return data if ok else None


def get(k: str):
    """The validated data for key `k`, or None (a bad entry counts as absent)."""
    data = _from_shipped(k)
    if data is not None:
        return data
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{k}.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        doc = None
    ok, data = _trusted(k, doc)
    if ok:
        return data
    try:
        path.unlink()                  # discard it; a fresh validation writes it again
    except OSError:
        pass
    return None


def put(k: str, data) -> None:
    """Store validated data atomically; failures are ignored (the cache is optional) and
    leave no temporary file behind."""
    folder = cache_dir()
    if folder is None or _from_shipped(k) is not None:
        return
    try:
        text = json.dumps(entry(k, data), allow_nan=False)
    except (TypeError, ValueError):
        return
    from ..atomic import write_text
    write_text(folder / f"{k}.json", text)
