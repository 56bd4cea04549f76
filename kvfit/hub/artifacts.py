"""Which weight files a checkpoint actually serves, and whether an index covers every layer.

Many repos carry several copies of the weights: root safetensors shards next to an
``original/`` folder, ``consolidated*.safetensors`` (Mistral-native), legacy
``pytorch_model*.bin`` files, or many GGUF quantizations. Counting all of them would
double the weight footprint, so one group is chosen and the choice is explained.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..checkpoint.metadata import FileEntry
from ..errors import ConfigError, UsageError

__all__ = ["bytes_by_kind", "check_index_covers_layers", "choose_weight_files",
           "complete_split_set", "missing_layers", "split_set"]


def __getattr__(name: str):
    """TensorHeader and read_safetensors_headers load with their module on first use (a plan
    that reads no weight header does not import the safetensors header reader)."""
    if name in ("TensorHeader", "read_safetensors_headers"):
        from . import safetensors_header
        return getattr(safetensors_header, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# A split GGUF / sharded safetensors part: <stem>-00001-of-00003.gguf
SPLIT_RE = re.compile(r"-(\d{5})-of-(\d{5})\.(gguf|safetensors)$", re.IGNORECASE)
_REASONS = {
    0: "root safetensors shards are what transformers, vLLM and SGLang load from a Hub repo",
    1: "the only safetensors at the root are consolidated* (Mistral-native) files",
    2: "the repo's only safetensors are in this folder",
    3: "only original/ carries safetensors",
    4: "no safetensors anywhere; loaders fall back to pytorch_model*.bin",
    5: "it is the repo's only GGUF model",
}


@dataclass(frozen=True, slots=True)
class _Group:
    """One candidate set of weight files: its name, its rank (lower wins), its files."""

    name: str
    rank: int
    files: tuple[FileEntry, ...]


def choose_weight_files(files: Iterable[FileEntry], selected: str | None = None, *,
                        index: dict[str, Any] | None = None) -> tuple[list[FileEntry], str]:
    """Pick the served weight files; returns (chosen files, one-line description with bytes).

    selected: an in-repo file (a split part selects its whole set) or folder, or None.
    index: a parsed model.safetensors.index.json; when given, the root group is its shards.
    """
    files = list(files)
    if selected:
        if any(f.path == selected for f in files):
            chosen = split_set(files, selected)
            return chosen, f"selected artifact {selected}: {_amount(chosen)}"
        files = [f for f in files if f.path.startswith(selected.rstrip("/") + "/")]
        if not files:
            raise UsageError(f"{selected!r} is neither a file nor a folder of this checkpoint.")
    groups = _groups(files, index)
    if not groups:
        return [], "no weight files (.safetensors, .gguf or pytorch_model*.bin) were found"
    best = min(g.rank for g in groups)
    top = [g for g in groups if g.rank == best]
    if len(top) > 1:
        names = ", ".join(g.name for g in top[:6])
        raise UsageError(f"the checkpoint offers several weight variants ({names}); kvfit cannot "
                         "tell which one you serve.", hint="Pass the blob URL of the file (or "
                         "a tree URL of the folder) you deploy.")
    chosen = list(top[0].files)
    others = [g for g in groups if g is not top[0]]
    text = f"chose {top[0].name}: {_amount(chosen)} - {_REASONS[best]}"
    if others:
        text += "; not counted: " + "; ".join(f"{g.name} ({_amount(g.files)})" for g in others)
    return chosen, text


def split_set(files: list[FileEntry], path: str) -> list[FileEntry]:
    """All parts of the split set `path` belongs to (just [path] when it is not split)."""
    match = SPLIT_RE.search(path)
    by_path = {f.path: f for f in files}
    if match is None:
        return [by_path[path]]
    count = int(match.group(2))
    stem = path[: match.start()]
    names = [f"{stem}-{i:05d}-of-{count:05d}.{match.group(3)}" for i in range(1, count + 1)]
    missing = [n for n in names if n not in by_path]
    if missing:
        raise ConfigError(f"{path} is part 1..{count} of a split set, but {len(missing)} part(s) "
                          f"are missing: {', '.join(missing[:4])}.")
    return [by_path[n] for n in names]


def complete_split_set(paths: Iterable[str]) -> tuple[str, int] | None:
    """(stem, n) when `paths` are exactly the parts 1..n of one split set
    (<stem>-00001-of-0000n.<ext> ... <stem>-0000n-of-0000n.<ext>), else None."""
    paths = sorted(paths)
    match = SPLIT_RE.search(paths[0]) if paths else None
    if match is None:
        return None
    stem, count, ext = paths[0][: match.start()], int(match.group(2)), match.group(3)
    want = [f"{stem}-{i:05d}-of-{count:05d}.{ext}" for i in range(1, count + 1)]
    return (stem, count) if paths == want else None


def check_index_covers_layers(index: dict[str, Any], num_layers: int) -> list[int]:
    """Layer numbers 0..num_layers-1 with no tensor named '...layers.N....' in the index."""
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict):
        raise ConfigError("model.safetensors.index.json has no weight_map object.")
    return missing_layers(weight_map, num_layers)


LAYER_PATTERN = re.compile(r"(?:^|\.)(?:layers|blk)\.(\d+)\.")   # safetensors / GGUF names


def missing_layers(tensor_names: Iterable[str], num_layers: int,
                   marker: str | tuple[str, ...] = ("layers", "blk")) -> list[int]:
    """Layers with no tensor containing '<marker>.N.': by default 'layers.N.' (safetensors)
    or 'blk.N.' (llama.cpp's GGUF names)."""
    markers = (marker,) if isinstance(marker, str) else marker
    pattern = LAYER_PATTERN if markers == ("layers", "blk") else re.compile(
        rf"(?:^|\.)(?:{'|'.join(map(re.escape, markers))})\.(\d+)\.")
    seen = {int(m.group(1)) for name in tensor_names for m in [pattern.search(name)] if m}
    return [n for n in range(num_layers) if n not in seen]


def bytes_by_kind(rows: Iterable[tuple[str, int]]) -> str:
    """'BF16 1.500 GiB, F32 0.002 GiB' from (dtype or GGML type, bytes) pairs."""
    totals: dict[str, int] = {}
    for kind, nbytes in rows:
        totals[kind] = totals.get(kind, 0) + int(nbytes)
    return ", ".join(f"{kind} {total / 2**30:.3f} GiB" for kind, total in sorted(totals.items()))


def _groups(files: list[FileEntry], index: dict[str, Any] | None) -> list[_Group]:
    """Candidate weight groups with their preference rank (lower wins)."""
    buckets: dict[tuple[int, str], list[FileEntry]] = {}
    shards = _index_shards(index)
    for f in files:
        key = _classify(f.path, shards)
        if key is not None:
            buckets.setdefault(key, []).append(f)
    return [_Group(name, rank, tuple(sorted(fs, key=lambda f: f.path)))
            for (rank, name), fs in sorted(buckets.items())]


def _classify(path: str, shards: set[str] | None) -> tuple[int, str] | None:
    """(rank, group name) for a weight file, or None for anything else."""
    folder, _, base = path.rpartition("/")
    lower = base.lower()
    if lower.endswith(".safetensors"):
        if not folder and lower.startswith("consolidated"):
            return 1, "consolidated*.safetensors"
        if not folder:
            return (0, "root *.safetensors shards") if shards is None or path in shards else None
        return (3, "original/") if folder.split("/")[0] == "original" else (2, f"{folder}/")
    if lower.endswith(".gguf") and not lower.startswith("mmproj"):
        match = SPLIT_RE.search(path)
        return 5, f"GGUF {path[: match.start()] + '*.gguf' if match else path}"
    if not folder and lower.startswith("pytorch_model") and lower.endswith(".bin"):
        return 4, "pytorch_model*.bin"
    return None


def _index_shards(index: dict[str, Any] | None) -> set[str] | None:
    """Shard file names listed in an index's weight_map, or None without an index."""
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict):
        return None
    return {v for v in weight_map.values() if isinstance(v, str)}  # a list or number names no file


def _amount(files: Iterable[FileEntry]) -> str:
    """'N file(s), B bytes (G GiB)', saying how many sizes are unknown."""
    files = list(files)
    known = [f.size for f in files if f.size is not None]
    total = sum(known)
    text = f"{len(files)} file(s), {total:,} bytes ({total / 2**30:.3f} GiB)"
    if len(known) < len(files):
        text += f", size unknown for {len(files) - len(known)}"
    return text
