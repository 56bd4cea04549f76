"""--free-before-load-gib: the free memory per GPU the engine sees before loading, stated.

Without it kvfit takes the total minus a CUDA-context estimate fitted to vLLM logs (0.51 GiB at
TP 1), for both engines. With it (provenance "user"):
- SGLang sizes its pool from it: rest = free x mem_fraction_static - weights
  (sglang/srt/mem_cache/kv_cache_configurator.py:2990-3060);
- vLLM only checks it at start-up: free < total x gpu_memory_utilization refuses
  (vllm/v1/worker/utils.py:716-772); its KV budget is requested - non-KV memory
  (v1/worker/gpu_worker.py:753-757), which the free figure does not enter.
It is never above the GPU's total (the H100 spec's CUDA total, 81,089 MiB = 79.19 GiB).

Pinned config: tests/fixtures/model-configs/Qwen--Qwen3-8B, weights stated (--weight-gib 15.3).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import run_cli, run_json

M = str(Path(__file__).parent / "fixtures/model-configs/Qwen--Qwen3-8B")
BASE = (M, "--hardware", "h100-80", "--gpus", "1", "--context", "32k", "--weight-gib", "15.3")
GIB = 1 << 30
TOTAL = 81_089 * (1 << 20)                                # specs/hardware/h100-80.yaml CUDA total


def _engine(*args) -> dict:
    _, r = run_json(*BASE, *args)
    return r["layouts"][0]["engine"]


def test_sglang_pool_from_the_stated_free_memory():
    # rest = 0.8 x 40 GiB - int(15.3 GiB) = 34,359,738,368 - 16,428,249,907 = 17,931,488,461 B
    e = _engine("--engine", "sglang", "--mem-fraction-static", "0.8", "--free-before-load-gib", "40")
    assert e["free_before_load_bytes"] == {"value": 40 * GIB, "basis": "user"}
    assert e["rest_bytes"]["value"] == 17_931_488_461
    # without it: the total minus the fitted 0.51 GiB context
    e = _engine("--engine", "sglang", "--mem-fraction-static", "0.8")
    assert e["free_before_load_bytes"]["value"] == TOTAL - int(0.51 * GIB)
    assert "cuda_context_gib" in e["free_before_load_bytes"]["basis"]


def test_vllm_start_up_check_uses_it_and_the_budget_does_not():
    default = _engine("--engine", "vllm")
    # requested = ceil(81,089 MiB x 0.92) = 78,225,740,923 B = 72.85 GiB > 70 GiB free: refused
    requested = math.ceil(TOTAL * 0.92)
    assert default["memory"]["requested_bytes"]["value"] == requested == 78_225_740_923
    low = _engine("--engine", "vllm", "--free-before-load-gib", "70")
    assert low["memory"]["free_at_start_bytes"] == {"value": 70 * GIB, "basis": "user"}
    assert "Free memory on device (70.00 GiB) on startup is less than desired GPU memory " \
           "utilization (72.85 GiB)" in low["refusal"]["reason"]
    ok = _engine("--engine", "vllm", "--free-before-load-gib", "75")
    assert ok["refusal"] is None
    assert ok["memory"]["available_kv_bytes"] == default["memory"]["available_kv_bytes"]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_never_above_the_total(engine):
    code, out, err = run_cli(*BASE, "--engine", engine, "--free-before-load-gib", "80")
    assert code == 2 and "more than the GPU's total memory" in err and "79.19 GiB" in err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_not_a_positive_figure(value):
    code, _, err = run_cli(M, "--engine", "sglang", f"--free-before-load-gib={value}")
    # -1, nan and inf are no number the flag reader takes (kvfit/numbers.py); 0 is one, and
    # the engine's own check refuses it
    needle = ("positive, finite number of GiB" if value == "0" else
              f"--free-before-load-gib must be a number in [0, 1e+15] (got '{value}')")
    assert code == 2 and needle in err, err
