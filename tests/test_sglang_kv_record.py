"""kvfit's `--engine sglang` pools equal SGLang 0.5.23's own KV-pool sizing (issue 11).

The expected numbers are SGLang's, recorded from its own server-args resolution,
KVCacheConfigurator and pool configurator by tests/engine_probe/record_sglang_kv.py into
tests/engine_probe/sglang-0.5.23-kv.jsonl (the header line says how). Per recorded (config,
TP, --kv-cache-dtype) row, every point (context x KV budget) must agree on the default
mem_fraction_static, the per-token cell bytes, the Mamba state per request and pool size,
max_total_num_tokens (within 0.5 %) and max_running_requests (see
tests/sglang_record_cases.py). Rows with a known cause are xfailed with it (strict), never
skipped. With KVFIT_SGLANG_PYTHON set (marker `engine`), one config is re-recorded live and
must equal the checked-in record.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import record_common
import sglang_record_cases as cases

PYTHON = os.environ.get("KVFIT_SGLANG_PYTHON")
ROWS = cases.built_rows()


def _row_id(r: dict) -> str:
    return f"{Path(r['dir']).name}-tp{r['tp']}-{r['kv_cache_dtype']}"


def test_record_has_its_header_and_rows():
    head = cases.header()
    assert "SGLang 0.5.23" in head["recorded"] and head["available_bytes"] == [40 << 30, 70 << 30]
    assert len(ROWS) >= 50


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_kvfit_equals_sglang_record(row):
    record_common.judge_row(cases, row)


def _point(name: str, tp: int, kv: str = "auto", avail: int = 40 << 30, context: int | None = None):
    return next(p for p in cases.points() if p.dir.endswith(name) and p.tp == tp and p.kv == kv
                and p.avail == avail and (context is None or p.context == context))


def test_llama_tp8_fp8_by_hand():
    """Llama-3.1-8B at TP 8 with an fp8_e4m3 cache and a 40 GiB budget: 32 layers x (8 / 8)
    KV heads x (128 + 128) x 1 B = 8,192 B per token (pool_configurator.py:525-532) ->
    42,949,672,960 // 8,192 = 5,242,880 tokens (page 1); running requests
    max(min(int(5,242,880 / 131,072 x 512), 4096), 2048) = 4,096 (kv_cache_configurator.py:
    3119-3131), below tokens / 2. SGLang's record says the same."""
    p = _point("meta-llama--Llama-3.1-8B", 8, "fp8_e4m3", context=131072)
    assert p.row["cell_bytes"] == 32 * 1 * 256 * 1
    assert (p.sglang["max_total_num_tokens"], p.sglang["max_running_requests"]) == (5242880, 4096)
    r = cases.compare(p)
    assert (r["tokens"][0], r["running"][0]) == (5242880, 4096)


@pytest.mark.engine
@pytest.mark.skipif(not PYTHON, reason="KVFIT_SGLANG_PYTHON not set (live SGLang rerun)")
def test_live_rerun_equals_record():
    d = "tests/architectures/llama/configs/meta-llama--Llama-3.1-8B"
    proc = subprocess.run([PYTHON, str(cases.ROOT / "tests" / "engine_probe" / "sglang_kv_probe.py"),
                           d, "--tp", "8", "--kv", "fp8_e4m3"], capture_output=True, text=True,
                          cwd=cases.ROOT, timeout=900, check=False)
    live = json.loads(proc.stdout.splitlines()[-1])
    recorded = next(r for r in cases.record_rows() if r["dir"] == d and r["tp"] == 8
                    and r["kv_cache_dtype"] == "fp8_e4m3")
    assert live == recorded


