"""`--engine sglang --pp N` (#11 rule 7): SGLang's layer split, its pipeline memory fraction
and one pool per stage, the smallest binding, against SGLang 0.5.23's own code.

The record tests/engine_probe/sglang-0.5.23-pp.jsonl was made by
tests/engine_probe/sglang_pp_probe.py under SGLang 0.5.23 (its header says how): per (config,
TP, PP) the resolved mem_fraction_static, every PP rank's layers (get_pp_indices), cell bytes
and own max_total_num_tokens for a stated 40 GiB budget at context 4096. kvfit answers with the
stage machinery every plan uses (kvfit.engines.pp_split) and the SGLang engine model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sglang_record_cases as cases

from kvfit.engines import predict_inputs
from kvfit.engines.common import StageInputs
from kvfit.engines.pp_split import partition, stage_components
from kvfit.model.base import to_plain

from conftest import run_json

RECORD = Path(__file__).parent / "engine_probe" / "sglang-0.5.23-pp.jsonl"
LINES = RECORD.read_text().splitlines()
HEADER = json.loads(LINES[0])
ROWS = [json.loads(x) for x in LINES[1:]]
LLAMA = "tests/architectures/llama/configs/meta-llama--Llama-3.1-8B"


def _id(r: dict) -> str:
    return f"{Path(r['dir']).name}-tp{r['tp']}-pp{r['pp']}"


def _predict(r: dict, mem_fraction: float | None) -> dict:
    """kvfit's SGLang section (JSON) for the row's TP x PP layout; every stage's weights stated so its
    budget is the record's 40 GiB (SGLang's fraction stated unless None)."""
    ctx = HEADER["context_len"]
    base = cases._inputs(r["dir"], r["tp"], "auto", ctx, 0)
    comps = base.components
    parts = partition(r["num_hidden_layers"], r["pp"], split="spread_last")
    free = int(HEADER["free_before_gib"] * cases.GIB)
    weights = int(r["mem_fraction_static"] * free) - HEADER["available_bytes"]
    stages, lo = [], 0
    for i, n in enumerate(parts):
        last = i == len(parts) - 1
        stages.append(StageInputs(components=tuple(stage_components(
            comps, lo, 1 << 62 if last else lo + n, last)), weights_bytes_per_rank=weights,
            last=last, layers=(lo, lo + n)))
        lo += n
    base.stages = stages
    flags = {"kv_cache_dtype": "auto"}
    if mem_fraction is not None:
        flags["mem_fraction_static"] = mem_fraction
    return to_plain(predict_inputs("sglang", cases.VERSION, flags, base))


@pytest.mark.parametrize("r", ROWS, ids=_id)
def test_split_equals_get_pp_indices(r):
    """SGLang 0.5.23 gives the last n % pp stages one more layer (distributed/utils.py:137-148):
    32 layers over 3 -> [10, 11, 11] (vLLM's split would be [11, 11, 10]); 61 over 2 -> [30, 31]."""
    assert partition(r["num_hidden_layers"], r["pp"], split="spread_last") == \
        [b - a for a, b in (x["layers"] for x in r["ranks"])]


@pytest.mark.parametrize("r", ROWS, ids=_id)
def test_pipeline_fraction_equals_sglang(r):
    """The default fraction under PP: tp x pp / 8 x 1,024 MiB of slack and no prefill graph.
    Llama-3.1-8B TP 1 x PP 2: 512 + 1.5 x 8,192 + 2 / 8 x 1,024 + 2 x 256 = 13,568 MiB ->
    round((81,559 - 13,568) / 81,559, 3) = 0.834; DeepSeek-V3 TP 8 x PP 2 (MLA, so no 1,536 MiB
    prefill graph): 512 + 12,288 + 2,048 + 2 x 512 = 15,872 -> 0.805."""
    assert r["prefill_graph_backend"] == "disabled"
    assert _predict(r, None)["mem_fraction_static"]["value"] == r["mem_fraction_static"]


@pytest.mark.parametrize("r", ROWS, ids=_id)
def test_stage_pools_equal_sglang_and_the_smallest_binds(r):
    """Per stage: the cell of its own layers and its own tokens; max_total_num_tokens is the
    minimum over the ranks (kv_cache_configurator.py:3107-3115). Llama-3.1-8B PP 3: stage 0
    holds 10 x 8 x 256 x 2 = 40,960 B per token -> 40 GiB / 40,960 = 1,048,576 tokens, stages
    1-2 hold 11 layers, 45,056 B -> 953,250: they bind."""
    e = _predict(r, r["mem_fraction_static"])
    table = e["pipeline_stages"]["value"]
    assert [s["full_bytes_per_token"] for s in table] == [x["cell_bytes"] for x in r["ranks"]]
    for s, x in zip(table, r["ranks"], strict=True):
        assert abs(s["max_total_num_tokens"] - x["max_total_num_tokens"]) <= \
            cases.TOLERANCE * x["max_total_num_tokens"]
    low = min(x["max_total_num_tokens"] for x in r["ranks"])
    assert abs(e["max_total_num_tokens"]["value"] - low) <= cases.TOLERANCE * low
    assert e["max_running_requests"]["value"] == min(x["max_running_requests"] for x in r["ranks"])
    if "max_mamba_cache_size" in r["ranks"][0]:
        # Qwen3-Next: 36 Gated-DeltaNet layers, 18 per stage; every rank prices a slot at the
        # largest stage's share, 18 / 36 of 38,633,472 B (kv_cache_configurator.py:3229-3260)
        assert e["cells"]["recurrent_bytes_per_slot"]["value"] == \
            r["ranks"][0]["mamba_cache_per_req"] * 18 // 36
        assert e["mamba_cache_size"]["value"] == r["ranks"][0]["max_mamba_cache_size"]


def test_cli_pp_under_sglang_gives_per_stage_pools_and_the_launch_flag():
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "3", "--context",
                       "8k", "--pp", "3", "--weight-gib", "16", "--engine", "sglang@0.5.23",
                       "--print-command", "sglang")
    assert code == 0
    lay = next(x for x in r["layouts"] if x["id"] == "tp1pp3")
    assert [s["layers"] for s in lay["pipeline"]["stages"]] == [[0, 10], [10, 21], [21, 32]]
    assert "distributed/utils.py:110-150" in lay["pipeline"]["split_rule"]
    e = lay["engine"]
    assert e["mem_fraction_static"]["value"] == 0.832 == ROWS[2]["mem_fraction_static"]
    assert e["pipeline_stages"]["binding_stage"] == lay["pipeline"]["binding_stage"]
    assert e["max_total_num_tokens"]["value"] == min(
        s["max_total_num_tokens"] for s in e["pipeline_stages"]["value"])
    assert "--tp-size 1 --pp-size 3" in r["engine_command"]["launch"]


def test_cli_sglang_layer_partition_is_its_own_variable():
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "2", "--context",
                       "8k", "--pp", "2", "--pp-layer-partition", "12,20", "--weight-gib", "16",
                       "--engine", "sglang@0.5.23", "--print-command", "sglang")
    assert code == 0
    assert r["engine_command"]["launch"].startswith("SGLANG_PP_LAYER_PARTITION=12,20 ")
    assert "SGLang SGLANG_PP_LAYER_PARTITION" in r["layouts"][0]["pipeline"]["split_rule"]
