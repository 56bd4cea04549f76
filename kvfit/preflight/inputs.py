"""What a probe is asked: the config directory the engine reads and the probe's arguments.

The engine reads config.json from a directory: the local checkpoint directory, the Hugging
Face cache snapshot of the resolved commit when one exists on this machine, or else a
temporary directory into which kvfit writes the config.json (and hf_quant_config.json) it
resolved. Nothing is downloaded for the registry and config probes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

FOUR_BIT = ("mxfp4", "nvfp4")


@dataclass(frozen=True, slots=True)
class ProbeInputs:
    """The probe's arguments, independent of the engine. index_dtype is set only when the
    state has a sparse-index cache (a component sized by index_bytes) at a 4-bit dtype."""

    config_dir: str
    config_source: str
    model_ref: str | None
    revision: str | None
    kv_dtype: str
    kv_auto: bool
    index_dtype: str | None
    context: int
    tp: int

    def argv(self, mode: str) -> list[str]:
        """Command-line arguments of probe_<engine>.py (see _probe_lib.parse_args)."""
        out = ["--mode", mode, "--config-dir", self.config_dir, "--kv-dtype", self.kv_dtype,
               "--context", str(self.context), "--tp", str(self.tp)]
        if self.kv_auto:
            out.append("--kv-auto")
        if self.index_dtype:
            out += ["--index-dtype", self.index_dtype]
        if mode == "load" and self.model_ref:
            out += ["--model", self.model_ref] + (["--revision", self.revision]
                                                  if self.revision else [])
        return out


def _hf_snapshot(repo_id: str | None, sha: str | None) -> Path | None:
    """The local Hugging Face cache snapshot holding config.json at `sha`, if any (no network)."""
    if not repo_id or not sha:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
        found = try_to_load_from_cache(repo_id, "config.json", revision=sha)
    except Exception:
        return None
    return Path(found).parent if isinstance(found, str) else None


def _write_config(meta, tmp: Path) -> Path:
    folder = tmp / "config"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(meta.config, indent=2), encoding="utf-8")
    if meta.quant_config is not None:
        (folder / "hf_quant_config.json").write_text(json.dumps(meta.quant_config, indent=2),
                                                      encoding="utf-8")
    return folder


def config_dir(model: str | None, meta, repo_id: str | None, tmp: Path) -> tuple[Path, str]:
    """(directory the engine reads, how it was chosen)."""
    if meta.origin == "local" and model:
        path = Path(model)
        if path.is_dir():
            return path.absolute(), "the local checkpoint directory"
        if path.name == "config.json":
            return path.absolute().parent, "the local checkpoint directory"
    snap = _hf_snapshot(repo_id, meta.revision) if meta.origin == "hub" else None
    if snap is not None:
        return snap, f"the Hugging Face cache snapshot of {repo_id}@{meta.revision[:12]}"
    return _write_config(meta, tmp), ("the config.json kvfit resolved, written to a temporary "
                                      "directory")


def _repo_id(req) -> str | None:
    from ..hub import parse_reference
    try:
        return parse_reference(req.model, req.revision).repo_id
    except Exception:
        return None


def probe_inputs(req, meta, report, tp: int, tmp: Path) -> ProbeInputs:
    """The probe's inputs for this plan; config files, when needed, go under `tmp`."""
    repo_id = None if meta.origin == "local" else _repo_id(req)
    folder, source = config_dir(req.model, meta, repo_id, tmp)
    index = report.dtypes.index.name
    indexed = any("index_bytes" in c.bytes_per_entry_formula for c in report.state.components)
    model_ref = str(folder) if meta.origin == "local" else repo_id
    return ProbeInputs(str(folder), source, model_ref, meta.revision, report.kv_dtype,
                       req.kv_dtype == "auto", index if indexed and index in FOUR_BIT else None,
                       report.context_tokens, tp)
