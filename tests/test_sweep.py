"""--sweep: one plan per cell, each equal to the single plan of its values; bad specs exit 2.

Qwen/Qwen3-32B comes from kvfit's offline catalog (the config pinned in
tests/architectures/qwen3/configs/Qwen--Qwen3-32B: 64 layers, 8 KV heads, head_dim 128,
hidden 5120, intermediate 25600, vocab 151936, untied embeddings, bf16).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, run_json, validate

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
ROPE = '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}'
BASE = ("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--gpus", "8",
        "--rope-scaling", ROPE)
MUST = BASE + ("--sweep", "context=8k,32k,128k")


def _cell(report: dict, **values) -> dict:
    return next(c for c in report["sweep"]["cells"] if c["values"] == values)


def _per_layout(layouts) -> dict:
    return {x["id"]: (x["max_sequences"], x["fits"]) for x in layouts}


def test_the_32k_cell_is_the_single_32k_plan():
    code, sweep = run_json(*MUST)
    assert code == 0
    validate(sweep, SCHEMA)
    _, single = run_json(*BASE, "--context", "32k")
    cell = _cell(sweep, context="32k")
    assert _per_layout(cell["layouts"]) == _per_layout(single["layouts"])
    assert cell["recommended"] == single["recommended"]
    assert cell["fits"] is single["fits"] is True
    assert cell["context_tokens"] == 32768
    # the report around the sweep is the plan of its first cell (8k)
    assert sweep["context_tokens"] == 8192
    _, first = run_json(*BASE, "--context", "8k")
    assert _per_layout(sweep["layouts"]) == _per_layout(first["layouts"])


def test_a_cell_by_hand():
    # Weights (config estimate, the catalog has no file sizes): per layer
    #   q 5120x8192 + o 8192x5120 + k, v 5120x1024 each = 94,371,840
    #   MLP 3 x 5120 x 25600 = 393,216,000; norms 2 x 5120 + q/k norms 2 x 128 = 10,496
    #   = 487,598,336 x 64 layers = 31,206,293,504; embed + lm_head 2 x 151936 x 5120
    #   = 1,555,824,640; final norm 5,120 -> 32,762,123,264 params x 2 B = 65,524,246,528 B.
    # Budget: h100-80 visible 81,559 MiB = 85,520,809,984 B x 0.9 -> 76,968,728,985 B.
    # KV: 2 x 8 heads x 128 x 2 B = 4,096 B per token per layer; x 64 layers = 262,144 B/token.
    # 128k = 131,072 tokens: 34,359,738,368 B per sequence.
    #   TP=8: weights 65,524,246,528 / 8 = 8,190,530,816; state 34,359,738,368 / 8 (one KV
    #   head per rank) = 4,294,967,296; (76,968,728,985 - 8,190,530,816) // 4,294,967,296
    #   = 68,778,198,169 // 4,294,967,296 = 16 sequences (DP=1).
    #   TP=1: 76,968,728,985 - 65,524,246,528 = 11,444,482,457 < 34,359,738,368 -> 0.
    # 8k = 8,192 tokens at TP=2: weights 32,762,123,264; state 262,144 x 8,192 / 2
    #   = 1,073,741,824; (76,968,728,985 - 32,762,123,264) // 1,073,741,824 = 41 per replica
    #   x DP=4 = 164.
    _, r = run_json(*MUST)
    big = {x["id"]: x for x in _cell(r, context="128k")["layouts"]}
    assert big["tp8"]["max_sequences"] == 16 and big["tp8"]["fits"] is True
    assert big["tp1"]["max_sequences"] == 0 and big["tp1"]["fits"] is False
    small = {x["id"]: x for x in _cell(r, context="8k")["layouts"]}
    assert small["tp2"]["max_sequences"] == 164
    bars = big["tp8"]["memory_per_rank"]
    assert bars["weights_bytes"] == 8190530816
    assert bars["state_bytes"] == 16 * 4294967296
    # reserve: 85,520,809,984 - 76,968,728,985 = 8,552,080,999 outside the 0.9 budget
    assert bars["reserve_bytes"] == 8552080999
    assert bars["total_bytes"] == 85520809984 == sum(
        bars[f"{k}_bytes"] for k in ("weights", "state", "reserve", "engine_overheads", "free"))


def test_text_table_rows_match_the_plans():
    code, out, err = run_cli(*MUST)
    assert code == 0, err
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert set(rows) >= {"context", "8k", "32k", "128k"}
    _, single = run_json(*BASE, "--context", "32k")
    cells = rows["32k"].split()
    for x in single["layouts"]:
        i = cells.index("fits" if x["fits"] else "no", 0)
        assert f"{x['max_sequences']:,}" in cells  # every layout's count is on the 32k row
        assert i > 0
    assert rows["32k"].rstrip().endswith(f"{single['recommended']['label']} (fits)")
    assert "16 fits" in rows["128k"] and "0 no" in rows["128k"]
    assert "Exit 0" in out


def test_engine_cells_are_the_engine_plans():
    code, r = run_json(*BASE, "--engine", "vllm", "--sweep", "context=8k,32k")
    assert code == 0
    validate(r, SCHEMA)
    _, single = run_json(*BASE, "--engine", "vllm", "--context", "32k")
    cell = _cell(r, context="32k")
    assert _per_layout(cell["layouts"]) == _per_layout(single["layouts"])
    assert cell["recommended"] == single["recommended"]
    bars = {x["id"]: x["memory_per_rank"] for x in cell["layouts"]}
    mem = next(x for x in single["layouts"] if x["id"] == "tp8")["engine"]["memory"]
    assert bars["tp8"]["state_bytes"] == mem["available_kv_bytes"]["value"]
    assert bars["tp8"]["total_bytes"] == mem["total_bytes"]["value"]
    assert bars["tp8"]["engine_overheads_bytes"] > 0


def test_grid_users_by_kv_dtype_and_exit_1_when_a_cell_misses():
    # at 32k TP=8 holds 64 bf16 sequences (68,778,198,169 // 1,073,741,824) and, with fp8
    # (2,048 B per token per layer: half the state), 68,778,198,169 // 536,870,912 = 128
    code, r = run_json(*BASE, "--context", "32k", "--sweep", "users=64,65",
                       "--sweep", "kv-dtype=bf16,fp8")
    assert code == 1
    validate(r, SCHEMA)
    key = [(c["values"]["users"], c["values"]["kv-dtype"]) for c in r["sweep"]["cells"]]
    assert key == [("64", "bf16"), ("64", "fp8"), ("65", "bf16"), ("65", "fp8")]
    verdicts = dict(zip(key, (c["fits"] for c in r["sweep"]["cells"]), strict=True))
    assert verdicts == {("64", "bf16"): True, ("64", "fp8"): True, ("65", "bf16"): False,
                        ("65", "fp8"): True}
    fp8 = _per_layout(_cell(r, users="65", **{"kv-dtype": "fp8"})["layouts"])
    assert fp8["tp8"] == (128, True)
    assert r["sweep"]["exit_code"] == 1


def test_state_only_sweep_exits_5():
    code, out, _ = run_cli("Qwen/Qwen3-32B", "--offline", "--sweep", "context=8k,32k")
    assert code == 5
    assert "Exit 5" in out


def test_gpus_axis_changes_the_layouts():
    code, r = run_json("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--context",
                       "32k", "--sweep", "gpus=1,2")
    assert code == 0
    assert [c["gpus"] for c in r["sweep"]["cells"]] == [1, 2]
    assert [len(c["layouts"]) for c in r["sweep"]["cells"]] == [1, 2]


def test_a_gpus_sweep_heads_each_cell_by_its_own_layout():
    """Issue 27: the same layout id is TP=1 x DP=1 on 1 GPU and TP=1 x DP=8 on 8; a column
    once headed 'TP=1 x DP=1' held TP=1 x DP=8's answer. Qwen3-32B at 32k, bf16 KV: 64 layers
    x 2 x 8 KV heads x 128 x 2 B = 8 GiB per sequence; the H100 budget is 0.9 x 81,559 MiB =
    71.683 GiB, so with 61 GiB of weights TP=1 holds floor(10.683 / 8) = 1 per replica (x DP)
    and TP=2 floor((71.683 - 30.5) / 4) = 10 per group."""
    code, out, _ = run_cli("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--context",
                           "32k", "--weight-gib", "61", "--sweep", "gpus=1,2,8")
    assert code == 0
    head, *rows = [line.split() for line in out.splitlines() if line.startswith("  ")][:4]
    assert head.count("gpus") == 1                        # the swept axis, printed once
    assert "tp1" in head and "tp2" in head and "TP=1" not in " ".join(head)
    table = "\n".join(out.splitlines())
    assert "TP=1 x DP=1: 1 fits" in table and "TP=1 x DP=8: 8 fits" in table
    assert "TP=2 x DP=1: 10 fits" in table and "TP=2 x DP=4: 40 fits" in table
    assert [r[0] for r in rows] == ["1", "2", "8"]


def test_the_checkpoint_is_resolved_once(monkeypatch):
    from kvfit.planner import build

    calls = []
    real = build.load_metadata
    monkeypatch.setattr(build, "load_metadata", lambda req: calls.append(req) or real(req))
    code, _ = run_json(*MUST)
    assert code == 0 and len(calls) == 1


@pytest.mark.parametrize("args, says", [
    (("--sweep", "ctx=8k"), "unknown axis 'ctx' (did you mean context?)"),
    (("--sweep", "context="), "empty value"),
    (("--sweep", "context=8k,,32k"), "empty value"),
    (("--sweep", "context"), "is not AXIS=v1,v2"),
    (("--sweep", "users=0,2"), "'0' is not a whole number"),
    (("--sweep", "users=two"), "'two' is not a whole number"),
    (("--sweep", "gpus=1.5"), "'1.5' is not a whole number"),
    (("--sweep", "context=eight"), "is not a token count"),
    (("--sweep", "context=32k,32768"), "'32768' repeats '32k'"),
    (("--sweep", "kv-dtype=bf16,bfloat16"), "'bfloat16' repeats 'bf16'"),
    (("--sweep", "kv-dtype=fp4"), "fp4 is ambiguous"),
    (("--sweep", "context=8k", "--sweep", "context=32k"), "--sweep context is given twice"),
    (("--sweep", "context=8k", "--context", "32k"), "--sweep context and --context"),
    (("--sweep", "context=8k", "--max-model-len", "4096"), "--sweep context and --max-model-len"),
    (("--sweep", "users=1", "--sweep", "gpus=8", "--sweep", "context=8k"), "at most 2"),
    (("--sweep", "users=1,2", "--min-gpus"), "--sweep with --min-gpus"),
    (("--sweep", "context=1m"), "sweep cell context=1m: context 1,048,576 exceeds"),
])
def test_bad_sweeps_exit_2(args, says):
    code, out, err = run_cli(*BASE, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("kvfit: usage error:") and says in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_sweep_with_json_prints_the_error_object():
    code, r = run_json(*BASE, "--sweep", "bogus=1")
    assert code == 2 and "unknown axis" in r["error"]["message"]


def test_a_cell_beyond_the_declared_maximum_is_labelled_hypothetical():
    args = ("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--gpus", "8",
            "--allow-context-overflow", "--sweep", "context=32k,64k")
    code, r = run_json(*args)
    validate(r, SCHEMA)
    assert [c["hypothetical"] for c in r["sweep"]["cells"]] == [False, True]
    # 65,536 > 40,960 (config: max_position_embeddings); TP=8: 68,778,198,169 // 2 GiB = 32
    assert _per_layout(_cell(r, context="64k")["layouts"])["tp8"] == (32, True)
    _, out, _ = run_cli(*args)
    assert "65,536*" in out and "* HYPOTHETICAL" in out


def test_the_help_sweep_examples_run(tmp_path, monkeypatch):
    import re
    import shlex

    from kvfit.cli.plan_args import EPILOG

    monkeypatch.chdir(tmp_path)             # the chart example writes cap.png here
    joined = EPILOG.replace("\\\n", " ")
    examples = [re.sub(r"\s+\(.*\)$", "", line.strip()) for line in joined.splitlines()
                if "--sweep" in line and line.strip().startswith("kvfit ")]
    assert len(examples) == 2
    codes = []
    for ex in examples:
        code, out, err = run_cli(*shlex.split(ex)[1:])
        assert out.startswith("kvfit sweep:"), err
        codes.append(code)
    assert codes == [0, 1]                  # 128 bf16 users at 32k miss (TP=8 holds 64)
    assert (tmp_path / "cap.png").stat().st_size > 0


def test_sweep_text_snapshot(snap_text):
    code, out, _ = run_cli(*BASE, "--engine", "vllm", "--sweep", "context=8k,32k,128k",
                           "--sweep", "kv-dtype=bf16,fp8", "--concurrent-users", "16")
    # 16 users at 128k bf16 take TP=8's whole static bound (16, test_a_cell_by_hand); vLLM's
    # activation, non-torch and CUDA-graph memory leave less, so some cell misses
    assert code == 1
    assert out == snap_text
