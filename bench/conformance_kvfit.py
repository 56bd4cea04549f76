"""kvfit as a planner under the conformance protocol (docs/conformance.md): read conformance
points (JSON lines, without "expected") on stdin, write one answer line per point on stdout.

    uv run python bench/conformance_run.py --planner "uv run python bench/conformance_kvfit.py"

vLLM points are planned as a user would (`kvfit MODEL --engine vllm@0.33.0 --hardware PRESET
--gpus TP --tp TP --context L --kv-dtype KV --kv-cache-memory-bytes AVAIL --json`, PRESET the
point's GPU: h100-80, b200-180 or rtx-pro-6000-96); SGLang points through the engine model
every `--engine sglang` plan uses, given the point's budget, free memory before loading and
mem_fraction_static (tests/sglang_record_cases.py, the same path the record test takes).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import engine_record_cases as vrec  # noqa: E402
import sglang_record_cases as srec  # noqa: E402


def _dir(point: dict) -> str:
    return str(Path(point["model"]["config"]).parent)


def _v(x):
    return x["value"] if isinstance(x, dict) else x


def _hardware(gpu_name: str) -> str:
    """kvfit's preset for the GPU a point names."""
    return next((preset for preset, name, _ in vrec.GPU_RECORDS.values() if name == gpu_name),
                "h100-80")


def vllm_answer(point: dict) -> dict:
    s = point["settings"]
    p = vrec.Point(_dir(point), s["tensor_parallel_size"], s["kv_cache_dtype"], s["max_model_len"],
                   s["kv_cache_memory_bytes"], {}, {}, _hardware(point["gpu"]["name"]))
    code, eng, err = vrec.kvfit_plan(p)
    if eng is None:
        return {"error": f"exit {code}: {err.strip()[:200]}"}
    if eng.get("refusal") is not None:
        return {"refused": True}
    tok = Fraction(vrec.kvfit_token_bytes(p))
    return {"refused": False, "block_size": eng["block_size"]["value"],
            "num_gpu_blocks": eng["num_gpu_blocks"]["value"],
            "kv_cache_tokens": eng["kv_cache_tokens"]["value"],
            "max_concurrency": eng["max_concurrency"]["value"],
            "attention_bytes_per_token": [tok.numerator, tok.denominator]}


def _sglang(point: dict, mem_fraction: float | None) -> dict:
    from kvfit.engines import predict_inputs
    from kvfit.model.base import to_plain
    s = point["settings"]
    free, mfs = s["free_before_load_bytes"], s["mem_fraction_static"]
    weights = int(mfs * free) - s["available_kv_bytes"]   # mfs x free - weights = the budget
    inp = srec._inputs(_dir(point), s["tp_size"], s["kv_cache_dtype"], s["context_length"],
                       weights)
    flags = {"kv_cache_dtype": s["kv_cache_dtype"]}
    if mem_fraction is not None:
        flags["mem_fraction_static"] = mem_fraction
    return to_plain(predict_inputs("sglang", srec.VERSION, flags,
                                   replace(inp, free_before_load_bytes=free)))


def sglang_answer(point: dict) -> dict:
    from kvfit.errors import KvfitError
    try:
        own = _v(_sglang(point, None)["mem_fraction_static"])
        e = _sglang(point, point["settings"]["mem_fraction_static"])
    except KvfitError as exc:
        return {"error": exc.message[:200]}
    out = {"default_mem_fraction_static": own, "refused": e.get("refusal") is not None}
    if out["refused"]:
        return out
    c = e["cells"]
    for key, where, name in (("full_cell_bytes", c, "full_bytes_per_token"),
                             ("swa_cell_bytes", c, "swa_bytes_per_token"),
                             ("mamba_state_bytes_per_request", c, "recurrent_bytes_per_slot"),
                             ("mamba_pool_slots", e, "mamba_cache_size"),
                             ("swa_max_total_num_tokens", e, "swa_tokens"),
                             ("max_total_num_tokens", e, "max_total_num_tokens"),
                             ("max_running_requests", e, "max_running_requests")):
        if where.get(name) is not None:
            out[key] = _v(where[name])
    return out


def answer(point: dict) -> dict:
    fn = vllm_answer if point["engine"] == "vllm" else sglang_answer
    return {"id": point["id"], "answers": fn(point)}


def main() -> int:
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(json.loads(line)), sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
