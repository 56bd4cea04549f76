"""The TOML presets as the product brief writes them load: `check = ["vllm"]` lists in the
[engine] table, relative engine.python paths, and the calibration example's [engine] and
[calibration] tables."""

from __future__ import annotations

import pytest

from kvfit.cli.preset import load_preset

from conftest import run_cli

# Copied from the brief's "Reusable TOML presets" section.
INKLING = """\
# inkling-b200.toml
model = "thinkingmachines/Inkling-NVFP4"
hardware = "b200-180"
gpus = 8
context = "1m"
kv_dtype = "bf16"
utilization = 0.90
tp = 8

[engine]
check = ["vllm"]
python = ".engine-envs/vllm/bin/python"
probe = "config"
tp = 8
timeout = 300
require_pass = false

[output]
json = true
"""
# The brief's "Calibrate on the target serving host" preset.
CALIBRATION = """\
model = "openai/gpt-oss-120b"
system = "dgx-spark"
nodes = 1
context = 90000
kv_dtype = "bf16"
tp = 1

[engine]
check = "vllm"
python = "/opt/vllm/bin/python"
probe = "config"

[calibration]
engine = "vllm"
mode = "launch"
python = "/opt/vllm/bin/python"
output_tokens = 1
max_concurrency = 32
requests_per_concurrency = 1
startup_timeout = 1800
request_timeout = 7200
metrics_interval = 1.0
stop_on_failure = true
"""


def test_the_brief_inkling_preset_loads(tmp_path):
    path = tmp_path / "inkling-b200.toml"
    path.write_text(INKLING)
    values = load_preset(path)
    assert values["check_engine"] == "vllm"          # ["vllm"] -> vllm
    assert values["engine_python"] == str(tmp_path / ".engine-envs/vllm/bin/python")
    assert (values["model"], values["hardware"], values["gpus"], values["context"],
            values["tp"], values["engine_tp"], values["json"]) == (
        "thinkingmachines/Inkling-NVFP4", "b200-180", 8, "1m", 8, 8, True)


def test_the_brief_calibration_preset_loads(tmp_path):
    path = tmp_path / "deployment.toml"
    path.write_text(CALIBRATION)
    values = load_preset(path, for_calibration=True)
    assert values["check_engine"] == "vllm" and values["system"] == "dgx-spark"


@pytest.mark.parametrize("check,want", [
    ('["vllm"]', "vllm"), ('["sglang"]', "sglang"), ('["vllm", "sglang"]', "all"),
    ('["sglang", "vllm"]', "all"), ('["all"]', "all"), ('"vllm"', "vllm"),
])
def test_engine_check_lists(tmp_path, check, want):
    path = tmp_path / "p.toml"
    path.write_text(f'model = "x"\n[engine]\ncheck = {check}\n')
    assert load_preset(path)["check_engine"] == want


@pytest.mark.parametrize("check,needle", [
    ('["trtllm"]', "lists ['trtllm']"), ("[]", "lists no engine"),
    ("[1]", "should be a list of strings"), ("8", "should be str or list"),
])
def test_bad_engine_check_lists_exit_2(tmp_path, check, needle):
    path = tmp_path / "p.toml"
    path.write_text(f'model = "Qwen/Qwen3-32B"\n[engine]\ncheck = {check}\n')
    code, _, err = run_cli(path, "--offline")
    assert code == 2 and needle in err and "Traceback" not in err, err
    assert err.count("\n") == 1, err


def test_the_inkling_preset_runs_to_the_engine_check(tmp_path):
    """With no serving environment at .engine-envs/, the run stops at one clear paragraph
    about that path (the preset itself is accepted)."""
    path = tmp_path / "inkling-b200.toml"
    path.write_text(INKLING)
    code, _, err = run_cli(path, "--offline")
    assert code == 2 and "--engine-python" in err and "no such file" in err, err
