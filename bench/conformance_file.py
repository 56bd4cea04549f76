"""Write docs/conformance/engine-views-1.jsonl: the recorded engine views (vLLM 0.33.0's KV-cache
planner, SGLang 0.5.23's pool sizing) as planner-neutral test points, one JSON object a line.

    uv run python bench/conformance_file.py            # rewrite the file
    uv run python bench/conformance_file.py --check    # exit 1 when the file is stale

Every expected value is the engine's own, copied from the records in tests/engine_probe/ (made
by the engines' code; nothing comes from kvfit). docs/conformance.md describes the format;
bench/conformance_run.py scores a planner on it; tests/test_conformance.py checks the file is
current.
"""

from __future__ import annotations

import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import engine_record_cases as vrec  # noqa: E402
import sglang_record_cases as srec  # noqa: E402
from generated_file import write_or_check  # noqa: E402

FILE = ROOT / "docs" / "conformance" / "engine-views-1.jsonl"
FORMAT, VERSION = "kvfit-engine-conformance", 1
GIB = 1 << 30
H100 = {"name": "NVIDIA H100 80GB", "compute_capability": "9.0"}


def _model(directory: str) -> dict:
    """Where the point's config.json is in this repository, its sha256 and the Hub id its
    folder name spells (owner--name)."""
    config = ROOT / directory / "config.json"
    name = Path(directory).name
    return {"config": f"{directory}/config.json",
            "config_sha256": hashlib.sha256(config.read_bytes()).hexdigest(),
            "hub_id": name.replace("--", "/", 1) if "--" in name else None}


def _fraction(value: Fraction) -> list[int]:
    return [value.numerator, value.denominator]


def _vllm_points(points, gpu: dict, suffix: str) -> list[dict]:
    out = []
    for p in points:
        v = p.vllm
        expected: dict = {"refused": "refused" in v}
        if not expected["refused"]:
            expected |= {"block_size": v["block_size"], "num_gpu_blocks": v["num_blocks"],
                         "kv_cache_tokens": v["kv_cache_tokens"],
                         "max_concurrency": v["max_concurrency"],
                         "attention_bytes_per_token": _fraction(vrec.vllm_token_bytes(p.row))}
        out.append({"id": f"vllm-0.33.0/{p.id}{suffix}", "engine": "vllm",
                    "engine_version": "0.33.0", "model": _model(p.dir), "gpu": gpu,
                    "settings": {"tensor_parallel_size": p.tp, "kv_cache_dtype": p.kv,
                                 "max_model_len": p.length, "kv_cache_memory_bytes": p.avail},
                    "expected": expected})
    return out


def vllm_points() -> list[dict]:
    """The H100 record's points, then each Blackwell record's (ids end in @<gpu>)."""
    out = _vllm_points(vrec.points(), H100, "")
    for gpu, (preset, name, capability) in vrec.GPU_RECORDS.items():
        out += _vllm_points(vrec.points(vrec.gpu_record(gpu), preset),
                            {"name": name, "compute_capability": capability}, f"@{gpu}")
    return out


def sglang_points() -> list[dict]:
    out, free = [], int(srec.header()["free_before_gib"] * GIB)
    for p in srec.points():
        s, row = p.sglang, p.row
        mfs = row["resolved"]["mem_fraction_static"]
        expected: dict = {"default_mem_fraction_static": mfs, "refused": "refused" in s}
        if not expected["refused"]:
            full = row.get("full_cell_bytes", row.get("cell_bytes"))
            if full is not None:
                expected["full_cell_bytes"] = full
            if "swa_cell_bytes" in row:
                expected["swa_cell_bytes"] = row["swa_cell_bytes"]
            if "mamba_cache_per_req" in row:
                expected["mamba_state_bytes_per_request"] = row["mamba_cache_per_req"]
                expected["mamba_pool_slots"] = s["max_mamba_cache_size"]
            if s.get("swa_max_total_num_tokens") is not None:
                expected["swa_max_total_num_tokens"] = s["swa_max_total_num_tokens"]
            expected["max_total_num_tokens"] = s["max_total_num_tokens"]
            expected["max_running_requests"] = s["max_running_requests"]
        out.append({"id": f"sglang-0.5.23/{p.id}", "engine": "sglang", "engine_version": "0.5.23",
                    "model": _model(p.dir),
                    "gpu": H100,
                    "settings": {"tp_size": p.tp, "kv_cache_dtype": p.kv,
                                 "context_length": p.context, "available_kv_bytes": p.avail,
                                 "free_before_load_bytes": free, "mem_fraction_static": mfs},
                    "expected": expected})
    return out


# Relative tolerance per expected key (others must be equal); absolute for the fraction.
TOLERANCE = {"kv_cache_tokens": 0.005, "max_concurrency": 0.005, "max_total_num_tokens": 0.005,
             "swa_max_total_num_tokens": 0.005}
ABSOLUTE = {"default_mem_fraction_static": 0.002}


def _first(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def header() -> dict:
    return {"format": FORMAT, "version": VERSION,
            "description": "docs/conformance.md",
            "engines": {"vllm": {"version": "0.33.0", "record": "tests/engine_probe/"
                                 "vllm-0.33.0-kv.jsonl", "how": _first(vrec.RECORD)["recorded"],
                                 "more_records": {
                                     gpu: {"record": str(vrec.gpu_record(gpu).relative_to(ROOT)),
                                           "how": _first(vrec.gpu_record(gpu))["recorded"]}
                                     for gpu in vrec.GPU_RECORDS}},
                        "sglang": {"version": "0.5.23", "record": "tests/engine_probe/"
                                   "sglang-0.5.23-kv.jsonl", "how": srec.header()["recorded"]}},
            "relative_tolerance": TOLERANCE, "absolute_tolerance": ABSOLUTE}


def render() -> str:
    lines = [header(), *vllm_points(), *sglang_points()]
    return "".join(json.dumps(x, sort_keys=True, separators=(",", ":")) + "\n" for x in lines)


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, __file__, FILE, render,
                          summary=lambda text: f" ({text.count(chr(10)) - 1:,} points)")


if __name__ == "__main__":
    sys.exit(main())
