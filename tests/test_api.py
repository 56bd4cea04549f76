"""The Python API (kvfit.api, re-exported from kvfit): each function answers as the CLI does,
errors are typed and carry the CLI's paragraph, keywords are checked like flags, and nothing
prints."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from engine_log_cases import CONFIGS, LOGS

import kvfit
import kvfit.api
from kvfit import errors

from conftest import run_cli, validate

QWEN = {"hardware": "h100-80", "gpus": 8, "context": "32k", "offline": True}
QWEN_ARGV = ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
             "--offline"]


def _unsupported(tmp_path: Path) -> Path:
    """A checkpoint folder whose model_type no spec covers."""
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "zzz_unknown", "architectures": ["ZzzForCausalLM"], "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}))
    return tmp_path


def test_import_kvfit_stays_light():
    """`import kvfit` loads no API, planner or argparse until a name is asked for."""
    code = ("import sys, kvfit; print(sorted(m for m in sys.modules if m.startswith('kvfit')));"
            "print('argparse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["['kvfit']", "False"]


def test_the_public_names():
    for name in ("plan", "sweep", "fit", "explain_log", "list_hardware", "list_systems",
                 "catalog_search", "command_line", "plan_options_schema", "exit_code"):
        assert callable(getattr(kvfit, name)), name
        assert getattr(kvfit, name).__doc__, name
    with pytest.raises(AttributeError):
        kvfit.no_such_name  # noqa: B018
    # a submodule named like a function would replace it once imported (kvfit.api.fit)
    modules = {p.stem for p in Path(kvfit.api.__file__).parent.glob("*.py")}
    assert not modules & set(kvfit.api.__all__)


def test_plan_equals_the_cli_json_and_exit_code(capsys):
    report = kvfit.plan("Qwen/Qwen3-32B", **QWEN)
    assert capsys.readouterr() == ("", "")               # the API prints nothing
    code, out, _ = run_cli(*QWEN_ARGV, "--json")
    assert report.to_json() == json.loads(out)
    assert kvfit.exit_code(report) == code == 0
    assert report.fits is True
    assert report.context_tokens == 32 * 1024            # 32k: powers of 1024


def test_exit_codes_not_met_and_not_judged():
    # Qwen3-32B in bf16 is ~61 GiB of weights: one 24 GiB GPU cannot hold it (exit 1)
    small = kvfit.plan("Qwen/Qwen3-32B", hardware="custom:24", context="32k", offline=True)
    assert small.fits is False and kvfit.exit_code(small) == 1
    # no hardware: a state-only report, not judged (exit 5)
    bare = kvfit.plan("Qwen/Qwen3-32B", context="32k", offline=True)
    assert bare.fits is None and kvfit.exit_code(bare) == 5
    assert run_cli("Qwen/Qwen3-32B", "--context", "32k", "--offline")[0] == 5


def test_the_report_is_frozen():
    report = kvfit.plan("Qwen/Qwen3-32B", **QWEN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.fits = False
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.recommended.tp = 1
    with pytest.raises(TypeError):
        report.layouts[0] = None                         # a tuple


def test_short_names_and_the_cli_aliases_ask_the_same_question():
    long = kvfit.plan("Qwen/Qwen3-32B", **QWEN, concurrent_users=4, active_sequences_per_user=2)
    short = kvfit.plan("Qwen/Qwen3-32B", **QWEN, users=4, branches=2)
    assert short.to_json() == long.to_json()
    assert long.target.concurrent_users == 4 and long.target.active_sequences_per_user == 2
    code, out, _ = run_cli(*QWEN_ARGV, "--users", "4", "--branches", "2", "--json")
    assert json.loads(out) == long.to_json()


def test_every_option_kind_reaches_the_plan():
    """Booleans, lists, numbers and JSON objects become the flags they name."""
    rope = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 32768}
    report = kvfit.plan("Qwen/Qwen3-32B", hardware="h100-80", gpus=2, context=131072,
                        rope_scaling=rope, utilization=0.85, kv_dtype="fp8", offline=True,
                        tp=2, max_context=True)
    # 4 x 32,768 = 131,072 tokens: the yarn factor raises the declared maximum
    assert report.max_context_tokens == 4 * 32768
    code, out, _ = run_cli("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "2",
                           "--context", "131072", "--rope-scaling", json.dumps(rope),
                           "--utilization", "0.85", "--kv-dtype", "fp8", "--offline", "--tp",
                           "2", "--max-context", "--json")
    assert json.loads(out) == report.to_json()
    assert kvfit.exit_code(report) == code


@pytest.mark.parametrize(("options", "argv"), [
    ({"gpus": 0}, ["--gpus", "0"]),
    ({"gpus": "many"}, ["--gpus", "many"]),
    ({"context": "12q"}, ["--context", "12q"]),
    ({"parallelism": "bad"}, ["--parallelism", "bad"]),
    ({"utilization": 1.5}, ["--utilization", "1.5"]),
    ({"hardware": "h100-80", "system": "dgx-h100"}, ["--hardware", "h100-80", "--system",
                                                    "dgx-h100"]),
    ({"config": "/nonexistent/preset.toml"}, ["--config", "/nonexistent/preset.toml"]),
    ({"kv_dtype": "fp9"}, ["--kv-dtype", "fp9"]),
    ({"engine": "tgi"}, ["--engine", "tgi"]),
])
def test_bad_values_are_bad_input_with_the_cli_paragraph(options, argv):
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.plan("Qwen/Qwen3-32B", offline=True, hardware="h100-80", **options) \
            if "hardware" not in options and "system" not in options else \
            kvfit.plan("Qwen/Qwen3-32B", offline=True, **options)
    extra = [] if "hardware" in options or "system" in options else ["--hardware", "h100-80"]
    code, out, err = run_cli("Qwen/Qwen3-32B", "--offline", *extra, *argv)
    assert err == caught.value.render() + "\n"
    assert code == caught.value.exit_code == kvfit.exit_code(caught.value) == 2


@pytest.mark.parametrize(("options", "words"), [
    ({"gpu": 8}, ["'gpu'", "Did you mean gpus?"]),
    ({"kv_type": "fp8"}, ["'kv_type'", "Did you mean kv_dtype?"]),
    ({"json": True}, ["'json'"]),                    # output shape: not a plan option
    ({"sweep": ["context=8k"]}, ["'sweep'"]),         # kvfit.sweep asks that
    ({"zzz": 1}, ["'zzz'"]),
])
def test_unknown_keywords_name_the_nearest_option(options, words):
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.plan("Qwen/Qwen3-32B", **options)
    text = caught.value.render()
    assert text.startswith("kvfit: usage error: kvfit.plan has no option ")
    for word in words:
        assert word in text
    assert "\n" not in text


@pytest.mark.parametrize(("options", "want"), [
    ({"gpus": True}, "option gpus takes a number or a string, got bool"),
    ({"offline": "yes"}, "option offline takes True or False, got str"),
    ({"systems": [1, 2]}, "option systems takes a string or a list of strings, got list"),
    ({"systems": []}, "option systems takes a string or a list of strings, got list"),
    ({"context": [32768]}, "option context takes a number or a string, got list"),
    ({"hardware": {"id": "h100-80"}}, "option hardware takes a number or a string, got dict"),
    ({"users": 2, "concurrent_users": 2}, "concurrent_users are the same option"),
])
def test_values_of_the_wrong_kind_are_bad_input(options, want):
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.plan("Qwen/Qwen3-32B", **options)
    assert want in caught.value.render()


@pytest.mark.parametrize("model", [None, 42, b"Qwen/Qwen3-32B"])
def test_a_model_that_is_not_text_is_bad_input(model):
    with pytest.raises(kvfit.BadInput, match="given as text"):
        kvfit.plan(model, offline=True)


def test_a_value_that_looks_like_a_flag_stays_a_value():
    """context="-5" is the value of --context (refused by its own check), not a flag."""
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.plan("Qwen/Qwen3-32B", context="-5", offline=True)
    code, _, err = run_cli("Qwen/Qwen3-32B", "--context=-5", "--offline")
    assert err == caught.value.render() + "\n" and code == 2


def test_unsupported_architecture_is_unsupported_with_the_cli_paragraph(tmp_path):
    folder = _unsupported(tmp_path)
    with pytest.raises(kvfit.Unsupported) as caught:
        kvfit.plan(str(folder), hardware="h100-80")
    assert isinstance(caught.value, errors.UnsupportedArchitecture)
    code, _, err = run_cli(str(folder), "--hardware", "h100-80")
    assert err == caught.value.render() + "\n"
    assert code == kvfit.exit_code(caught.value) == 2
    assert caught.value.to_json()["kind"] == "unsupported architecture"


def test_a_model_nowhere_offline_is_a_hub_error_with_the_cli_paragraph():
    with pytest.raises(kvfit.HubError) as caught:
        kvfit.plan("nobody/nothing-here", offline=True, hardware="h100-80")
    code, _, err = run_cli("nobody/nothing-here", "--offline", "--hardware", "h100-80")
    assert err == caught.value.render() + "\n" and code == 2


def test_a_broken_config_is_bad_input(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.plan(str(tmp_path), hardware="h100-80")
    assert isinstance(caught.value, errors.ConfigError)
    code, _, err = run_cli(str(tmp_path), "--hardware", "h100-80")
    assert err == caught.value.render() + "\n" and code == 2


def test_a_broken_spec_is_a_spec_error_with_the_cli_text(tmp_path, monkeypatch):
    """A hardware spec that is not YAML: every plan that reads the presets refuses it."""
    from kvfit.hardware import presets

    (tmp_path / "broken.yaml").write_text("id: [unclosed\n")
    monkeypatch.setattr(presets, "specs_dir", lambda kind: tmp_path)
    presets.accelerators.cache_clear()
    presets._by_id.cache_clear()
    try:
        with pytest.raises(kvfit.SpecError) as caught:
            kvfit.plan("Qwen/Qwen3-8B", hardware="h100-80", offline=True)
        presets.accelerators.cache_clear()
        code, _, err = run_cli("Qwen/Qwen3-8B", "--hardware", "h100-80", "--offline")
    finally:
        monkeypatch.undo()
        presets.accelerators.cache_clear()
        presets._by_id.cache_clear()
        presets.systems.cache_clear()
    assert err == caught.value.render() + "\n"
    assert code == kvfit.exit_code(caught.value) == 2
    assert "broken.yaml" in err


def test_the_exception_family():
    assert issubclass(errors.UsageError, kvfit.BadInput)
    assert issubclass(errors.ConfigError, kvfit.BadInput)
    assert issubclass(errors.UnsupportedArchitecture, kvfit.Unsupported)
    for cls in (kvfit.BadInput, kvfit.Unsupported, kvfit.HubError, kvfit.SpecError):
        assert issubclass(cls, kvfit.KvfitError)
    assert kvfit.SpecError is errors.SpecError and kvfit.HubError is errors.HubError
    err = errors.SpecError([errors.Problem("KV110", "x.yaml", 3, 1, "unknown key 'foo'")])
    assert err.exit_code == 2 and "1 spec problem" in err.render()


def test_a_preset_note_is_logged_not_printed(tmp_path, capsys, caplog):
    preset = tmp_path / "p.toml"
    preset.write_text('model = "Qwen/Qwen3-32B"\nhardware = "h100-80"\ngpus = 8\n'
                      'context = "32k"\noffline = true\n')
    with caplog.at_level("INFO", logger="kvfit"):
        report = kvfit.plan(str(preset), gpus=4)
    assert capsys.readouterr() == ("", "")
    assert report.hardware.gpus == 4
    [note] = [r.getMessage() for r in caplog.records]
    assert note.startswith("--gpus 4 on the command line replaces preset key 'gpus'")
    _, _, err = run_cli(str(preset), "--gpus", "4")
    assert err == f"kvfit: note: {note}\n"


def test_plans_from_threads_equal_plans_in_turn():
    questions = [("Qwen/Qwen3-32B", QWEN), ("google/gemma-3-27b-it",
                 {"hardware": "rtx-pro-6000-96", "context": "32k", "users": 4, "offline": True}),
                 ("Qwen/Qwen3-30B-A3B", {"hardware": "rtx-5090-32", "gpus": 2, "offline": True,
                                         "context": "32k", "engine": "vllm"})] * 3
    in_turn = [kvfit.plan(m, **o).to_json() for m, o in questions]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda q: kvfit.plan(q[0], **q[1]).to_json(), questions))
    assert together == in_turn


def test_command_line_is_the_cli_question():
    line = kvfit.command_line("Qwen/Qwen3-32B", hardware="h100-80", gpus=8, context="32k",
                              users=4, kv_dtype="fp8", systems=None, offline=True)
    assert line == ("kvfit Qwen/Qwen3-32B --hardware h100-80 --gpus 8 --context 32k --users 4 "
                    "--kv-dtype fp8 --offline")
    quoted = kvfit.command_line("./my model", systems=["dgx-h100", "dgx-b200"], context="-5",
                                rope_scaling={"rope_type": "yarn", "factor": 2})
    assert quoted == ("kvfit './my model' --systems dgx-h100 dgx-b200 --context=-5 "
                      "--rope-scaling '{\"rope_type\": \"yarn\", \"factor\": 2}'")
    assert kvfit.command_line("m", sweep=["context=8k,32k"]) == "kvfit m --sweep context=8k,32k"
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.command_line("m", gpu=2)
    assert "Did you mean gpus?" in caught.value.render()
    with pytest.raises(kvfit.BadInput, match="--gpus must be a whole number"):
        kvfit.command_line("m", gpus=0)


def test_command_line_asks_what_plan_asks():
    import shlex

    options = {"hardware": "h100-80", "gpus": 8, "context": "32k", "users": 4,
               "kv_dtype": "fp8", "offline": True}
    argv = shlex.split(kvfit.command_line("Qwen/Qwen3-32B", **options))
    _, out, _ = run_cli(*argv[1:], "--json")
    assert json.loads(out) == kvfit.plan("Qwen/Qwen3-32B", **options).to_json()


def test_the_options_schema_is_made_from_the_parser():
    from jsonschema import Draft202012Validator

    from kvfit.cli.plan_args import build_parser

    schema = kvfit.plan_options_schema()
    Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    dests = {a.dest for a in build_parser()._actions if a.option_strings}
    assert set(props) == (dests - {"help", "version", "list_hardware", "list_systems", "json",
                                   "verbose", "sweep", "plot"}) | {"users", "branches"}
    assert props["gpus"] == {"description": props["gpus"]["description"], "type": "integer",
                             "minimum": 1, "maximum": 1_000_000}
    assert props["utilization"]["exclusiveMinimum"] == 0.0 and props["utilization"]["maximum"] == 1
    assert props["offline"]["type"] == "boolean"
    assert props["systems"]["type"] == "array"
    assert props["parallelism"]["enum"] == ["tp", "sglang-dpa", "vllm-dp-ep"]
    assert props["context"]["type"] == ["string", "integer"]
    assert props["rope_scaling"]["type"] == props["hf_overrides"]["type"] == ["string", "object"]
    assert schema["additionalProperties"] is False
    validate({"hardware": "h100-80", "gpus": 8, "context": "32k", "users": 4}, schema)
    for bad in ({"gpus": 0}, {"gpu": 8}, {"offline": "yes"}):
        with pytest.raises(Exception, match="."):
            validate(bad, schema)


# -- sweep ---------------------------------------------------------------------------------

def test_sweep_equals_the_cli_sweep():
    report = kvfit.sweep("Qwen/Qwen3-32B", ["context=8k,32k", "users=1,64"], hardware="h100-80",
                         gpus=2, offline=True)
    code, out, _ = run_cli("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "2", "--offline",
                           "--sweep", "context=8k,32k", "--sweep", "users=1,64", "--json")
    assert report.to_json() == json.loads(out)
    assert kvfit.exit_code(report) == code == report.sweep.exit_code
    assert len(report.sweep.cells) == 2 * 2                 # a 2 x 2 grid
    one = kvfit.sweep("Qwen/Qwen3-32B", "context=8k,32k", hardware="h100-80", offline=True)
    # 8k and 32k are 8 x 1024 and 32 x 1024 tokens
    assert [c.context_tokens for c in one.sweep.cells] == [8192, 32768]


def test_a_bad_sweep_is_bad_input_with_the_cli_paragraph():
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.sweep("Qwen/Qwen3-32B", "colour=red,blue", hardware="h100-80", offline=True)
    code, _, err = run_cli("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline", "--sweep",
                           "colour=red,blue")
    assert err == caught.value.render() + "\n" and code == 2
    with pytest.raises(kvfit.BadInput):
        kvfit.sweep("Qwen/Qwen3-32B", [], hardware="h100-80")
    with pytest.raises(kvfit.BadInput):
        kvfit.sweep("Qwen/Qwen3-32B", "context=8k", plot="x.png")     # the CLI draws charts


# -- fit -----------------------------------------------------------------------------------

FIT_ARGV = ["fit", "--hardware", "rtx-5090-32", "--gpus", "2", "--context", "32k", "--users",
            "4", "--family", "qwen3"]


def test_fit_equals_the_cli_fit(capsys):
    result = kvfit.fit(hardware="rtx-5090-32", gpus=2, context="32k", users=4, family=["qwen3"])
    assert capsys.readouterr() == ("", "")
    code, out, _ = run_cli(*FIT_ARGV, "--json")
    assert result.to_json() == json.loads(out)
    assert kvfit.exit_code(result) == result.exit_code == code == 0
    assert result.counts["fits"] == len(result.rows["fits"]) > 0
    assert result.plan_flags[:5] == ("--offline", "--hardware", "rtx-5090-32", "--gpus", "2")
    same = kvfit.fit(hardware="rtx-5090-32", gpus=2, context="32k", concurrent_users=4,
                     family="qwen3")
    assert same.to_json() == result.to_json()
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.counts = {}


def test_fit_plans_local_folders_too():
    folder = Path(__file__).parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-8B"
    result = kvfit.fit(paths=[str(folder)], no_catalog=True, hardware="h100-80", context="32k")
    code, out, _ = run_cli("fit", str(folder), "--no-catalog", "--hardware", "h100-80",
                           "--context", "32k", "--json")
    assert result.to_json() == json.loads(out) and result.exit_code == code
    assert result.planned == 1


@pytest.mark.parametrize(("options", "argv"), [
    ({"hardware": "h100-80"}, ["--hardware", "h100-80"]),                   # --context missing
    ({"context": "32k"}, ["--context", "32k"]),                             # no hardware
    ({"hardware": "h100-80", "context": "32k", "family": ["nobody"]},
     ["--hardware", "h100-80", "--context", "32k", "--family", "nobody"]),
    ({"hardware": "h100-80", "context": "32k", "gpus": 0},
     ["--hardware", "h100-80", "--context", "32k", "--gpus", "0"]),
])
def test_bad_fit_input_is_bad_input_with_the_cli_paragraph(options, argv):
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.fit(**options)
    code, _, err = run_cli("fit", *argv)
    assert err == caught.value.render() + "\n" and code == 2


def test_fit_keywords_are_checked():
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.fit(hardware="h100-80", context="32k", familly=["qwen3"])
    assert "Did you mean family?" in caught.value.render()
    with pytest.raises(kvfit.BadInput):
        kvfit.fit(hardware="h100-80", context="32k", json=True)
    with pytest.raises(kvfit.BadInput):
        kvfit.fit(paths=[3], hardware="h100-80", context="32k")


# -- explain-log ---------------------------------------------------------------------------

def test_explain_log_equals_the_cli():
    log = LOGS / "vllm-0.19.0-gpt-oss-20b-h100-tp2.log"
    result = kvfit.explain_log(log.read_text(), model_dir=str(CONFIGS / "openai--gpt-oss-20b"))
    code, out, _ = run_cli("explain-log", str(log), "--model-dir",
                           str(CONFIGS / "openai--gpt-oss-20b"), "--json")
    assert result.to_json() == json.loads(out)
    assert kvfit.exit_code(result) == code == 0
    # the log names vLLM 0.19.0 and runs TP=2 (its rank names, Worker_TP1)
    assert (result.engine, result.version, result.tp) == ("vllm", "0.19.0", 2)


def test_explain_log_bad_input_has_the_cli_paragraph(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("hello\nthis is not a start-up log\n")
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.explain_log(log.read_text())
    code, _, err = run_cli("explain-log", str(log))
    assert err == caught.value.render() + "\n" and code == 2
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.explain_log("x", tp=0)
    code, _, err = run_cli("explain-log", str(log), "--tp", "0")
    assert err == caught.value.render() + "\n"
    for bad in (b"bytes", None, ["a"]):
        with pytest.raises(kvfit.BadInput, match="given as text"):
            kvfit.explain_log(bad)


# -- listings and the catalog --------------------------------------------------------------

def test_listings_equal_the_cli():
    for flag, listing in (("--list-hardware", kvfit.list_hardware),
                          ("--list-systems", kvfit.list_systems)):
        result = listing()
        code, out, _ = run_cli(flag, "--json")
        assert result.to_json() == json.loads(out) and code == kvfit.exit_code(result) == 0
    ids = [row["id"] for row in kvfit.list_hardware()]
    assert "h100-80" in ids and ids == sorted(ids)
    assert "dgx-h100" in [row["id"] for row in kvfit.list_systems()]


def test_catalog_search_is_best_first_and_shows_each_entry_as_the_cli():
    found = kvfit.catalog_search("qwen3-32b", limit=3)
    ids = [e["repo_id"] for e in found]
    assert ids[0] == "Qwen/Qwen3-32B"                       # the exact name first
    assert len(ids) == 3 and all("qwen3-32b" in i.casefold() for i in ids)
    for entry in found.to_json():
        _, out, _ = run_cli("catalog", "show", entry["repo_id"], "--json")
        assert entry == json.loads(out)
    assert len(kvfit.catalog_search("", limit=5)) == 5
    assert kvfit.catalog_search("no-such-model-anywhere").to_json() == []


@pytest.mark.parametrize(("args", "word"), [(("x", 0), "limit"), (("x", True), "limit"),
                                            ((3,), "query"), (("x", "5"), "limit")])
def test_catalog_search_refuses_bad_arguments(args, word):
    with pytest.raises(kvfit.BadInput, match=word):
        kvfit.catalog_search(*args)


def test_the_readme_python_example_prints_what_it_shows(capsys):
    """README "From Python": the block runs, and each `# -> ` line is what the print above
    it printed."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## From Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    shown = [line[len("# -> "):] for line in code.splitlines() if line.startswith("# -> ")]
    assert capsys.readouterr().out.splitlines() == shown


