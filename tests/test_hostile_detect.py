"""`--hardware auto` against a hostile nvidia-smi (a fake first on PATH, NVML off): output that
is not UTF-8, figures of hundreds of digits, free memory above the total, hundreds of MB of
output, output that never ends. Each exits 2 with one paragraph, in a child process capped
at 512 MiB (tests/hostile/bounded.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile.bounded import refused, run_bounded

from conftest import run_cli, run_json

QWEN = Path(__file__).resolve().parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def smi(tmp_path, monkeypatch):
    """smi(body): a fake nvidia-smi running the shell `body`; returns the env for a child."""
    def install(body: str) -> dict:
        tool = tmp_path / "nvidia-smi"
        tool.write_text(f"#!/bin/sh\n{body}\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
        monkeypatch.setattr("kvfit.hardware.nvml.load", lambda: None)
        return {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    return install


def _plan(env, *more):
    return run_bounded(QWEN, "--hardware", "auto", "--context", "4k", *more, env=env)


def test_bytes_that_are_not_utf8(smi):
    # was: UnicodeDecodeError from subprocess.run(text=True), exit 70
    env = smi(r"printf 'NVIDIA H100 \377\376 80GB, 81559, 80000\n'")
    refused(*_plan(env), "not UTF-8 text")


@pytest.mark.parametrize("column", [1, 2])
def test_a_400_digit_memory_figure(smi, column):
    # was: int(float('9' * 400)) = OverflowError, exit 70
    figures = ["81559", "80000"]
    figures[column - 1] = "9" * 400
    env = smi(f"echo '{H100}, {figures[0]}, {figures[1]}'")
    refused(*_plan(env), "not a number of MiB from 0 to")


@pytest.mark.parametrize("figure", ["١٢٣", "8e4", "-5", "1_000", "inf", "nan", "²"])
def test_memory_figures_not_written_in_ascii_digits(smi, figure):
    env = smi(f"echo '{H100}, {figure}, 80000'")
    refused(*_plan(env), "memory figure")


def test_free_memory_above_the_total_is_refused(smi):
    # was: --memory-basis free planned on any free figure over the total (1.56e27 sequences)
    smi(f"echo '{H100}, 81559, 90000000'")
    code, out, err = run_cli(QWEN, "--hardware", "auto", "--memory-basis", "free",
                             "--context", "4k")
    refused(code, out, err, "free memory cannot exceed the total")
    smi(f"echo '{H100}, 81559, 81560'")
    refused(*run_cli(QWEN, "--hardware", "auto", "--context", "4k"), "81,560 MiB free of 81,559")


def test_free_memory_above_the_presets_total_is_refused(smi):
    # nvidia-smi's own total agrees, but an H100 80GB holds 81,559 MiB (its preset's
    # visible memory): 100,000 GiB free on one would plan on memory that is not there
    smi(f"echo '{H100}, 102400000, 102400000'")
    refused(*run_cli(QWEN, "--hardware", "auto", "--memory-basis", "free", "--context", "4k"),
            "whose preset h100-80 has 81,559 MiB in all")


def test_free_memory_equal_to_the_total_plans(smi):
    smi(f"echo '{H100}, 81559, 81559'")
    code, report = run_json(QWEN, "--hardware", "auto", "--memory-basis", "free",
                            "--context", "4k")
    # 81,559 MiB free x 1,048,576 = 85,521,596,416 B on the free basis
    assert code in (0, 1) and report["hardware"]["memory_bytes_per_gpu"] == 81559 * 2**20


def test_300_mb_of_output_is_cut_off(smi):
    # was: all 300 MB read and split into lines (1.2 GB, 30 s)
    env = smi(f"yes '{H100}, 81559, 80000' | head -c 300000000")
    refused(*_plan(env), "printed more than 1,048,576 bytes")


def test_output_that_never_ends(smi):
    env = smi(f"yes '{H100}, 81559, 80000'")
    refused(*_plan(env), "printed more than")


def test_a_tool_that_never_answers_is_stopped(smi, monkeypatch):
    from kvfit.hardware import detect

    smi("sleep 600")
    monkeypatch.setattr(detect, "query", lambda timeout=0.5, q=detect.query: q(timeout))
    refused(*run_cli(QWEN, "--hardware", "auto", "--context", "4k"), "did not answer within")


def test_too_many_gpu_lines(smi):
    env = smi(f"yes '{H100}, 81559, 80000' | head -n 5000")
    refused(*_plan(env), "5,000 lines")


def test_a_huge_gpu_name_is_quoted_short(smi):
    smi(f"echo '{'x' * 5000}, 81559, 80000'")
    code, out, err = run_cli(QWEN, "--hardware", "auto", "--context", "4k")
    refused(code, out, err, "cannot read nvidia-smi's line")
    assert len(err) < 600, err
