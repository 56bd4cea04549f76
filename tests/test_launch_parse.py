"""Every vLLM command kvfit prints is parsed by vLLM 0.33's own `vllm serve` parser, and each
parsed value is the plan's.

The record tests/engine_probe/vllm-0.33.0-commands.jsonl holds vLLM's parse of the commands
(tests/engine_probe/record_vllm_commands.py made it with vllm_args_probe.py in a vLLM 0.33.0
environment). CI checks that kvfit still prints exactly the recorded command for each plan, and
that vLLM's parse of it carries the plan's layout, utilization, KV dtype, length, revision and
MTP. With KVFIT_VLLM_PYTHON set, the commands are parsed again live (marker `engine`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_json

HERE = Path(__file__).parent / "engine_probe"
RECORD = [json.loads(line) for line in (HERE / "vllm-0.33.0-commands.jsonl").read_text()
          .splitlines() if line.strip()]
PYTHON = os.environ.get("KVFIT_VLLM_PYTHON")


def _plan(argv: list[str]) -> dict:
    code, r = run_json(*argv, "--offline", "--print-command", "vllm")
    assert code in (0, 1)
    return r


@pytest.mark.parametrize("row", RECORD, ids=[f"{r['plan'][0]}-{i}" for i, r in
                                             enumerate(RECORD)])
def test_recorded_vllm_parse_matches_the_plan(row):
    r = _plan(row["plan"])
    cmd = r["engine_command"]
    printed = [h["launch"] for h in cmd["hosts"]] or [cmd["launch"]]
    assert row["command"] == printed[row["host"]]     # the record is of today's command
    assert row["ok"], row["error"]
    a, lay = row["args"], next(x for x in r["layouts"] if x["id"] == cmd["layout_id"])
    if lay["parallelism"] == "vllm-dp-ep":
        assert a["enable_expert_parallel"] is True
        assert a["tensor_parallel_size"] == lay["attention_tp"]
        assert a["data_parallel_size"] == lay["attention_dp"] * lay["dp"]
    else:
        assert a["enable_expert_parallel"] is False
        assert (a["tensor_parallel_size"], a["data_parallel_size"]) == (lay["tp"], lay["dp"])
    assert a["gpu_memory_utilization"] == r["hardware"]["utilization"]
    assert a["max_model_len"] == r["context_tokens"]
    assert a["model"] == r["model"]["source"] and a["revision"] == r["model"]["revision"]
    assert a["kv_cache_dtype"] == {"bf16": "auto", "fp8": "fp8"}.get(r["kv_dtype"], "auto") \
        or a["kv_cache_dtype"] == r["kv_dtype"]
    hosts = len(cmd["hosts"]) or 1
    assert (a["nnodes"], a["node_rank"], a["headless"]) == (hosts, row["host"], row["host"] > 0)
    if "--mtp" in row["plan"]:
        assert a["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 1}
    else:
        assert a["speculative_config"] is None
    want = "fp8" if "--index-dtype" in row["plan"] else "auto"
    assert a["attention_config"]["indexer_kv_dtype"] == want
    assert a["hf_overrides"] == _overrides(row["plan"], r)


def _overrides(plan: list[str], r: dict) -> dict:
    """The config override a stated RoPE scaling must reach the engine as: the rope_scaling
    itself, and max_position_embeddings = factor x original (4 x 32,768 = 131,072 for the
    recorded Qwen3-32B plan) so the engine's own maximum admits the planned length."""
    if "--rope-scaling" not in plan:
        return {}
    rope = json.loads(plan[plan.index("--rope-scaling") + 1])
    assert r["max_context_tokens"] == r["context_tokens"] == 4 * 32768
    return {"rope_scaling": rope, "max_position_embeddings": 4 * 32768}


def test_record_covers_each_layout_kind():
    kinds = {(tuple(r["plan"]).count("vllm-dp-ep") > 0, r["host"] > 0) for r in RECORD}
    assert kinds == {(True, False), (True, True), (False, False), (False, True)}


@pytest.mark.engine
@pytest.mark.skipif(not PYTHON, reason="set KVFIT_VLLM_PYTHON to a Python with vLLM 0.33")
def test_live_vllm_parse_equals_the_record():
    assert _live("record_vllm_commands.py") == RECORD


def _live(script: str) -> list[dict]:
    """Re-record with the engine's own parser now (the recorder reads the env var)."""
    out = subprocess.run([sys.executable, str(HERE / script)], capture_output=True, text=True,
                         check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


SG_RECORD = [json.loads(line) for line in (HERE / "sglang-0.5.23-commands.jsonl").read_text()
             .splitlines() if line.strip()]
SG_PYTHON = os.environ.get("KVFIT_SGLANG_PYTHON")


@pytest.mark.parametrize("row", SG_RECORD, ids=[f"{r['plan'][0]}-{i}" for i, r in
                                                enumerate(SG_RECORD)])
def test_recorded_sglang_parse_matches_the_plan(row):
    code, r = run_json(*row["plan"], "--offline", "--print-command", "sglang")
    cmd = r["engine_command"]
    printed = [h["launch"] for h in cmd["hosts"]] or [cmd["launch"]]
    assert row["command"] == printed[row["host"]] and row["ok"], row["error"]
    a, lay = row["args"], next(x for x in r["layouts"] if x["id"] == cmd["layout_id"])
    if lay["parallelism"] == "sglang-dpa":
        assert (a["tp_size"], a["attn_dp_size"], a["ep_size"], a["dp_size"]) == (
            lay["tp"], lay["attention_dp"], lay["ep"], 1)
    else:
        # replicas over hosts are one server per host; on one host --dp-size is the replicas
        hosts = len(cmd["hosts"]) or 1
        assert (a["tp_size"], a["dp_size"] * hosts) == (lay["tp"], lay["dp"])
    assert a["context_length"] == r["context_tokens"] and a["model_path"] == r["model"]["source"]
    assert a["revision"] == r["model"]["revision"]
    e = lay["engine"]["mem_fraction_static"]
    if "--utilization" in row["plan"]:
        assert a["mem_fraction_static"] == e["value"] and "from_utilization" in e
    else:
        assert a["mem_fraction_static"] is None      # SGLang's own default, as predicted
    if "--mtp" in row["plan"]:
        assert (a["speculative_algorithm"], a["speculative_num_steps"],
                a["speculative_num_draft_tokens"]) == ("EAGLE", 1, 2)
    assert json.loads(a["json_model_override_args"]) == _overrides(row["plan"], r)


@pytest.mark.engine
@pytest.mark.skipif(not SG_PYTHON, reason="set KVFIT_SGLANG_PYTHON to a Python with SGLang 0.5.23")
def test_live_sglang_parse_equals_the_record():
    assert _live("record_sglang_commands.py") == SG_RECORD
