"""Presets under the command line (issue 27, item 2): model-specific keys cannot cross models,
each replaced preset value is said in one line, preset errors name the key and file:line
(relative paths resolved), and [output] json makes errors a JSON object with the exit code."""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.cli.main import _request
from kvfit.cli.plan_args import build_parser

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
QWEN_PRESET = ROOT / "examples" / "qwen3-32b-h100.toml"
# examples/qwen3-32b-h100.toml: line 9 is `weight_gib = 61.0`, line 7 `context = "32k"`.
WEIGHT_LINE = next(i for i, line in enumerate(QWEN_PRESET.read_text().splitlines(), 1)
                   if line.startswith("weight_gib"))


def _notes(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("kvfit: note:")]


def test_model_specific_key_with_another_model_exits_2_naming_it():
    code, out, err = run_cli("openai/gpt-oss-20b", "--config", str(QWEN_PRESET))
    assert code == 2 and out == ""
    assert err.count("\n") == 1                                   # one paragraph
    assert f"preset key 'weight_gib' ({QWEN_PRESET}:{WEIGHT_LINE}) = 61.0" in err
    assert "openai/gpt-oss-20b" in err and "--weight-gib" in err   # how to override


def test_the_same_error_is_json_with_its_exit_code():
    code, out, _ = run_cli("openai/gpt-oss-20b", "--config", str(QWEN_PRESET), "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["exit_code"] == 2 and error["fields"] == ["weight_gib"]
    assert error["kind"] == "usage error" and "weight_gib" in error["message"]


def test_overriding_the_key_plans_and_each_replaced_value_is_one_line():
    code, out, err = run_cli("openai/gpt-oss-20b", "--config", str(QWEN_PRESET),
                             "--weight-gib", "13", "--offline", "--json")
    assert code == 0
    assert json.loads(out)["weights"]["source"] == "user"
    notes = _notes(err)
    assert any("--weight-gib 13.0 on the command line replaces preset key 'weight_gib' "
               f"({QWEN_PRESET}:{WEIGHT_LINE}) = 61.0" in n for n in notes)
    assert any(n.startswith("kvfit: note: model on the command line replaces preset key "
                            "'model'") for n in notes)
    assert len(notes) == 2


def test_the_preset_own_model_keeps_its_weight_gib():
    code, out, err = run_cli(str(QWEN_PRESET), "--json")
    assert code == 0 and _notes(err) == []
    assert json.loads(out)["weights"]["bytes"] == 61 * 2**30


def _req(tmp_path, text: str, *argv: str):
    preset = tmp_path / "p.toml"
    preset.write_text(text)
    return preset, _request(vars(build_parser().parse_args([str(preset), *argv])))


def test_command_line_tp_beats_the_preset_engine_tp_and_says_so(tmp_path, capsys):
    text = ("model = 'Qwen/Qwen3-32B'\nhardware = 'h100-80'\ngpus = 8\n[engine]\n"
            "check = 'vllm'\ntp = 8\n")
    preset, req = _req(tmp_path, text, "--tp", "4")
    notes = _notes(capsys.readouterr().err)
    assert req.tp == 4 and req.engine_tp is None
    assert notes == [f"kvfit: note: --tp 4 on the command line replaces preset key 'engine.tp' "
                     f"({preset.resolve()}:6) = 8 for the engine check too."]
    from kvfit.preflight.options import _tp
    assert _tp(req) == (4, "--tp")
    # without --tp the preset's engine TP is used, and named by its key, not a flag
    preset, req = _req(tmp_path, text)
    assert _tp(req) == (8, f"preset key 'engine.tp' ({preset.resolve()}:6)")


def test_a_system_on_the_command_line_replaces_the_preset_hardware(tmp_path, capsys):
    _, req = _req(tmp_path, "model = 'Qwen/Qwen3-32B'\nhardware = 'h100-80'\ngpus = 8\n",
                  "--system", "dgx-b300")
    assert (req.system, req.hardware, req.gpus) == ("dgx-b300", None, None)
    assert len(_notes(capsys.readouterr().err)) == 2       # hardware, gpus: one line each


def test_a_preset_value_error_names_the_key_and_line(tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text("model = 'Qwen/Qwen3-32B'\nhardware = 'h100-80'\ngpus = 8\n"
                      "kv_dtype = 'fp7'\n")
    code, _, err = run_cli(str(preset), "--offline")
    assert code == 2
    assert err.startswith(f"kvfit: usage error: preset key 'kv_dtype' ({preset.resolve()}:4) "
                          "= 'fp7' (read as --kv-dtype): ")
    preset.write_text("model = 'Qwen/Qwen3-32B'\n\ngpus = '8'\n")
    code, _, err = run_cli(str(preset), "--offline")
    assert code == 2 and f"({preset.resolve()}:3)" in err and "'gpus'" in err


def test_a_relative_model_is_resolved_from_the_preset_folder(tmp_path, monkeypatch):
    (tmp_path / "presets").mkdir()
    preset = tmp_path / "presets" / "m.toml"
    preset.write_text("model = './no-such-checkpoint'\nhardware = 'h100-80'\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("presets/m.toml")
    assert code == 2
    assert f"preset key 'model' ({preset.resolve()}:1)" in err
    assert str(tmp_path.resolve() / "presets" / "no-such-checkpoint") in err


def test_output_json_in_the_preset_makes_errors_json(tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text("model = 'Qwen/Qwen3-32B'\nhardware = 'h100-80'\ngpus = 3\ntp = 2\n"
                      "[output]\njson = true\n")
    code, out, err = run_cli(str(preset), "--offline")
    error = json.loads(out)["error"]
    assert code == 2 and error["exit_code"] == 2
    assert f"preset key 'tp' ({preset.resolve()}:4)" in error["message"]
    assert err.startswith("kvfit: usage error:")            # the paragraph stays on stderr
