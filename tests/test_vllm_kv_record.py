"""kvfit's `--engine vllm` capacity equals vLLM 0.33's own KV-cache plan (issue 11).

The expected numbers are vLLM's, recorded from its own KVCacheSpec / grouping / capacity code
by tests/engine_probe/record_vllm_kv.py into tests/engine_probe/vllm-0.33.0-kv.jsonl (see the
header line there for how). Per recorded (config, TP, --kv-cache-dtype) row, every point
(max_model_len x available KV bytes) must agree on attention bytes per token, block size and
num_blocks exactly, and on "GPU KV cache size" and max concurrency within 0.5 %; a refusal
must be a refusal on both sides. Rows with a known cause are xfailed with it (strict), never
skipped. With KVFIT_VLLM_PYTHON set (marker `engine`), one config is re-recorded live and
must equal the checked-in record.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import engine_record_cases as cases
import pytest
import record_common

PYTHON = os.environ.get("KVFIT_VLLM_PYTHON")
ROWS = [r for r in cases.record_rows() if "error" not in r]


def _row_id(r: dict) -> str:
    return f"{Path(r['dir']).name}-tp{r['tp']}-{r['kv_cache_dtype']}"


def test_record_has_its_header_and_rows():
    head = json.loads(cases.RECORD.read_text().splitlines()[0])
    assert "vLLM 0.33.0" in head["recorded"] and head["available_bytes"] == [40 << 30, 70 << 30]
    assert len(ROWS) >= 50


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_kvfit_equals_vllm_record(row):
    record_common.judge_row(cases, row)


@pytest.mark.parametrize("row", cases.tp_refusals(), ids=_row_id)
def test_kvfit_refuses_the_tp_vllm_refuses(row):
    assert cases.kvfit_refuses_tp(row), row["error"][:200]


def test_llama_tp8_by_hand():
    """Llama-2-7B at TP 8, auto KV = the config's float16, 40 GiB: 32 layers x 16 tokens x (32 / 8) KV heads
    x 128 x 2 (K, V) x 2 B = 1,048,576 B per block -> 42,949,672,960 / 1,048,576 = 40,960
    blocks; 4,096 tokens need 256 blocks -> 160x, 655,360 tokens (vLLM's record says the same)."""
    p = next(p for p in cases.points() if p.dir.endswith("Llama-2-7b-hf") and p.tp == 8
             and p.kv == "auto" and p.avail == 40 << 30)
    assert (p.vllm["num_blocks"], p.vllm["kv_cache_tokens"], p.vllm["max_concurrency"]) == \
        (40960, 655360, 160.0)
    result = cases.compare(p)
    assert result["num_blocks"][0] == 40960 and result["concurrency"][0] == 160.0


def _as_recorded(live: dict, recorded: dict) -> dict:
    """The live row cut to the recorded fields: rows recorded before the probe also wrote
    `worker_groups` lack it; every field they have must be equal."""
    plans = [{k: v for k, v in p.items() if k in r} for p, r in
             zip(live.get("plans", []), recorded.get("plans", []), strict=False)]
    return {k: (plans if k == "plans" else v) for k, v in live.items() if k in recorded}


@pytest.mark.engine
@pytest.mark.skipif(not PYTHON, reason="KVFIT_VLLM_PYTHON not set (live vLLM rerun)")
@pytest.mark.parametrize(("d", "tp"), [
    ("tests/architectures/llama/configs/meta-llama--Llama-2-7b-hf", 8),
    ("tests/architectures/deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash", 1)])
def test_live_rerun_equals_record(d, tp):
    proc = subprocess.run([PYTHON, str(cases.ROOT / "tests" / "engine_probe" / "vllm_kv_probe.py"),
                           d, "--tp", str(tp), "--kv", "auto"], capture_output=True, text=True,
                          cwd=cases.ROOT, timeout=900, check=False)
    live = json.loads(proc.stdout.splitlines()[-1])
    recorded = next(r for r in cases.record_rows() if r["dir"] == d and r["tp"] == tp
                    and r["kv_cache_dtype"] == "auto")
    assert len(live.get("plans", [])) == len(recorded.get("plans", []))
    assert _as_recorded(live, recorded) == recorded


# The hand-checked models of issue 11's Must show (Kimi-K2.6, Nemotron-3-Super, gemma-2, ...)
# are in tests/test_vllm_record_nine.py, one place per model.
