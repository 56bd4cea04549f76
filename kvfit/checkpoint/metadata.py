"""The checkpoint metadata every model source produces (local dir, Hub, catalog, GGUF).

Everything downstream (spec matching, weights, quantization, plans) reads only this
object, so a new source plugs in by building one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file in the checkpoint, path relative to the repo root, size in bytes (None if unknown)."""

    path: str
    size: int | None


@dataclass(frozen=True, slots=True)
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
    config: dict[str, object]
    revision_requested: str | None = None
    revision: str | None = None
    quant_config: dict[str, object] | None = None
    safetensors_index: dict[str, object] | None = None
    files: tuple[FileEntry, ...] = ()
    selected_artifact: str | None = None
    tensor_bytes: dict[str, int] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)



_ONCE: dict = {}     # (id(config), id(quant_config), key) -> (config, quant_config, value)
_ONCE_KEEP = 256
_ONCE_LOCK = threading.Lock()


def once(meta: Metadata, key: tuple, produce):
    """produce() computed once per checkpoint read and key. What is kept here depends only on
    the checkpoint's config.json and hf_quant_config.json (the spec resolution, the
    quantization summary, the weight estimate, the state at a context), so it is keyed by
    those two parsed objects: every plan that reuses a read (an audit's contexts and fleets,
    a sweep's cells, the suggestions' re-plans, whose Metadata may differ only in its notes)
    computes each once. Entries hold their objects, so an id is never reused while its entry
    lives; failures are not kept; the oldest entries go beyond _ONCE_KEEP."""
    k = (id(meta.config), id(meta.quant_config), key)
    hit = _ONCE.get(k)
    if hit is not None and hit[0] is meta.config and hit[1] is meta.quant_config:
        return hit[2]
    value = produce()
    with _ONCE_LOCK:  # plans run from threads too (the API, the web page, the MCP server)
        while len(_ONCE) >= _ONCE_KEEP:
            del _ONCE[next(iter(_ONCE))]
        _ONCE[k] = (meta.config, meta.quant_config, value)
    return value