def test_qwen3_next_mamba_pool_by_hand():
    """Qwen3-Next-80B-A3B at TP 1, bf16 cache, 40 GiB budget (kv_cache_configurator.py:3229-3409).
    Mamba state per request: 36 GDN layers x (32 value heads x 128 x 128 x 4 B fp32 SSM +
    (2 x 16 x 128 + 32 x 128) conv channels x (4 - 1) x 2 B) = 36 x 2,146,304 = 77,266,944 B.
    Pool: budget x 0.9 / 1.9 = 20,344,581,928 B -> (that - 77,266,944) // 77,266,944 = 262 slots;
    KV gets 42,949,672,960 - 263 x 77,266,944 = 22,628,466,688 B; a token costs 12 full layers
    x 2 KV heads x (256 + 256) x 2 B = 24,576 B -> 920,754 tokens; running requests
    min(2,048, tokens / 2) capped by 262 slots // 5 per request = 52 (kv_cache_configurator.py:
    3062-3088, 3119-3172)."""
    p = _point("Qwen--Qwen3-Next-80B-A3B-Thinking", 1, context=262144)
    assert (p.row["cell_bytes"], p.row["mamba_cache_per_req"]) == (24576, 77266944)
    assert (p.sglang["max_mamba_cache_size"], p.sglang["max_total_num_tokens"],
            p.sglang["max_running_requests"]) == (262, 920754, 52)
    r = cases.compare(p)
    assert (r["mamba_slots"][0], r["tokens"][0], r["running"][0]) == (262, 920754, 52)


# (config dir, TP, --kv-cache-dtype, the rule, full-pool bytes per token on one rank by hand)
CELLS = [
    # DSA under auto on SM90 is bfloat16 whatever the checkpoint says (arg_groups/overrides.py:
    # 490-546): 61 layers x ((512 + 64) x 2 B latent + (128 + 128 / 128 x 4) B fp8 index key
    # with its scale) (pool_configurator.py:340-420, 560-635), replicated over TP.
    ("deepseek-ai--DeepSeek-V3.2", 1, "auto", 61 * (576 * 2 + 132)),
    ("deepseek-ai--DeepSeek-V3.2", 8, "auto", 61 * (576 * 2 + 132)),
    # fp8_e4m3 DSA rows: 512 fp8 + 512 / 128 x 4 B scales + 64 x 2 B bf16 rope
    # (kv_cache_configurator.py:3412-3475), plus the same 132 B index key.
    ("deepseek-ai--DeepSeek-V3.2", 8, "fp8_e4m3", 61 * (512 + 16 + 128 + 132)),
    # Gemma-2 float32 config served in 16 bits; hybrid SWA switched off for Gemma-2
    # (arg_groups/model_overrides/gemma2_gemma3.py:14-28), so all 42 layers are full:
    # 42 x 8 KV heads x (256 + 256) x 2 B; TP 8 keeps 1 head.
    ("google--gemma-2-9b", 1, "auto", 42 * 8 * 512 * 2),
    ("google--gemma-2-9b", 8, "auto", 42 * 1 * 512 * 2),
]


@pytest.mark.parametrize(("name", "tp", "kv", "cell"), CELLS, ids=[f"{c[0]}-tp{c[1]}-{c[2]}" for c in CELLS])
def test_cells_by_hand(name, tp, kv, cell):
    p = _point(name, tp, kv)
    assert p.row["cell_bytes"] == cell                       # SGLang's own configurator agrees
    r = cases.compare(p)
    assert r["cell_bytes"] == (cell, cell, True)
    assert r["tokens"][2] and r["running"][2], r


def test_dsa_tokens_are_whole_pages_by_hand():
    """DeepSeek-V3.2 on the dsa backend uses 64-token pages (recorded page_size 64): 40 GiB /
    78,324 B = 548,359 tokens, floored to whole pages = 8,568 x 64 = 548,352
    (pool_configurator.py:637-647)."""
    p = _point("deepseek-ai--DeepSeek-V3.2", 1, "auto")
    assert p.row["resolved"]["page_size"] == 64
    assert p.sglang["max_total_num_tokens"] == (40 << 30) // 78324 // 64 * 64 == 548352
    assert cases.compare(p)["tokens"][0] == 548352
