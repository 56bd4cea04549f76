"""The offline catalog: pinned metadata snapshots of popular checkpoints, shipped in the wheel.

Each entry is a folder kvfit/hub/catalog/<org>--<name>/ holding entry.json (described by
catalog.schema.json) and byte-for-byte copies of the files it lists. Most configs were
pinned from a GitHub mirror, not from a Hub commit: such entries have hf_revision null
and say so in every answer. Nothing here is invented: sizes and commits appear only
where a real source stated them.
"""

from __future__ import annotations

import gzip
import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from ..checkpoint.metadata import FileEntry, Metadata

DEFAULT_BRANCHES = (None, "main")
# The entries sit in the installed package, found from this file as kvfit.paths finds the specs.
_DIR = Path(__file__).resolve().parent / "catalog"


def catalog_dir() -> Path:
    """The folder holding the catalog entries."""
    return _DIR


def _entry_folders() -> list[str]:
    """The names of the folders that hold an entry (entry.json)."""
    return [f.name for f in _DIR.iterdir() if (f / "entry.json").is_file()]


@cache
def _folders() -> dict[str, str]:
    """Lower-cased repo id (and former ids) -> entry folder; Hub ids are case-insensitive."""
    found: dict[str, str] = {}
    for folder in _entry_folders():
        entry = json.loads(_entry_text(folder))
        for repo_id in (entry["repo_id"], *entry.get("aliases", [])):
            found[repo_id.lower()] = folder
    return found


@cache
def _entry_text(folder: str) -> str:
    return (_DIR / folder / "entry.json").read_text(encoding="utf-8")


@cache
def _folder_of(repo_id: str) -> str | None:
    """The entry folder of a repo id: the folder named after it when its entry is that repo
    (the usual request, one file read), else the index of every entry's id and former ids
    (another spelling of the case, or a former name: every entry read once)."""
    named = repo_id.replace("/", "--", 1)
    if "/" in repo_id and ".." not in repo_id and (_DIR / named / "entry.json").is_file() \
            and json.loads(_entry_text(named))["repo_id"].lower() == repo_id.lower():
        return named
    return _folders().get(repo_id.lower())


def repo_ids_containing(text: str) -> list[str]:
    """The repo ids of the entries whose folder name holds `text` (case-insensitive), sorted:
    a narrowing before a test on the repo id that reads only those entries (each folder is
    named after its repo id, org/name -> org--name; tests/hub/test_hub_catalog.py)."""
    text = text.lower()
    return sorted({json.loads(_entry_text(f))["repo_id"] for f in _entry_folders()
                   if text in f.lower()})


def catalog_repo_ids() -> list[str]:
    """Every repo id in the catalog (not counting former ids), sorted."""
    return sorted({json.loads(_entry_text(f))["repo_id"] for f in _entry_folders()})


def load_entry(repo_id: str) -> dict[str, Any] | None:
    """The parsed entry.json for a repo id, or None when it is not catalogued."""
    folder = _folder_of(repo_id)
    return None if folder is None else json.loads(_entry_text(folder))


def catalog_file(repo_id: str, name: str) -> bytes | None:
    """The bytes of a file stored with an entry (e.g. checkpoint-tensor-split.json)."""
    folder = _folder_of(repo_id)
    record = None if folder is None else next(
        (f for f in load_entry(repo_id)["snapshot"] if f["file"] == name), None)
    if record is None:
        return None
    stored = record.get("stored_as", name)
    data = catalog_dir().joinpath(folder, *stored.split("/")).read_bytes()
    return gzip.decompress(data) if stored.endswith(".gz") else data


@lru_cache(maxsize=8)
def lookup_catalog(repo_id: str, revision: str | None = None) -> Metadata | None:
    """Metadata from the catalog (origin "catalog"), or None.

    A request for a specific revision is answered only by an entry pinned to that Hub
    commit (full sha or a 7+ character prefix); None/"main" accepts any entry. The last few
    answers are kept: a plan's re-plans (suggestions, an audit's cells) then share one
    parsed config, and what is worked out from it once (kvfit.checkpoint.metadata.once)."""
    entry = load_entry(repo_id)
    if entry is None or not _revision_matches(entry["hf_revision"], revision):
        return None
    files = {f["file"]: f for f in entry["snapshot"]}

    def parsed(name: str) -> dict[str, Any] | None:
        return json.loads(catalog_file(repo_id, name)) if name in files else None

    checkpoint = entry.get("checkpoint_files") or []
    return Metadata(
        source=entry["repo_id"], origin="catalog", config=parsed("config.json"),
        revision_requested=revision, revision=entry["hf_revision"],
        quant_config=parsed("hf_quant_config.json"),
        safetensors_index=parsed("model.safetensors.index.json"),
        files=tuple(FileEntry(f["path"], f["size"]) for f in checkpoint),
        notes=tuple(_notes(entry, files)))


def _revision_matches(pinned: str | None, requested: str | None) -> bool:
    """Whether an entry pinned at `pinned` may answer a request for `requested`."""
    if requested in DEFAULT_BRANCHES:
        return True
    return pinned is not None and len(requested) >= 7 and pinned.startswith(requested)


def _notes(entry: dict[str, Any], files: dict[str, dict[str, Any]]) -> list[str]:
    """Where every number came from, including what the catalog does not know."""
    config = files["config.json"]
    origin = config.get("pinned_from")
    where = f"{origin['repo']}@{origin['commit']}" if origin else "an unrecorded source"
    if entry["hf_revision"]:
        notes = [f"catalog snapshot of Hub commit {entry['hf_revision']} (config from {where})"]
    else:
        notes = [f"catalog snapshot (config pinned from {where}; Hub revision unknown)"]
    notes += [f"catalog {name}: {f['fidelity']}" for name, f in sorted(files.items())]
    if entry.get("total_size") is not None:
        notes.append(f"weights: {entry['total_size']:,} bytes of tensors per "
                     "model.safetensors.index.json metadata.total_size")
    elif not entry.get("checkpoint_files"):
        notes.append("weights: the catalog records no checkpoint file sizes for this model")
    return notes + list(entry.get("notes", []))
