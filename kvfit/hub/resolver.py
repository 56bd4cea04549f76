"""Resolve a Hub reference to Metadata: revision -> commit sha, then everything at that sha.

Requests for a cold plan: one repo-info call (sha + file sizes) and one GET per metadata
file present (config.json, hf_quant_config.json, the safetensors index when the root
shards are the weights). Weight headers only when asked for. Repeat runs reuse the
metadata cache: zero requests when pinned to a full sha, one to re-resolve a branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..checkpoint.metadata import FileEntry, Metadata
from ..errors import ConfigError, HubError
from .artifacts import bytes_by_kind, choose_weight_files
from .cache import MetadataCache
from .reference import Reference
from .snapshot import Snapshot, fetch_snapshot, load_snapshot
from .transport import FULL_SHA, HubClient

HEADER_WORKERS = 8  # concurrent ranged reads when a checkpoint has many shards


def resolve_online(ref: Reference, client: HubClient, read_headers: bool) -> Metadata:
    """Resolve through the Hub (or the metadata cache for a cached full sha)."""
    cache = MetadataCache()
    pinned = ref.revision if ref.revision and FULL_SHA.fullmatch(ref.revision) else None
    one_gguf = single_gguf(ref)
    if one_gguf:
        from . import gguf_direct
    snap = None
    if pinned:
        snap = load_snapshot(cache, ref.repo_id, pinned) or (
            gguf_direct.load_artifact(cache, ref, pinned) if one_gguf else None)
    if snap is None and one_gguf and (pinned or not gguf_direct.known(cache, ref)):
        snap = gguf_direct.read_artifact(client, cache, ref)     # no listing needed (cold)
    if snap is None:
        info = client.repo_info(ref.repo_id, ref.revision)
        cache.remember_ref(ref.repo_id, ref.revision, info.sha)
        snap = load_snapshot(cache, ref.repo_id, info.sha) or (
            gguf_direct.load_artifact(cache, ref, info.sha) if one_gguf else None) or \
            fetch_snapshot(client, cache, info)
    return build_metadata(ref, snap, _Headers(client, cache, snap), read_headers)


def single_gguf(ref: Reference) -> bool:
    """A hub-artifact reference to one unsplit .gguf file (read by gguf_direct, no listing)."""
    from .artifacts import SPLIT_RE

    return ref.kind == "hub-artifact" and _is_gguf(ref.path) and SPLIT_RE.search(ref.path) is None


def build_cached_metadata(ref: Reference, snap: Snapshot, read_headers: bool,
                          note: str) -> Metadata:
    """Metadata from cached documents only (no Hub access)."""
    return build_metadata(ref, snap, _Headers(None, MetadataCache(), snap), read_headers, (note,))


def build_metadata(ref: Reference, snap: Snapshot, headers: _Headers, read_headers: bool,
                   extra_notes: tuple[str, ...] = ()) -> Metadata:
    """Metadata for `ref` from a snapshot, reading weight headers through `headers`."""
    if ref.kind == "hub-artifact" and ref.path not in {f.path for f in snap.files}:
        raise HubError(f"{ref.path} is not a file of {ref.repo_id} at commit {snap.sha}.",
                       hint="Check the file name and the revision in the URL.")
    index = None if _is_gguf(ref.path) else snap.index
    chosen, description = choose_weight_files(snap.files, ref.path, index=index)
    notes = [*extra_notes, _resolved_note(ref, snap), description]
    if snap.index_skipped and index is None and not _is_gguf(ref.path):
        notes.insert(len(extra_notes) + 1, snap.index_skipped)
    if snap.source_note:
        notes.insert(len(extra_notes) + 1, snap.source_note)
    config, tensor_bytes, origin = snap.config, None, "hub"
    if chosen and _is_gguf(chosen[0].path):  # the served GGUF describes itself
        config, more, tensor_bytes = _gguf(chosen, headers, read_headers)
        notes, origin = notes + more, "gguf"
    elif config is None:
        raise ConfigError(f"{ref.repo_id} at {snap.sha} has no config.json and no GGUF file to "
                          "read the architecture from.")
    elif read_headers:
        tensor_bytes, more = _safetensors(chosen, headers)
        notes += more
    return Metadata(
        source=ref.source, origin=origin, config=config,
        revision_requested=ref.revision, revision=snap.sha, quant_config=snap.quant_config,
        safetensors_index=index, files=snap.files,
        selected_artifact=ref.path if ref.kind == "hub-artifact" else None,
        tensor_bytes=tensor_bytes, notes=tuple(notes))


class _Headers:
    """Weight-file headers at one commit, through the metadata cache (client None: cache only)."""

    def __init__(self, client: HubClient | None, cache: MetadataCache, snap: Snapshot):
        self.client, self.cache, self.snap = client, cache, snap

    def cached(self, key: str, produce: Callable[[], dict],
               valid: Callable[[dict], bool]) -> dict[str, Any] | None:
        """The cached document for `key`, else produce() and cache it (None when offline)."""
        return self.cached_many([(key, produce)], valid)[0]

    def cached_many(self, items: list[tuple[str, Callable[[], dict]]],
                    valid: Callable[[dict], bool]) -> list[dict | None]:
        """cached() for several keys; missing (or wrong-shaped, `valid` false) documents are
        produced concurrently."""
        docs = [self.cache.load(self.snap.repo_id, self.snap.sha, key, valid=valid)
                for key, _ in items]
        missing = [i for i, doc in enumerate(docs) if doc is None]
        if missing and self.client is not None:
            if len(missing) == 1:
                produced = [items[missing[0]][1]()]
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(max_workers=min(HEADER_WORKERS, len(missing))) as pool:
                    produced = list(pool.map(lambda i: items[i][1](), missing))
            for i, doc in zip(missing, produced, strict=True):
                docs[i] = doc
                self.cache.save(self.snap.repo_id, self.snap.sha, items[i][0], doc)
        return docs

    def read_range(self, path: str, start: int, length: int) -> bytes:
        """Up to `length` bytes of `path` at the snapshot's commit, from byte `start`."""
        return self.client.read_range(self.snap.repo_id, self.snap.sha, path, start, length)


