"""A cache of validated spec data, so a plan skips YAML parsing and schema validation.

Entries are keyed by the sha256 of the kvfit version, the spec's schema and the spec file's
bytes: a changed file, schema or release misses, so an edited spec is always revalidated.
Only specs that passed every check are stored, and each entry carries the sha256 of its
data's canonical JSON: an entry of the wrong shape, or whose data was edited, is discarded
(and revalidated from the YAML), never trusted.

Two stores are read, in order:
- the shipped data (kvfit/specs/shipped.json, built by `python -m kvfit.cli.ship` from
  the bundled specs), so even the first run on a new machine skips parsing and validation.
  While the file is as ship.render wrote it (its own checksum), each entry is parsed when it
  is first asked for, and the architectures' matchers come from its small index, so a plan
  parses the one architecture it plans and not the corpus;
- the user cache in $KVFIT_CACHE_DIR, else $XDG_CACHE_HOME/kvfit, else ~/.cache/kvfit, for
  specs that changed since the shipped data was built. If it cannot be written, kvfit works
  without it. KVFIT_CACHE_DIR=off disables it, and nothing is created.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from .. import __version__
from ..paths import expand_user, schema_path

FORMAT = 2
SHIPPED = Path(__file__).resolve().parent / "shipped.json"


def cache_dir() -> Path | None:
    """The spec cache folder, or None when disabled (KVFIT_CACHE_DIR=off)."""
    env = os.environ.get("KVFIT_CACHE_DIR")
    if env is not None and env.strip().lower() == "off":
        return None
    if env:
        return expand_user(env) / "specs"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kvfit" / "specs"


@cache
def _keyed_schema(schema: str):
    """The key's hash after the kvfit version and the schema's bytes (copied for each file)."""
    h = hashlib.sha256(__version__.encode())
    h.update(schema_path(schema).read_bytes())
    return h


def key(raw: bytes, schema: str, allow_null: bool = False) -> str:
    """Cache key for one spec file's bytes under one schema (and whether nulls may pass)."""
    h = _keyed_schema(schema).copy()
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


class _Lines(Mapping):
    """key -> entry of a rendered shipped file, each entry parsed from its span of the file's
    bytes on first use (a ValueError if that span is not JSON): the file is read once and
    only the entries a run asks for are copied out of it."""

    def __init__(self, raw: bytes, spans: dict[str, tuple[int, int]]):
        self._raw, self._spans, self._parsed = raw, spans, {}

    def __getitem__(self, k: str):
        if k not in self._parsed:
            start, end = self._spans[k]
            self._parsed[k] = json.loads(self._raw[start:end])
        return self._parsed[k]

    def __iter__(self):
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def __contains__(self, k) -> bool:
        return k in self._spans


MATCHERS_LINE = b'}, "matchers": {'


def _rendered(raw: bytes, start: int) -> tuple[_Lines, dict] | None:
    """(entries, matchers) of the body raw[start:] laid out as ship.render writes it: one
    `"key": value` line per entry (its trailing comma not part of the value), then optionally
    the matchers' section (parsed at once: a small object, one line per spec), then `}}`;
    None if laid out otherwise. The lines are found by offset, not split into copies."""
    end = len(raw)
    if not raw.endswith(b"}}\n") or end - start < 3 or (end - start > 3 and raw[end - 4] != 10):
        return None
    stop = end - 4                           # the newline before the closing "}}"
    spans: dict[str, tuple[int, int]] = {}
    index_at = None
    pos = start
    while pos <= stop and end - start > 3:
        nl = raw.find(b"\n", pos, stop)
        line_end = stop if nl < 0 else nl
        if line_end - pos == len(MATCHERS_LINE) and raw.startswith(MATCHERS_LINE, pos):
            index_at = line_end + 1
            break
        sep = raw.find(b'": ', pos, line_end)
        if sep < 0 or raw[pos:pos + 1] != b'"':
            return None
        value_end = line_end - 1 if raw[line_end - 1:line_end] == b"," else line_end
        spans[raw[pos + 1:sep].decode("ascii")] = (sep + 3, value_end)
        if nl < 0:
            break
        pos = nl + 1
    index = {} if index_at is None else json.loads(b"{" + raw[index_at:max(stop, index_at)] + b"}")
    return _Lines(raw, spans), index


@cache
def shipped() -> tuple[Mapping, bool, dict]:
    """(key -> entry, whether the file's own sha256 matches it, key -> architecture matcher),
    ({}, False, {}) when the shipped data is absent or unreadable. `python -m kvfit.cli.ship`
    writes the sha256 of everything after the first line into that line, so one hash of the
    file stands for every entry's checksum; a file edited since (or without the line) has
    each entry checked on its own, and its matchers are not used."""
    try:
        raw = SHIPPED.read_bytes()
    except OSError:
        return {}, False, {}
    nl = raw.find(b"\n")
    start = len(raw) if nl < 0 else nl + 1
    head = raw if nl < 0 else raw[:nl]
    body = memoryview(raw)[start:]           # hashed in place: the file is not copied
    try:
        top = json.loads(head + b"}}")
    except ValueError:
        top = None
    if isinstance(top, dict) and top.get("format") == FORMAT and isinstance(top.get("sha256"), str) \
            and top["sha256"] == hashlib.sha256(body).hexdigest():
        try:
            found = _rendered(raw, start)
        except (ValueError, UnicodeDecodeError):
            found = None
        if found is not None:
            return found[0], True, found[1]
    try:
        doc = json.loads(raw)
    except ValueError:
        return {}, False, {}
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return {}, False, {}
    entries = doc.get("entries")
    if not isinstance(entries, dict):
        return {}, False, {}
    whole = doc.get("sha256") == hashlib.sha256(body).hexdigest()
    matchers = doc.get("matchers") if whole and isinstance(doc.get("matchers"), dict) else {}
    return entries, whole, matchers


def matcher(k: str) -> list | None:
    """[id, model_types, architectures] of the shipped architecture spec whose cache key is `k`
    (validated as its entry was), or None: not shipped, or the file is not as ship wrote it."""
    entries, whole, matchers = shipped()
    found = matchers.get(k) if whole and k in entries else None
    return found if isinstance(found, list) and len(found) == 3 else None


def _from_shipped(k: str):
    entries, whole, _ = shipped()
    try:
        found = entries.get(k)
    except ValueError:                 # a line that is not JSON: the entry is absent
        return None
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