HOSTILE = [True, False, 0, -1, 1e308, float("nan"), "", "-", "--json", "x" * 500, "\x1b[31m",
           [], ["a", "-b"], {}, {"rope_type": "yarn"}, object()]


@pytest.mark.parametrize("key", kvfit.plan_options_schema()["properties"])
def test_no_keyword_value_gets_past_as_a_traceback(key, monkeypatch):
    """Every option with hostile values: a Report or a KvfitError (one paragraph), nothing
    else. (offline=False asks the Hub: HF_HUB_OFFLINE keeps the plan local.)"""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for value in HOSTILE:
        try:
            report = kvfit.plan("Qwen/Qwen3-8B", **({"hardware": "h100-80", "offline": True}
                                                    | {key: value}))
        except kvfit.KvfitError as err:
            text = err.render()
            assert text.startswith("kvfit: ") and "Traceback" not in text, (key, value)
            assert kvfit.exit_code(err) == 2, (key, value, text)
        else:
            assert kvfit.exit_code(report) in (0, 1, 5), (key, value)


def test_fit_and_explain_log_keywords_have_their_schemas_too():
    from jsonschema import Draft202012Validator

    from kvfit.api.explain import EXPLAIN
    from kvfit.api.fitting import FIT
    from kvfit.api.options import schema

    fit_schema = schema(FIT)
    Draft202012Validator.check_schema(fit_schema)
    assert fit_schema["required"] == ["context"]
    # --users takes what --concurrent-users takes: 1 to 1,000,000 (kvfit.numbers.FIELDS)
    for name in ("users", "concurrent_users"):
        prop = fit_schema["properties"][name]
        assert (prop["type"], prop["minimum"], prop["maximum"]) == ("integer", 1, 1_000_000)
    assert "all" not in fit_schema["properties"] and "json" not in fit_schema["properties"]
    explain_schema = schema(EXPLAIN)
    Draft202012Validator.check_schema(explain_schema)
    assert {"model_dir", "tp", "max_model_len"} <= set(explain_schema["properties"])
