"""The fixture start-up logs as explain-log inputs (shared by the engine tests and
bench/engine_accuracy.py).

Everything comes from each log's provenance YAML (engine, version, GPU, TP, the pinned model
config), except two things the YAMLs leave open, listed here with the reasoning:
  * the hardware preset for each GPU name;
  * a version for logs that state none: the release line of the log's date, marked assumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent
LOGS = ROOT / "fixtures" / "engine_logs"
CONFIGS = ROOT / "fixtures" / "model-configs"

# GPU name in the provenance YAML -> kvfit hardware preset (custom:<GiB> when kvfit has none).
HARDWARE = {
    "NVIDIA H100 80GB": "h100-80", "NVIDIA H100": "h100-80", "NVIDIA H200 (141 GB)": "h200-141",
    "NVIDIA GeForce RTX 5090 (32 GB)": "rtx-5090-32", "NVIDIA RTX A5000 (24GB)": "custom:24",
    "NVIDIA RTX A5000 (24 GB)": "custom:24", "NVIDIA RTX A6000 (48 GB)": "custom:48",
    "NVIDIA GeForce RTX 3090 (24 GB)": "custom:24",
}
# Logs without a stated version: (assumed version, why). Rules are chosen by range, so only
# the range matters: the vLLM ones fall in 0.8-0.20, the 2025 SGLang ones in 0.4.x.
ASSUMED = {
    "vllm-vunknown-kimi-k2-thinking-h200-tp8": ("0.11.1", "nightly of 2025-11-06"),
    "vllm-vunknown-kimi-k2-thinking-h200-tp8-dcp8": ("0.11.1", "nightly of 2025-11-06"),
    "vllm-vunknown-qwen3-235b-a22b-fp8-h100-tp4": ("0.10.0", "issue opened 2025-07-22"),
    "sglang-vunknown-qwen3-235b-a22b-fp8-h100-tp4": ("0.4.9", "issue opened 2025-07-22"),
    "sglang-vunknown-qwen3-14b-rtxa6000": ("0.4.6", "log dated 2025-05-19"),
    "sglang-main20260131-mimo-v2-flash-tp4-swa": ("0.5.8", "main branch of 2026-01-31"),
}

# Flags set because the pinned config is a stand-in for the served checkpoint.
FLAG_FIXES = {
    # The nearest pinned config is the base google/gemma-2-9b (torch_dtype float32); the log
    # serves gemma-2-9b-it, whose checkpoint is bfloat16 (17.22 GiB of weights for 9.2 B
    # parameters = 2 B each). Both resolve to a 16-bit cache; say so explicitly.
    "vllm-0.19.0-gemma-2-9b-it-h100-tp1": {"kv_cache_dtype": "bfloat16"},
}


@dataclass(frozen=True)
class LogCase:
    """One fixture log and the inputs explain-log needs beside it."""

    slug: str
    engine: str
    version: str
    version_note: str
    model_dir: Path
    config_note: str
    tp: int
    hardware: str | None
    meta: dict

    @property
    def thread_flags(self) -> dict:
        """Engine flags the log's thread states but the log excerpt does not (e.g. the quoted
        launch command); explain-log gets them as user flags."""
        keep = ("mem_fraction_static", "page_size", "max_model_len", "kv_cache_dtype",
                "enable_prefix_caching", "max_num_batched_tokens", "max_num_seqs",
                "gpu_memory_utilization", "decode_context_parallel_size", "speculative_config",
                "quantization")
        flags = self.meta.get("flags") or {}
        out = {k: flags[k] for k in keep if flags.get(k) is not None}
        return out | FLAG_FIXES.get(self.slug, {})

    @property
    def served_format(self) -> str | None:
        """The served checkpoint's linear-weight format when the pinned config is a stand-in
        that does not declare it (the YAML's `served_quantization`, with where it is stated)."""
        return (self.meta.get("served_quantization") or {}).get("format")

    @property
    def text(self) -> str:
        return (LOGS / f"{self.slug}.log").read_text(encoding="utf-8")


def _config(meta: dict) -> tuple[Path, str]:
    for key, note in (("config_fixture", "the pinned config of this exact model"),
                      ("config_fixture_nearest", "nearest pinned config (same attention "
                       "geometry; see the provenance YAML)"),
                      ("config_fixture_candidate", "candidate config; the log's checkpoint is "
                       "a local copy of the same geometry")):
        if meta.get(key):   # a model-configs folder name, or a path under tests/ (architectures/...)
            where = CONFIGS / meta[key] if "/" not in meta[key] else ROOT / meta[key]
            return where, note
    raise LookupError(f"{meta['slug']}: no config fixture")


def _tp(meta: dict) -> int:
    flags = meta.get("flags") or {}
    return int(flags.get("tensor_parallel_size") or flags.get("tp_size")
               or (meta.get("gpu") or {}).get("count") or 1)


def load_cases() -> list[LogCase]:
    """Every fixture log, sorted by slug."""
    out = []
    for path in sorted(LOGS.glob("*.yaml")):
        meta = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        slug = meta["slug"]
        stated = (meta.get("engine_version") or {}).get("value")
        if slug in ASSUMED:
            version, note = ASSUMED[slug][0], f"assumed: {ASSUMED[slug][1]}"
        else:
            version, note = stated, "stated"
        model_dir, config_note = _config(meta)
        gpu = (meta.get("gpu") or {}).get("model")
        out.append(LogCase(slug, meta["engine"], version, note, model_dir, config_note,
                           _tp(meta), HARDWARE.get(gpu) if gpu else None, meta))
    return out
