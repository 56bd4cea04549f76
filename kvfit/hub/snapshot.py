"""The small metadata files of one commit: config, quantization config, safetensors index.

A snapshot is read once per (repo, commit sha) - one GET per file, always at the sha - and
then kept in the metadata cache, so it never depends on which reference asked for it.

The safetensors index is read only when it can change the answer: when the root shards in
the listing are not exactly one complete split set with known sizes (the index then says
which root files are the weights, or gives their total when sizes are unknown). When they
are, the listing's sizes are the weight bytes either way, and the index would add only its
layer-coverage warning; the snapshot records why it was left unread, and --verify-headers
checks coverage from the tensors themselves. A cold plan is then two requests (repo info,
config.json), not three.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..checkpoint.metadata import FileEntry
from .cache import MetadataCache
from .transport import HubClient, RepoInfo

CONFIG = "config.json"
QUANT_CONFIG = "hf_quant_config.json"
INDEX = "model.safetensors.index.json"
_KEY = "snapshot"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Metadata of one commit: files with sizes (bytes) and the parsed JSON files it has."""

    repo_id: str
    sha: str
    files: tuple[FileEntry, ...]
    config: dict[str, Any] | None
    quant_config: dict[str, Any] | None
    index: dict[str, Any] | None
    index_skipped: str | None = None    # why a listed index was not read (None: read or absent)
    source_note: str | None = None      # where `files` came from, when not the repo listing

    @property
    def read(self) -> list[str]:
        """Names of the metadata files this snapshot holds."""
        pairs = ((CONFIG, self.config), (QUANT_CONFIG, self.quant_config), (INDEX, self.index))
        return [name for name, value in pairs if value is not None]

    def to_json(self) -> dict[str, Any]:
        """The cache document (repo id and sha are the cache key, so they are left out)."""
        return {"files": [[f.path, f.size] for f in self.files], "config": self.config,
                "quant_config": self.quant_config, "index": self.index,
                "index_skipped": self.index_skipped}


def load_snapshot(cache: MetadataCache, repo_id: str, sha: str) -> Snapshot | None:
    """The cached snapshot of (repo, sha), if any (a wrong-shaped entry is discarded)."""
    doc = cache.load(repo_id, sha, _KEY, valid=valid_snapshot)
    if doc is None:
        return None
    files = tuple(FileEntry(p, s) for p, s in doc["files"])
    return Snapshot(repo_id, sha, files, doc["config"], doc["quant_config"], doc["index"],
                    doc.get("index_skipped"))


def valid_snapshot(doc: dict) -> bool:
    """The shape to_json() writes: files [[path, size or null]], config an object (or null),
    quant_config and index objects or null."""
    files = doc.get("files")
    if not isinstance(files, list) or not all(
            isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) and f[0]
            and (f[1] is None or (type(f[1]) is int and f[1] >= 0)) for f in files):
        return False
    skipped = doc.get("index_skipped")
    return (skipped is None or isinstance(skipped, str)) and all(
        k in doc and (doc[k] is None or isinstance(doc[k], dict))
        for k in ("config", "quant_config", "index"))


def fetch_snapshot(client: HubClient, cache: MetadataCache, info: RepoInfo) -> Snapshot:
    """Read config.json, hf_quant_config.json and the index (when present) at info.sha."""
    names = {f.path for f in info.files}

    def read(name: str) -> dict[str, Any] | None:
        return client.fetch_json(info.repo_id, info.sha, name) if name in names else None

    config, quant = read(CONFIG), read(QUANT_CONFIG)
    skipped = index_left_unread(info.files)
    index = compact_index(read(INDEX)) if _needs_index(info.files) and not skipped else None
    snap = Snapshot(info.repo_id, info.sha, info.files, config, quant, index, skipped)
    cache.save(info.repo_id, info.sha, _KEY, snap.to_json())
    return snap


def compact_index(index: dict[str, Any] | None) -> dict[str, Any] | None:
    """The index with one weight_map entry per (layer, shard) pair instead of one per tensor.

    Everything kvfit reads from an index survives: metadata (total_size), the set of shard
    files and the set of layers that have tensors (artifacts.missing_layers). A 10.7 MB
    weight map (GLM-5.3) then costs kilobytes to keep and to read back from the cache."""
    if not isinstance(index, dict) or not isinstance(index.get("weight_map"), dict):
        return index
    from .artifacts import LAYER_PATTERN
    kept: dict[str, Any] = {}
    seen: set = set()
    for name, shard in index["weight_map"].items():
        m = LAYER_PATTERN.search(name) if isinstance(name, str) else None
        key = (m.group(1) if m else None, shard if isinstance(shard, str) else repr(shard))
        if key not in seen:
            seen.add(key)
            kept[name] = shard
    return index | {"weight_map": kept}


def _needs_index(files: tuple[FileEntry, ...]) -> bool:
    """The index matters when root-level safetensors shards are the weights."""
    return any(f.path == INDEX for f in files) and any(
        "/" not in f.path and f.path.endswith(".safetensors") for f in files)


def index_left_unread(files: tuple[FileEntry, ...]) -> str | None:
    """Why the listed index cannot change the answer (so it is not read), or None."""
    from .artifacts import complete_split_set

    if not _needs_index(files):
        return None
    root = [f for f in files if "/" not in f.path and f.path.endswith(".safetensors")
            and not f.path.lower().startswith("consolidated")]
    if not root or any(f.size is None for f in root):
        return None
    found = complete_split_set(f.path for f in root)
    if found is None:
        return None
    stem, count = found
    return (f"{INDEX} not read: the root shards are one complete set ({stem}-00001.."
            f"{count:05d}-of-{count:05d}.safetensors) with their sizes listed, so it could not "
            "change the weight count; its layer-coverage check was not made (--verify-headers "
            "checks coverage from the tensor headers)")
