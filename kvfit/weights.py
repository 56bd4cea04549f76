"""Checkpoint weight bytes and where the number came from."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ConfigError, UsageError
from .metadata import FileEntry, Metadata

GIB = 1024**3


@dataclass(frozen=True)
class Weights:
    """Total checkpoint weight bytes (None if unknown), with provenance."""

    bytes: int | None
    source: str
    detail: str


def _group(files: tuple[FileEntry, ...]) -> tuple[list[FileEntry], str]:
    """The files that would be served: root safetensors shards before other groups."""
    def pick(pred):
        return [f for f in files if pred(f.path)]
    groups = [
        (pick(lambda p: p.endswith(".safetensors") and "/" not in p
              and not p.startswith("consolidated")), "safetensors shards at the repo root"),
        (pick(lambda p: p.endswith(".safetensors") and p.startswith("consolidated")),
         "consolidated safetensors"),
        (pick(lambda p: p.endswith(".safetensors")), "safetensors files"),
        (pick(lambda p: p.endswith(".gguf")), "GGUF files"),
        (pick(lambda p: p.endswith(".bin") and "/" not in p), "PyTorch .bin shards"),
    ]
    for chosen, why in groups:
        if chosen:
            return chosen, why
    return [], ""


def count_weights(meta: Metadata, weight_gib: float | None) -> Weights:
    """Weight bytes: --weight-gib, else the served files' sizes, else the index total_size."""
    if weight_gib is not None:
        if not 0 < weight_gib < 1e6:
            raise UsageError(f"--weight-gib {weight_gib} must be a positive size in GiB.")
        return Weights(round(weight_gib * GIB), "user", f"--weight-gib {weight_gib:g}")
    chosen, why = _group(meta.files)
    if chosen and all(f.size is not None for f in chosen):
        total = sum(f.size for f in chosen)
        return Weights(total, "checkpoint files", f"{len(chosen)} {why}")
    index = meta.safetensors_index
    if index is not None:
        total = (index.get("metadata") or {}).get("total_size") if isinstance(
            index.get("metadata", {}), dict) else None
        if isinstance(total, bool) or not isinstance(total, int) or total <= 0:
            raise ConfigError("model.safetensors.index.json has no positive integer "
                              "metadata.total_size.", fields=("metadata.total_size",))
        return Weights(total, "safetensors index", "model.safetensors.index.json metadata.total_size "
                       "(tensor bytes, excludes file headers)")
    return Weights(None, "unknown", "no weight files, no safetensors index, no --weight-gib")
