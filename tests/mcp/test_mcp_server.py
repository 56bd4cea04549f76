"""`kvfit mcp` driven by the MCP SDK's own client over stdio: the server (`kvfit mcp
--offline`, never the Hub) is spawned once for this module and every question is asked in that
one session. Each answer is compared with the CLI's --json and the Python API for the same
question; the numbers that matter are derived by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import mcp_stdio  # noqa: E402

import kvfit  # noqa: E402
from kvfit.mcp_server.tools import NOT_OFFERED  # noqa: E402

from conftest import run_cli  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
LOG = TESTS / "fixtures" / "engine_logs" / "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
LLAMA = TESTS / "fixtures" / "model-configs" / "meta-llama--Llama-3.1-8B"
TOOLS = {"plan", "fit", "sweep", "explain_log", "list_hardware", "list_systems",
         "catalog_search"}

# Qwen3-32B (catalog) on 8 x H100 at 32k with the weights stated as 64 GiB:
# KV per token = 2 (K, V) x 8 KV heads x 128 head_dim x 2 B (bf16) x 64 layers = 262,144 B,
# so 8 GiB per 32,768-token sequence and 1 GiB per rank at TP=8 (8 heads over 8 ranks);
# budget per GPU = 81,559 MiB visible x 0.9 = 71.68 GiB; weights per rank 64 / 8 = 8 GiB;
# (71.68 - 8) / 1 = 63.68 -> 63 sequences on TP=8 x DP=1.
PLAN = {"model": "Qwen/Qwen3-32B", "hardware": "h100-80", "gpus": 8, "context": "32k",
        "weight_gib": 64}
PLAN_ARGV = ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
             "--weight-gib", "64", "--offline"]
# The same checkpoint on one H100 with the weights at 64 GiB: 71.68 - 64 = 7.68 GiB left,
# 8 GiB per sequence at TP=1 -> 0 sequences: it does not fit.
TIGHT = {"model": "Qwen/Qwen3-32B", "hardware": "h100-80", "gpus": 1, "context": "32k",
         "weight_gib": 64}
FIT = {"hardware": "rtx-5090-32", "gpus": 2, "context": "32k", "users": 4,
       "family": ["qwen3"]}
FIT_ARGV = ["fit", "--hardware", "rtx-5090-32", "--gpus", "2", "--context", "32k", "--users",
            "4", "--family", "qwen3"]
SWEEP = {"model": "Qwen/Qwen3-32B", "hardware": "h100-80", "gpus": 2,
         "sweep": ["context=8k,32k"], "weight_gib": 64}
SWEEP_ARGV = ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "2", "--weight-gib", "64",
              "--sweep", "context=8k,32k", "--offline"]

# --tune (issue 24): DeepSeek-V4-Flash (catalog) on 8 x H100 at 32k under vLLM, the case of
# tests/test_tune.py (whose figures are derived by hand from vLLM's block rules)
TUNE = {"model": "deepseek-ai/DeepSeek-V4-Flash", "hardware": "h100-80", "gpus": 8,
        "context": "32k", "engine": "vllm", "tune": True}
TUNE_ARGV = ["deepseek-ai/DeepSeek-V4-Flash", "--hardware", "h100-80", "--gpus", "8",
             "--context", "32k", "--engine", "vllm", "--tune", "--offline"]


@pytest.fixture(scope="module")
def mcp(tmp_path_factory):
    with mcp_stdio.session(tmp_path_factory.mktemp("mcp")) as session:
        yield session


def _json(*argv: str):
    code, out, err = run_cli(*argv, "--json")
    assert code in (0, 1), err
    return json.loads(out)


def _clean(mcp) -> None:
    err = mcp.stderr()
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]


def test_the_sdk_client_lists_the_tools_with_their_schemas(mcp):
    tools = mcp.tools()
    assert set(tools) == TOOLS
    plan = tools["plan"].input_schema
    assert plan["type"] == "object" and plan["required"] == ["model"]
    # plan's and sweep's options are the API's: the same names and the same schema for each
    # (less the installed-engine check and presets: they start programs)
    options = kvfit.plan_options_schema()["properties"]
    for name, schema in options.items():
        if name in NOT_OFFERED:
            assert name not in plan["properties"], name
            continue
        assert plan["properties"][name] == schema, name
        assert tools["sweep"].input_schema["properties"][name] == schema, name
    assert set(plan["properties"]) == {"model"} | (set(options) - NOT_OFFERED)
    sweep = tools["sweep"].input_schema
    assert sweep["required"] == ["model", "sweep"] and sweep["properties"]["sweep"]["type"] == "array"
    assert {"hardware", "context", "users", "family", "paths"} <= set(
        tools["fit"].input_schema["properties"])
    assert tools["explain_log"].input_schema["required"] == ["text"]
    for t in tools.values():
        assert len(t.description) > 150, t.name          # it says when to use it
        assert t.annotations.read_only_hint is True, t.name


def test_a_plan_call_returns_the_report(mcp):
    got = mcp.call("plan", PLAN)
    assert not got.is_error
    report = got.structured_content
    options = {k: v for k, v in PLAN.items() if k != "model"}
    assert report == kvfit.plan(PLAN["model"], **options, offline=True).to_json()
    assert report == _json(*PLAN_ARGV)
    assert json.loads(got.content[1].text) == report           # the JSON as text, too
    assert got.meta["kvfit/exit_code"] == 0
    rec = report["recommended"]
    assert (rec["label"], rec["max_sequences"], report["fits"]) == ("TP=8 x DP=1", 63, True)
    text = got.content[0].text
    assert "FITS 8 x h100-80" in text
    assert "TP=8 x DP=1 holds 63 sequences; the target needs 1 sequence" in text
    assert "64.000 GiB, stated with --weight-gib" in text
    assert text.endswith("kvfit Qwen/Qwen3-32B --hardware h100-80 --gpus 8 --context 32k "
                         "--weight-gib 64 --offline")
    _clean(mcp)


def test_a_plan_that_does_not_fit_names_what_would(mcp):
    got = mcp.call("plan", TIGHT)
    assert not got.is_error and got.structured_content["fits"] is False
    assert got.meta["kvfit/exit_code"] == 1
    first = got.structured_content["suggestions"][0]
    text = got.content[0].text
    assert "DOES NOT FIT 1 x h100-80" in text and "holds 0 sequences" in text
    assert f"What would fit (smallest change first): {first['flags']}" in text


def test_bad_input_is_a_tool_error_with_the_cli_paragraph(mcp):
    got = mcp.call("plan", PLAN | {"gpus": 0})
    code, _, err = run_cli(*PLAN_ARGV[:3], "--gpus", "0", *PLAN_ARGV[5:])
    assert got.is_error and code == 2
    assert got.content[0].text == err.strip()
    assert got.structured_content["error"]["exit_code"] == 2
    _clean(mcp)


@pytest.mark.parametrize("tool, arguments, said", [
    ("plan", PLAN | {"gpu": 8}, "Did you mean gpus?"),
    ("plan", {"hardware": "h100-80"}, "the plan tool needs `model`: the checkpoint"),
    ("plan", PLAN | {"gpus": [8]}, "option gpus takes a number or a string"),
    ("plan", PLAN | {"engine_python": "/bin/sh"}, "does not run the installed-engine check"),
    ("plan", {"model": "examples/qwen3-32b-h100.toml"}, "nor read presets"),
    ("plan", {"model": "no-such-org/no-such-model"}, "neither in kvfit's offline catalog"),
    ("plan_everything", {}, "no tool named 'plan_everything'"),
    ("list_hardware", {"all": True}, "list_hardware takes no arguments"),
], ids=["unknown option", "no model", "wrong kind", "engine check", "preset", "unknown model",
        "unknown tool", "listing arguments"])
def test_every_refusal_is_one_paragraph(mcp, tool, arguments, said):
    got = mcp.call(tool, arguments)
    assert got.is_error
    assert len(got.content) == 1
    text = got.content[0].text
    assert text.startswith("kvfit: ") and "\n" not in text and said in text
    assert got.meta["kvfit/exit_code"] == 2
    _clean(mcp)


def test_fit_answers_as_the_cli(mcp):
    got = mcp.call("fit", FIT)
    assert not got.is_error
    assert got.structured_content == _json(*FIT_ARGV)
    best = got.structured_content["rows"]["fits"][0]["model"]
    assert best in got.content[0].text


def test_sweep_answers_as_the_cli(mcp):
    got = mcp.call("sweep", SWEEP)
    assert not got.is_error
    assert got.structured_content == _json(*SWEEP_ARGV)
    # TP=2 at 32k: (71.68 - 64 / 2) GiB left over 8 / 2 = 4 GiB per sequence -> 9 sequences
    assert "context=32k: fits, TP=2 x DP=1 holds 9 sequences" in got.content[0].text


def test_a_tuned_plan_names_the_recommended_settings(mcp):
    # the tune options are plan options, so the tool's schema carries the API's own
    props = mcp.tools()["plan"].input_schema["properties"]
    options = kvfit.plan_options_schema()["properties"]
    assert props["tune"] == options["tune"] and props["tune"]["type"] == "boolean"
    assert props["tune_max_utilization"] == options["tune_max_utilization"]
    got = mcp.call("plan", TUNE)
    assert not got.is_error
    cli = _json(*TUNE_ARGV)
    assert got.structured_content == cli
    tune = cli["tune"]
    changed = [s for s in tune["settings"] if s["changed"]]
    batched = next(s for s in changed if s["flag"] == "--max-num-batched-tokens")
    assert batched["recommended"] == 2048       # tests/test_tune.py derives why
    text = got.content[0].text
    for s in changed:                           # each changed setting, beside its default
        assert (f"{s['name']} {s['recommended_text']} ({s['flag']}; default "
                f"{s['default_text']})") in text
    assert f"{tune['summary']}." in text
    assert f"Launch with them: {tune['command']['launch']}" in text
    assert text.endswith(" --engine vllm --tune --offline")
    # bad tune input is the CLI's paragraph: --tune needs an engine
    bad = mcp.call("plan", {k: v for k, v in TUNE.items() if k != "engine"})
    code, _, err = run_cli(*TUNE_ARGV[:7], *TUNE_ARGV[9:])
    assert bad.is_error and code == 2 and bad.content[0].text == err.strip()
    assert "needs the engine whose allocator answers" in err
    _clean(mcp)


def test_a_tuned_fit_names_the_settings_changed(mcp):
    args = {"hardware": "h100-80", "gpus": 8, "context": "32k", "engine": "vllm",
            "tune": True, "family": ["deepseek_v4"]}
    got = mcp.call("fit", args)
    assert not got.is_error
    cli = _json("fit", "--hardware", "h100-80", "--gpus", "8", "--context", "32k", "--engine",
                "vllm", "--tune", "--family", "deepseek_v4")
    assert got.structured_content == cli
    row = cli["rows"]["fits"][0]
    flags = " ".join(f"{c['flag']} {c['value']}" for c in row["tune"]["changed"])
    assert "--max-num-batched-tokens 2048" in flags
    assert f"{row['model']}: " in got.content[0].text
    assert f"tuned with {flags}." in got.content[0].text


def test_explain_log_answers_as_the_cli(mcp):
    got = mcp.call("explain_log", {"text": LOG.read_text(), "model_dir": str(LLAMA)})
    assert not got.is_error
    assert got.structured_content == _json("explain-log", str(LOG), "--model-dir", str(LLAMA))
    assert got.content[0].text.startswith("vllm 0.19.0 log of meta-llama/Llama-3.1-8B-Instruct")


def test_the_listings_answer_as_the_cli(mcp):
    assert mcp.call("list_hardware", {}).structured_content == {
        "hardware": _json("--list-hardware")}
    assert mcp.call("list_systems", {}).structured_content == {
        "systems": _json("--list-systems")}
    ids = [e["repo_id"] for e in mcp.call("catalog_search", {"query": "qwen3-32b"})
           .structured_content["entries"]]
    assert "Qwen/Qwen3-32B" in ids
    assert all("qwen3-32b" in i.lower() for i in ids)


def _examples() -> list[tuple[str, dict, str]]:
    """docs/agent-skill.md's MCP exchanges: (tool, arguments, the answer shown)."""
    doc = (TESTS.parent / "docs" / "agent-skill.md").read_text()
    found = re.findall(r"<!-- mcp-example: (\w+) -->\n```json\n(.*?)\n```\n\n```text\n(.*?)\n```",
                       doc, re.S)
    return [(tool, json.loads(args), " ".join(shown.split())) for tool, args, shown in found]


def test_the_agent_skill_examples_are_what_the_server_answers(mcp):
    examples = _examples()
    assert len(examples) == 2
    for tool, arguments, shown in examples:
        got = mcp.call(tool, arguments)
        assert not got.is_error
        assert got.content[0].text == shown


def test_an_unexpected_exception_is_one_paragraph(monkeypatch):
    """In-process (no server spawned): a kvfit bug inside a tool is an isError paragraph,
    exit code 70 in _meta, never a traceback."""
    import dataclasses

    from kvfit.mcp_server import server, tools

    def broken(args, offline):
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setitem(tools.TOOLS, "plan", dataclasses.replace(tools.TOOLS["plan"],
                                                                 call=broken))
    got = server.answer("plan", PLAN)
    assert got.is_error and got.meta == {"kvfit/exit_code": 70}
    assert got.content[0].text == ("kvfit: internal error: RuntimeError: a bug. This is a kvfit "
                                   "bug; please report it with the tool call that caused it.")
