"""Answering without the Hub: offline mode, or an endpoint that cannot be reached.

Order: (1) metadata cached from an earlier Hub read of this exact commit (or of the commit
the branch pointed at then); (2) the offline catalog; otherwise a HubError saying why
neither could answer. Hub answers such as 401/404 never lead here: those are real answers.
"""

from __future__ import annotations

from dataclasses import replace

from ..checkpoint.metadata import Metadata
from ..errors import HubError
from .cache import MetadataCache
from .catalog import load_entry, lookup_catalog
from .reference import Reference
from .resolver import build_cached_metadata, single_gguf
from .snapshot import load_snapshot
from .transport import FULL_SHA


def answer_offline(ref: Reference, reason: str, read_headers: bool) -> Metadata:
    """Metadata from the cache or the catalog, with a note saying why the Hub was not used."""
    cached = _from_cache(ref, reason, read_headers)
    if cached is not None:
        return cached
    if ref.kind == "hub" and ref.path is None:
        found = lookup_catalog(ref.repo_id, ref.revision)
        if found is not None:
            notes = (f"answered from kvfit's offline catalog: {reason}", *found.notes)
            if read_headers:
                notes += ("weight headers not read: no Hub access",)
            return replace(found, notes=notes)
    raise HubError(f"{reason}; {_not_available(ref)}", hint="Connect to the Hub once (or unset "
                   "HF_HUB_OFFLINE), or plan from a local checkpoint directory.")


def _not_available(ref: Reference) -> str:
    """Why neither the catalog nor the cache can stand in for the Hub."""
    wanted = f"{ref.repo_id}{'@' + ref.revision if ref.revision else ''}"
    entry = load_entry(ref.repo_id) if ref.kind == "hub" and ref.path is None else None
    if entry is None:
        from .catalog_info import miss_hint
        hint = miss_hint(ref.repo_id) if ref.kind == "hub" else ""
        return (f"{wanted} is neither in kvfit's offline catalog nor in its metadata cache."
                + (f" {hint}" if hint else ""))
    pinned = entry["hf_revision"] or "an unknown Hub revision"
    return (f"kvfit's offline catalog holds {ref.repo_id} only at {pinned}, and {wanted} is not "
            "in its metadata cache.")


def _from_cache(ref: Reference, reason: str, read_headers: bool) -> Metadata | None:
    """Metadata cached by an earlier online run, if the commit can be identified."""
    cache = MetadataCache()
    if ref.revision and FULL_SHA.fullmatch(ref.revision):
        sha, how = ref.revision, "the requested commit"
    else:
        sha = cache.recall_ref(ref.repo_id, ref.revision)
        how = f"the commit {ref.revision or 'the default branch'} pointed at when last online"
    snap = load_snapshot(cache, ref.repo_id, sha) if sha else None
    if snap is None and sha and single_gguf(ref):
        from .gguf_direct import load_artifact

        snap = load_artifact(cache, ref, sha)
    if snap is None:
        return None
    note = f"answered from kvfit's metadata cache ({how}): {reason}"
    try:
        return build_cached_metadata(ref, snap, read_headers, note)
    except HubError:
        return None
