"""Metadata for GGUF checkpoints: a local .gguf file (and its split parts) or Hub GGUF parts."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..checkpoint.artifacts import bytes_by_kind, missing_layers, split_set
from ..checkpoint.metadata import FileEntry, Metadata
from ..errors import ConfigError
from .gguf_config import synthesize_config
from .gguf_header import GgufHeader, read_local_gguf
from .reference import Reference

HeaderOf = Callable[[FileEntry], GgufHeader]


def local_gguf_metadata(ref: Reference, read_headers: bool = False) -> Metadata:
    """Metadata for a local .gguf file; split siblings in the same folder are found and summed."""
    folder, name = os.path.split(os.path.abspath(ref.path or ref.text))
    entries = [FileEntry(n, os.path.getsize(os.path.join(folder, n)))
               for n in sorted(os.listdir(folder)) if n.lower().endswith(".gguf")]
    parts = split_set(entries, name)
    config, notes, tensor_bytes = gguf_summary(
        parts, lambda p: read_local_gguf(os.path.join(folder, p.path), p.size), read_headers)
    return Metadata(source=parts[0].path, origin="gguf", config=config, files=tuple(parts),
                    selected_artifact=name, tensor_bytes=tensor_bytes, notes=tuple(notes))


def gguf_summary(parts: list[FileEntry], header_of: HeaderOf, read_headers: bool
                 ) -> tuple[dict[str, Any], list[str], dict[str, int] | None]:
    """(config, notes, tensor bytes or None) from the first part (and every part if asked)."""
    first = header_of(parts[0])
    config, notes = synthesize_config(first)
    _check_split(first, parts)
    total = sum(p.size or 0 for p in parts)
    notes.append(f"GGUF weights: {len(parts)} part(s), {total:,} bytes"
                 + (f", file type {_file_type(first)}" if _file_type(first) else ""))
    if not read_headers:
        return config, notes, None
    infos: dict[str, tuple[str, int]] = {}
    for part in parts:
        header = first if part is parts[0] else header_of(part)
        for name, info in header.tensors.items():
            if name in infos:
                raise ConfigError(f"GGUF tensor {name} appears in more than one part.")
            infos[name] = info
    notes.append(_tensor_note(infos, int(config["num_hidden_layers"])))
    return config, notes, {name: nbytes for name, (_, nbytes) in infos.items()}


def header_to_json(header: GgufHeader) -> dict[str, Any]:
    """A GgufHeader as a JSON-able dict (for the metadata cache)."""
    return {"fields": header.fields, "array_lengths": header.array_lengths,
            "tensors": {k: list(v) for k, v in header.tensors.items()},
            "data_end": header.data_end}


def header_from_json(doc: dict[str, Any]) -> GgufHeader | None:
    """Inverse of header_to_json; None if the document is malformed."""
    try:
        fields, lengths, end = doc["fields"], doc["array_lengths"], doc["data_end"]
        if not (isinstance(fields, dict) and isinstance(lengths, dict) and type(end) is int
                and end >= 0 and all(type(n) is int and n >= 0 for n in lengths.values())):
            return None
        tensors = {}
        for name, (kind, nbytes) in doc["tensors"].items():
            if not isinstance(kind, str) or type(nbytes) is not int or nbytes < 0:
                return None
            tensors[name] = (kind, nbytes)
        return GgufHeader(fields, lengths, tensors, end)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _check_split(first: GgufHeader, parts: list[FileEntry]) -> None:
    """split.count in the first part must match the number of part files."""
    count = first.fields.get("split.count")
    if count is not None and int(count) != len(parts):
        raise ConfigError(f"{parts[0].path} declares split.count = {count} but {len(parts)} "
                          "part file(s) were found.")


def _file_type(header: GgufHeader) -> str | None:
    """general.file_type as gguf's LlamaFileType name (e.g. MOSTLY_Q4_K_M)."""
    from gguf import LlamaFileType

    value = header.fields.get("general.file_type")
    try:
        return LlamaFileType(int(value)).name if value is not None else None
    except (ValueError, TypeError):
        return f"unknown ({value})"


def _tensor_note(infos: dict[str, tuple[str, int]], layers: int) -> str:
    """Tensor count, bytes per GGML type, and layer coverage ('blk.N.' names)."""
    types = bytes_by_kind(infos.values())
    missing = missing_layers(infos, layers, marker="blk")
    cover = f"no tensors for layers {missing[:8]}" if missing else f"all {layers} layers covered"
    return f"GGUF tensor infos: {len(infos)} tensors ({types}); {cover}"
