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

from conftest import run_json

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


def _point(name: str, tp: int, kv: str = "auto") -> cases.Point:
    return next(p for p in cases.points() if p.dir.endswith(name) and p.tp == tp and p.kv == kv
                and p.length == 4096 and p.avail == 40 << 30)


# (config dir, TP, the rule, attention bytes per token on one rank worked by hand)
HAND = [
    # config.json quantization_config (quant_method modelopt) kv_cache_scheme {dynamic: false,
    # num_bits: 8, type: float} -> fp8 although hf_quant_config.json also ships (vLLM
    # utils/torch_utils.py:443-516): 61 MLA layers x (512 + 64) latent x 1 B, replicated.
    ("nvidia--Kimi-K2.6-NVFP4", 1, "fp8", 61 * 576),
    ("nvidia--Kimi-K2.6-NVFP4", 8, "fp8", 61 * 576),
    # the FP8 kv_cache_quant_algo is only in hf_quant_config.json (no quant_method): not
    # applied, bf16: 8 attention layers x 2 KV heads x 128 x 2 (K, V) x 2 B; TP 8 keeps 1 head.
    ("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 1, "bf16", 8 * 2 * 128 * 2 * 2),
    ("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 8, "bf16", 8 * 1 * 128 * 2 * 2),
    # torch_dtype float32 served in 16 bits (--dtype auto): 42 layers x 8 KV heads x 256 x 2 x 2 B.
    ("google--gemma-2-9b", 1, "16-bit", 42 * 8 * 256 * 2 * 2),
    ("google--gemma-2-9b", 8, "16-bit", 42 * 1 * 256 * 2 * 2),
]


@pytest.mark.parametrize(("name", "tp", "kv", "token_bytes"), HAND,
                         ids=[f"{h[0]}-tp{h[1]}" for h in HAND])
def test_auto_kv_rule_by_hand(name, tp, kv, token_bytes):
    p = _point(name, tp)
    assert cases.vllm_token_bytes(p.row) == token_bytes          # vLLM's own specs agree
    assert cases.kvfit_token_bytes(p) == token_bytes
    result = cases.compare(p)
    assert not cases.misses(result), result
    want = {"fp8": {"fp8", "fp8_e4m3"}, "bf16": {"bf16"}, "16-bit": {"bf16", "fp16"}}[kv]
    code, report = run_json(cases.ROOT / p.dir, "--hardware", "h100-80", "--gpus", str(tp),
                            "--tp", str(tp), "--context", "4096")
    assert report["dtypes"]["kv"]["name"] in want    # the planner resolves auto the same way


def test_kimi_k26_blocks_by_hand():
    """fp8 MLA on SM90: 64-token blocks (the record's block_size); a block is 61 layers x 64 x
    576 B = 2,248,704 B -> 42,949,672,960 // 2,248,704 = 19,099 blocks; 4,096 tokens = 64 blocks
    per request -> 298.42x and int(19,099 / 64 x 4,096) = 1,222,336 tokens."""
    p = _point("nvidia--Kimi-K2.6-NVFP4", 1)
    assert (p.vllm["block_size"], p.vllm["num_blocks"], p.vllm["kv_cache_tokens"]) == \
        (64, 19099, 1222336)
    r = cases.compare(p)
    assert (r["block_size"][0], r["num_blocks"][0], r["tokens"][0]) == (64, 19099, 1222336)