def _gguf(parts: list[FileEntry], headers: _Headers, read_headers: bool):
    """(config, notes, tensor bytes) from GGUF part headers."""
    from .gguf_header import read_remote_gguf
    from .gguf_source import gguf_summary, header_from_json, header_to_json

    def header_of(part: FileEntry):
        doc = headers.cached(f"gguf:{part.path}", lambda: header_to_json(read_remote_gguf(
            lambda s, n: headers.read_range(part.path, s, n), part.path, part.size)),
            lambda d: header_from_json(d) is not None)
        header = header_from_json(doc) if doc is not None else None
        if header is None:
            raise HubError(f"the GGUF header of {part.path} is not in kvfit's cache and the Hub "
                           "cannot be reached.")
        return header

    return gguf_summary(parts, header_of, read_headers)


def _safetensors(chosen: list[FileEntry], headers: _Headers):
    """(tensor bytes, notes) from the chosen files' safetensors headers."""
    from .safetensors_header import read_safetensors_headers

    st = [f for f in chosen if f.path.endswith(".safetensors")]
    if not st:
        return None, ["weight headers not read: the chosen files are not safetensors"]
    docs = headers.cached_many([(f"st:{e.path}", lambda e=e: {
        name: [t.dtype, list(t.shape), t.nbytes]
        for name, t in read_safetensors_headers([e], headers.read_range).items()}) for e in st],
        _valid_tensor_rows)
    if any(doc is None for doc in docs):
        return None, ["weight headers not read: not cached and the Hub cannot be reached"]
    merged: dict[str, Any] = {}
    for doc in docs:
        for name, row in doc.items():
            if name in merged:
                raise ConfigError(f"tensor {name} appears in more than one safetensors file.")
            merged[name] = row
    return {n: int(r[2]) for n, r in merged.items()}, [_dtype_note(merged, len(st))]


def _valid_tensor_rows(doc: dict) -> bool:
    """A cached safetensors header: {name: [dtype, [dims], bytes]} with whole numbers >= 0."""
    def whole(v) -> bool:
        return type(v) is int and v >= 0
    return all(isinstance(r, list) and len(r) == 3 and isinstance(r[0], str)
               and isinstance(r[1], list) and all(map(whole, r[1])) and whole(r[2])
               for r in doc.values())


def _dtype_note(rows: dict[str, Any], files: int) -> str:
    """'safetensors headers: N tensors in F file(s); BF16 x GiB, ...'."""
    sizes = bytes_by_kind((dtype, nbytes) for dtype, _, nbytes in rows.values())
    return f"safetensors headers: {len(rows)} tensors in {files} file(s); {sizes}"


def _resolved_note(ref: Reference, snap: Snapshot) -> str:
    """Which commit was used and which metadata files were read there."""
    asked = ref.revision or "the default branch"
    head = (f"pinned to commit {snap.sha}" if ref.revision == snap.sha
            else f"resolved {asked} to commit {snap.sha}")
    return f"{head}; read at that commit: {', '.join(snap.read) or 'no metadata files'}"


def _is_gguf(path: str | None) -> bool:
    """Whether an in-repo path names a GGUF file."""
    return bool(path) and path.lower().endswith(".gguf")
