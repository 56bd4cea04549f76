"""The checkpoint metadata every model source produces (local dir, Hub, catalog, GGUF).

Everything downstream (spec matching, weights, quantization, plans) reads only this
object, so a new source plugs in by building one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FileEntry:
    """A file in the checkpoint, path relative to the repo root, size in bytes (None if unknown)."""

    path: str
    size: int | None


@dataclass(frozen=True)
class Metadata:
    """What kvfit knows about one checkpoint.

    source: the reference as the user gave it (repo id, URL, or the local directory's name;
      never an absolute path, so reports stay deterministic).
    origin: "local" | "hub" | "catalog" | "gguf".
    revision_requested / revision: the revision asked for and the full commit sha it
      resolved to (both None for a local directory).
    config: the parsed config.json (or a config synthesised from GGUF metadata).
    quant_config: parsed hf_quant_config.json, if the checkpoint publishes one.
    safetensors_index: parsed model.safetensors.index.json, if present.
    files: every file of the checkpoint with its size, when known.
    selected_artifact: a single weight file the reference selected (URL to a .gguf/.safetensors).
    tensor_bytes: optional per-tensor byte sizes read from headers {name: bytes}.
    notes: human-readable facts about how the metadata was obtained.
    """

    source: str
    origin: str
    config: dict[str, Any]
    revision_requested: str | None = None
    revision: str | None = None
    quant_config: dict[str, Any] | None = None
    safetensors_index: dict[str, Any] | None = None
    files: tuple[FileEntry, ...] = ()
    selected_artifact: str | None = None
    tensor_bytes: dict[str, int] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def once(meta: Metadata, key: tuple, produce):
    """produce() computed once per (Metadata object, key): the spec resolution and the weight
    estimate of one checkpoint read are the same for every plan that reuses the read (an
    audit's contexts and fleets, a sweep's cells). Failures are not kept."""
    memo = meta.__dict__.get("_kvfit_once")
    if memo is None:
        memo = {}
        object.__setattr__(meta, "_kvfit_once", memo)     # Metadata is frozen
    if key not in memo:
        memo[key] = produce()
    return memo[key]
