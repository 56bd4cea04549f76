"""One reader for numbers from outside (kvfit/numbers.py): every numeric flag of every
parser, every numeric preset key and the numbers of tool output and gauges get the same
hostile values (5,000 digits, '²', 'nan', 'inf', '-1', '0', '1e309', '', Arabic-Indic
'١٢'): each is answered or refused with one paragraph (exit 2), never an internal error."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from kvfit import numbers
from kvfit.calibrate.metrics import parse as parse_metrics
from kvfit.calibrate.metrics import read
from kvfit.cli.main import SUBCOMMANDS, subcommand
from kvfit.cli.plan_args import build_parser
from kvfit.errors import UsageError
from kvfit.expr import compile_expr, non_number

from conftest import run_cli

QWEN = Path(__file__).resolve().parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
# '32_768' (int() drops the underscore), '٣٢' (Arabic-Indic digits), '+8' and '0x10' are
# refused as '١٢' is: ASCII digits only; ' 8' is 8 (space around a number is not part of it);
# '1e3' is 1000 for a flag that takes a real number and no whole number
BASIC = ["9" * 5000, "²", "nan", "inf", "-1", "0", "1e309", "", "١٢"]
HOSTILE = [*BASIC, "32_768", "٣٢", "+8", "0x10", "1e3", " 8"]
# never a number kvfit takes, whatever the flag
NEVER = ["9" * 5000, "²", "nan", "inf", "1e309", "", "١٢", "32_768", "٣٢", "+8", "0x10"]


def _numeric_actions(parser: argparse.ArgumentParser):
    # kvfit.numbers' converters carry the name of the type they return
    return [a for a in parser._actions if a.option_strings
            and getattr(a.type, "__name__", None) in ("int", "float")]


def _parsers():
    yield "kvfit", build_parser()
    for name in SUBCOMMANDS:
        yield name, subcommand(name, "parser")()


def test_no_parser_converts_with_bare_int_or_float():
    # every numeric flag goes through kvfit.numbers (bounded, ASCII, ranged): argparse's
    # type=int took '١٢' as 12 and type=float took 'nan', 'inf' and '1e309'
    for name, parser in _parsers():
        bare = [a.option_strings[0] for a in parser._actions if a.type in (int, float)]
        assert not bare, (name, bare)


PLAN_FLAGS = [a.option_strings[0] for a in _numeric_actions(build_parser())]


def test_the_walk_covers_the_numeric_flags():
    assert {"--gpus", "--utilization", "--max-num-seqs", "--max-model-len", "--weight-gib",
            "--timeout", "--engine-tp"} <= set(PLAN_FLAGS)


def _clean(code: int, out: str, err: str, argv) -> None:
    assert code in (0, 1, 2, 5), (argv, code, err[-400:])
    assert "Traceback" not in err and "internal error" not in err, (argv, err[-400:])
    if code == 2:
        assert err.startswith("kvfit: ") and err.count("\n") == 1, (argv, err[-400:])
        assert len(err) < 1000, (argv, err[:200])          # a 5,000-digit value is cut


@pytest.mark.parametrize("flag", [*PLAN_FLAGS, "--context", "--tp"])
def test_every_plan_flag_refuses_hostile_numbers(flag):
    for value in HOSTILE:
        argv = [QWEN, "--hardware", "h100-80", flag, value]
        code, out, err = run_cli(*argv)
        _clean(code, out, err, argv)
        if value in NEVER:
            assert code == 2, (argv, out[-200:])


@pytest.mark.parametrize("axis", ["context", "gpus", "users", "nodes"])
def test_every_sweep_axis_refuses_hostile_numbers(axis):
    base = [QWEN, "--system", "dgx-h100"] if axis == "nodes" else [QWEN, "--hardware", "h100-80"]
    for value in HOSTILE:
        argv = [*base, "--sweep", f"{axis}=1,{value}"]
        code, out, err = run_cli(*argv)
        _clean(code, out, err, argv)
        # 0, -1 and the rest are no count; ' 8' is 8
        assert (code == 2) == (value != " 8"), (argv, out[-200:])


@pytest.mark.parametrize("flag", ["--context", "--gpus", "--tp", "--users", "--utilization",
                                  "--nodes"])
def test_every_fit_flag_refuses_hostile_numbers(flag):
    base = ["fit", "--no-catalog", QWEN, "--context", "4k"]
    base += ["--system", "dgx-h100"] if flag == "--nodes" else ["--hardware", "h100-80"]
    for value in HOSTILE:
        argv = [*base, flag, value]
        code, out, err = run_cli(*argv)
        _clean(code, out, err, argv)
        if value != " 8":                              # ' 8' is 8 (4k of context is 4,096)
            assert code == 2, (argv, out[-300:])       # the single plan refuses each one too


@pytest.mark.parametrize("flag", ["--tp", "--weight-gib", "--max-num-seqs", "--max-model-len"])
def test_every_explain_log_flag_refuses_hostile_numbers(flag):
    log = Path(__file__).resolve().parent / "fixtures" / "engine_logs" / \
        "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
    for value in NEVER:
        argv = ["explain-log", log, flag, value]
        code, out, err = run_cli(*argv)
        _clean(code, out, err, argv)
        assert code == 2, argv


# preset keys that hold numbers, and TOML spellings of the hostile values
PRESET_KEYS = ["gpus", "nodes", "tp", "pp", "utilization", "runtime_reserve_gib",
               "concurrent_users", "active_sequences_per_user", "device_memory_gib",
               "weight_gib", "timeout", "context", "max_nodes"]
TOML_VALUES = ["9" * 5000, "9" * 4000, "nan", "inf", "-1", "0", "1e309", '"²"', '""',
               '"١٢"', '"9999999999999999999999999999999999999999999999999999"', '"32_768"',
               '"+8"', '"0x10"', '"٣٢"']


@pytest.mark.parametrize("key", PRESET_KEYS)
def test_every_preset_key_refuses_hostile_numbers(tmp_path, key):
    for value in TOML_VALUES:
        system = key in ("nodes", "max_nodes")
        head = 'system = "dgx-h100"' if system else 'hardware = "h100-80"'
        if key == "max_nodes":
            head = 'systems = ["dgx-h100"]'
        preset = tmp_path / "p.toml"
        preset.write_text(f'model = "{QWEN}"\n{head}\n{key} = {value}\n')
        code, out, err = run_cli(preset)
        _clean(code, out, err, (key, value[:20]))
        if (key, value) != ("runtime_reserve_gib", "0"):    # no reserve is a reserve
            assert code == 2, (key, value[:20], out[-200:])


@pytest.mark.parametrize("value", BASIC)      # a gauge is a Prometheus float: '+8', '1e3' are
def test_gauges_with_hostile_numbers_are_no_reading(value):
    page = f"vllm:num_requests_running{{engine=\"0\"}} {value}\n"
    got = read(parse_metrics(page), {"running": ["vllm:num_requests_running"]})
    assert got["running"] is None or (got["running"] == 0 and value == "0"), got


def test_the_reader_itself():
    assert numbers.parse_whole("42") == 42 and numbers.parse_whole(" 42 ") == 42
    for bad in ["١٢", "²", "1_000", "4.0", "-1", "", "9" * 41, "0x10", "+8", True, None, 1.5]:
        assert numbers.parse_whole(bad) is None, bad
    # 32k = 32 x 1,024 = 32,768; 1m = 1,048,576
    assert [numbers.parse_tokens(t) for t in ("32768", " 32k ", "32K", "1m", 7)] == [
        32768, 32768, 32768, 1048576, 7]
    for bad in ["32_768", "٣٢", "٣٢k", "1e3", "+8", "0x10", "-1", "nan", "9" * 41, "32kk",
                "k", "", True, None, 1.5, -1]:
        assert numbers.parse_tokens(bad) is None, bad
    assert numbers.parse_real("0.9") == 0.9 and numbers.parse_real("1e3") == 1000.0
    for bad in ["nan", "inf", "1e309", "١.٥", "1_0.5", "", "9" * 41, "+0.5", "0x10", math.nan,
                math.inf]:
        assert numbers.parse_real(bad) is None, bad
    with pytest.raises(UsageError, match=r"5,000 characters"):
        numbers.whole("9" * 5000, "--gpus")
    with pytest.raises(UsageError, match=r"a number of about 5,000 digits"):
        numbers.whole(10**5000, "--gpus")          # a library caller's int: no repr of it
    assert numbers.real("1", "--utilization", 0.0, 1.0, lo_open=True) == 1.0
    with pytest.raises(UsageError, match=r"in \(0, 1\]"):
        numbers.real("0", "--utilization", 0.0, 1.0, lo_open=True)


@pytest.mark.parametrize(("text", "found"), [
    ("max(act, act)", "act"), ("act or 1", "act"), ("1 if layers else act", "act"),
    ("min(1, max(2, kinds))", "kinds"),
    ("len(kinds)", None), ("layers * 2", None), ("act == act", None), ("layers or 1", None),
])
def test_an_expression_that_can_yield_text(text, found):
    expr = compile_expr(text, {"act", "kinds", "layers"})
    got = non_number(expr, {"act", "kinds"})
    assert (got and got[0]) == found


def test_sglang_on_a_gpu_smaller_than_its_reserve_is_refused():
    # bench/fuzz.py flags case 1010 (seed 0): SGLang's reserve rule on a 0.5 GiB device gave
    # mem_fraction_static = (512 - 4,128) / 512 = -7.062 in the report, exit 0
    argv = [QWEN, "--hardware", "dgx-spark", "--swa-full-tokens-ratio", "0.5",
            "--device-memory-gib", "0.5"]
    code, out, err = run_cli(*argv)
    _clean(code, out, err, argv)
    assert code == 2 and "mem_fraction_static would be -7.062" in err, err


@pytest.mark.parametrize("flags", [
    ("--utilization", "nan"), ("--tp", "0"), ("--users", "0"), ("--gpus", "8", "--tp", "3"),
    ("--context", "0"), ("--utilization", "1.5"), ("--kv-dtype", ""), ("--kv-dtype", "fp5"),
])
def test_fit_refuses_as_the_single_plan_does(flags):
    # was: "0 of 121 checkpoints fit", exit 1; now the single plan's own paragraph, exit 2
    code, out, err = run_cli("fit", "--hardware", "h100-80", "--context", "4k", *flags)
    plan = [QWEN, "--hardware", "h100-80", "--context", "4k",
            *(("--concurrent-users" if f == "--users" else f) for f in flags)]
    want = run_cli(*plan)
    assert code == want[0] == 2, (err, want[2])
    assert err == want[2].replace("--concurrent-users", "--users"), (err, want[2])


def test_an_engine_version_of_5000_digits_is_no_version(tmp_path):
    # bench/fuzz.py explain_file case 326 (seed 0): a log whose banner says version
    # 0.999...9 (5,000 digits) reached packaging's int(): ValueError, exit 70
    version = "0." + "9" * 5000
    code, out, err = run_cli(QWEN, "--hardware", "h100-80", "--engine", f"vllm@{version}")
    _clean(code, out, err, "--engine vllm@0.999...")
    assert code == 2 and "kvfit has no rules for this version" in err, err
    log = Path(__file__).resolve().parent / "fixtures" / "engine_logs" / \
        "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
    path = tmp_path / "v.log"
    path.write_text(log.read_text().replace("version 0.19.0", f"version {version}"))
    model = Path(__file__).resolve().parent / "fixtures" / "model-configs" / \
        "meta-llama--Llama-3.1-8B"
    code, out, err = run_cli("explain-log", path, "--model-dir", model)
    _clean(code, out, err, "explain-log with a 5,000-digit version")
    assert code == 2, out[-300:]


def test_underscore_digits_in_context_get_the_token_count_paragraph():
    # int('32_768') is 32768; kvfit takes ASCII digits only, as everywhere else
    code, out, err = run_cli(QWEN, "--hardware", "h100-80", "--context", "32_768")
    assert code == 2 and out == ""
    assert err.startswith("kvfit: usage error: context '32_768' is not a token count.")
    assert err.count("\n") == 1


@pytest.mark.parametrize("flag", ["--gpus", "--context", "--utilization"])
def test_space_around_a_number_is_the_number(flag):
    clean = {"--gpus": "8", "--context": "8", "--utilization": "0.8"}[flag]
    base = [QWEN, "--hardware", "h100-80", "--weight-gib", "61", "--json"]
    code, out, err = run_cli(*base, flag, f" {clean}")
    code2, out2, _ = run_cli(*base, flag, clean)
    spaced, plain = json.loads(out), json.loads(out2)
    # the report quotes the flag as given ("user: --context  8"); the rest is the same answer
    assert spaced.pop("context_source").replace("  ", " ") == plain.pop("context_source")
    assert (code, spaced) == (code2, plain) and code in (0, 1), err
