"""A small on-disk cache of resolved metadata, keyed by repo id + full commit sha.

A commit never changes, so entries never expire: a second plan pinned to a full sha makes
no Hub request, and a plan on a branch makes one (to learn the branch's current sha). The
last sha seen for each branch is kept too, only so offline runs can say what they reuse.

Layout: <root>/<org>--<name>/<sha>/<key>.json and <root>/<org>--<name>/refs/<quoted rev>.
Root: KVFIT_CACHE_DIR, else <HF_HOME>/kvfit. Unwritable entries are skipped; corrupt or
wrong-shaped entries are deleted and refetched, never fatal.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..paths import expand_user

FORMAT = 1
_SHA = re.compile(r"[0-9a-f]{40}")


def cache_root() -> Path:
    """KVFIT_CACHE_DIR, else <HF_HOME>/kvfit (HF_HOME as set now, else huggingface_hub's).

    KVFIT_CACHE_DIR=off disables the cache: the root is then under os.devnull, where every
    read misses and every write fails quietly, so nothing is created anywhere.
    """
    explicit = os.environ.get("KVFIT_CACHE_DIR")
    if explicit and explicit.strip().lower() == "off":
        return Path(os.devnull) / "kvfit-cache-off"
    if explicit:
        return expand_user(explicit)
    home = os.environ.get("HF_HOME")
    if not home:
        from .transport import hf_constants

        home = hf_constants().HF_HOME
    return expand_user(home) / "kvfit"


class MetadataCache:
    """JSON documents per (repo, sha, key), plus branch -> sha records."""

    def __init__(self, root: Path | None = None):
        self.root = root or cache_root()

    def _repo_dir(self, repo_id: str) -> Path:
        """<root>/<org>--<name>."""
        return self.root / repo_id.replace("/", "--")

    def _entry(self, repo_id: str, sha: str, key: str) -> Path:
        return self._repo_dir(repo_id) / sha / f"{_safe(key)}.json"

    def load(self, repo_id: str, sha: str, key: str,
             valid: Callable[[Any], bool] | None = None) -> dict[str, Any] | None:
        """The cached document, or None when absent, unreadable, of another format, not a
        JSON object, or rejected by `valid`; a bad entry is deleted (it would be refetched)."""
        path = self._entry(repo_id, sha, key)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError):
            doc = None
        data = doc.get("data") if isinstance(doc, dict) and doc.get("format") == FORMAT else None
        if not isinstance(data, dict) or (valid is not None and not _accepts(valid, data)):
            self.discard(repo_id, sha, key)
            return None
        return data

    def discard(self, repo_id: str, sha: str, key: str) -> None:
        """Remove one entry (a bad one); failures are ignored."""
        try:
            self._entry(repo_id, sha, key).unlink(missing_ok=True)
        except OSError:
            pass

    def save(self, repo_id: str, sha: str, key: str, data: dict[str, Any]) -> None:
        """Store a document atomically; failures to write are ignored (the cache is optional)."""
        _write_atomic(self._entry(repo_id, sha, key),
                      json.dumps({"format": FORMAT, "data": data}, sort_keys=True))

    def remember_ref(self, repo_id: str, revision: str | None, sha: str) -> None:
        """Record that `revision` (None = default branch) pointed at `sha` when last asked
        (not rewritten when it already says so: a warm plan on a branch that did not move
        writes nothing)."""
        if self.recall_ref(repo_id, revision) != sha:
            _write_atomic(self._repo_dir(repo_id) / "refs" / _safe(revision or ""), sha)

    def recall_ref(self, repo_id: str, revision: str | None) -> str | None:
        """The sha `revision` pointed at when last resolved online, if recorded."""
        try:
            sha = (self._repo_dir(repo_id) / "refs" / _safe(revision or "")).read_text().strip()
        except (OSError, ValueError):
            return None
        return sha if _SHA.fullmatch(sha) else None


def _safe(name: str) -> str:
    """A file-name-safe spelling of a cache key or revision ("" = the default branch)."""
    return quote(name, safe="") or "@default"


def _accepts(valid: Callable[[Any], bool], data: Any) -> bool:
    try:
        return bool(valid(data))
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
        return False


def _write_atomic(target: Path, text: str) -> None:
    """Write via a temporary file + rename (kvfit.atomic); failures are ignored."""
    from ..atomic import write_text
    write_text(target, text)
