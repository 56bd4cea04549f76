"""CLI behaviour: help, version, presets and overrides, exit codes, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def test_help_teaches_exit_codes_and_units():
    with pytest.raises(SystemExit) as info:
        run_cli("--help")
    assert info.value.code == 0


def test_help_text_content(capsys):
    with pytest.raises(SystemExit):
        from kvfit.cli.main import main
        main(["--help"])
    out = capsys.readouterr().out
    for needle in ("exit codes:", "90k = 92,160", "--kv-dtype", "custom:<GiB>"):
        assert needle in out


def test_python_dash_m_and_version():
    proc = subprocess.run([sys.executable, "-m", "kvfit", "--version"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("kvfit ")


def test_list_hardware_text_and_json():
    code, out, _ = run_cli("--list-hardware")
    assert code == 0 and "h100-80" in out and "b300-288" in out
    code, out, _ = run_cli("--list-hardware", "--json")
    rows = {r["id"]: r for r in json.loads(out)}
    # hardware-facts.md: B300 reports 275,040 MiB; H100 SXM 81,559 MiB.
    assert rows["b300-288"]["visible_mib"] == 275040
    assert rows["h100-80"]["visible_mib"] == 81559


@pytest.mark.parametrize(("given", "tokens"), [("90000", 90000), ("90k", 92160), ("1m", 1048576),
                                               ("32K", 32768)])
def test_context_suffixes_are_powers_of_1024(given, tokens):
    code, report = run_json(QWEN, "--context", given, "--allow-context-overflow")
    assert code == 5 and report["context_tokens"] == tokens


def test_declared_maximum_is_the_default_context():
    _, report = run_json(QWEN)
    assert report["context_tokens"] == 40960 == report["max_context_tokens"]


def test_exit_1_when_the_target_is_not_met():
    # 61 GiB of weights on one 80 GB H100: 0.9 x 81,559 MiB = 71.68 GiB budget leaves
    # 10.68 GiB = 1 sequence of 8 GiB at 32k; 5 users cannot fit.
    code, report = run_json(QWEN, "--hardware", "h100-80", "--context", "32k", "--kv-dtype",
                            "bf16", "--weight-gib", "61", "--concurrent-users", "5")
    assert code == 1 and report["fits"] is False
    assert report["layouts"][0]["max_sequences"] == 1
    assert "the target needs 5" in report["layouts"][0]["reason"]


def test_weights_alone_too_big():
    code, report = run_json(QWEN, "--hardware", "h100-80", "--context", "1k", "--weight-gib", "75")
    assert code == 1
    assert report["layouts"][0]["reason"].startswith("weights alone")


@pytest.mark.parametrize("preset", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_preset_runs(preset, snap_text):
    code, out, err = run_cli(preset)
    assert code in (0, 1), err
    assert "Traceback" not in err
    assert out == snap_text


def test_flags_override_the_preset(tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text(f'model = "{QWEN}"\ncontext = "8k"\nkv_dtype = "bf16"\n[output]\njson = true\n')
    code, out, _ = run_cli("--config", preset, "--context", "16k")
    report = json.loads(out)
    assert code == 5 and report["context_tokens"] == 16384
    assert report["input_config"] == str(preset)
    # 64 layers x 4,096 B x 16,384 tokens = 4,294,967,296 B
    assert report["state"]["bytes_per_sequence"] == 4294967296


def test_output_is_deterministic():
    first = run_cli(QWEN, "--hardware", "h100-80", "--gpus", "8", "--json")
    second = run_cli(QWEN, "--hardware", "h100-80", "--gpus", "8", "--json")
    assert first == second
    assert str(ROOT) not in first[1]


def test_must_show_qwen3_32b_numbers():
    # 64 layers x 2 x 8 KV heads x 128 x 2 B x 32,768 = 8,589,934,592; TP=8: 1/8 each.
    code, report = run_json(QWEN, "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                            "--kv-dtype", "bf16")
    assert code == 0
    assert report["state"]["bytes_per_sequence"] == 8589934592
    tp8 = next(x for x in report["layouts"] if x["tp"] == 8)
    assert tp8["per_rank"]["state_bytes_per_sequence"] == 1073741824


def test_readme_support_table_is_current():
    proc = subprocess.run([sys.executable, "tests/tools/support_table.py", "--check"], cwd=ROOT,
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, "run: uv run python tests/tools/support_table.py"


def test_readme_quick_start_commands_are_the_tested_ones():
    readme = (ROOT / "README.md").read_text()
    assert "python3 -m uv run pytest" in readme
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("python3 -m uv run pytest")


def test_users_are_sequences_divided_by_branches():
    # 8 users x 2 resident branches = 16 sequences; max_users = max_sequences // 2
    code, report = run_json(QWEN, "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                            "--kv-dtype", "bf16", "--weight-gib", "61", "--concurrent-users", "8",
                            "--active-sequences-per-user", "2")
    assert report["target"]["required_sequences"] == 16
    for lay in report["layouts"]:
        assert lay["max_users"] == lay["max_sequences"] // 2
    code, text, _ = run_cli(QWEN, "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                            "--kv-dtype", "bf16", "--weight-gib", "61",
                            "--active-sequences-per-user", "2")
    assert "Users served at 2 resident sequences each: TP=1 x DP=8:" in text
