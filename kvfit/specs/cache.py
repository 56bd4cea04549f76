"""A cache of validated spec data, so a plan skips YAML parsing and schema validation.

Entries are plain JSON keyed by the sha256 of the spec file, its schema and the kvfit
version: a changed file or a new release misses. Only specs that passed every check are
stored, so a hit is exactly as trustworthy as a fresh validation. The cache lives in
$KVFIT_CACHE_DIR, else $XDG_CACHE_HOME/kvfit, else ~/.cache/kvfit; if it cannot be
written, kvfit works without it. Set KVFIT_CACHE_DIR=off to disable it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .. import __version__
from ..paths import schema_path


def cache_dir() -> Path | None:
    """The spec cache folder, or None when disabled."""
    env = os.environ.get("KVFIT_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return Path(env) / "specs"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kvfit" / "specs"


def key(raw: bytes, schema: str) -> str:
    """Cache key for one spec file's bytes under one schema."""
    h = hashlib.sha256(__version__.encode())
    h.update(schema_path(schema).read_bytes())
    h.update(raw)
    return h.hexdigest()


def get(k: str):
    """The cached data for key `k`, or None."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        return json.loads((folder / f"{k}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def put(k: str, data) -> None:
    """Store validated data atomically; failures are ignored (the cache is optional)."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, folder / f"{k}.json")
    except OSError:
        return
