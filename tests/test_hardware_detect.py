"""`--hardware auto` and `kvfit hardware detect`, against a fake `nvidia-smi` put first on PATH
(PATH holds only the fake's folder, so a real nvidia-smi on the test host is never run; NVML
is switched off, so an installed nvidia-ml-py is never asked either: test_hardware_nvml.py)."""

from __future__ import annotations

import pytest

from conftest import run_cli, run_json, validate

RTX = ("NVIDIA GeForce RTX 5090, 32607, 31500", "NVIDIA GeForce RTX 5090, 32607, 30000")
MIB = 2**20


@pytest.fixture
def smi(tmp_path, monkeypatch):
    """smi(lines, code=0): install a fake nvidia-smi printing `lines` and exiting `code`."""
    def install(lines, code=0):
        tool = tmp_path / "nvidia-smi"
        body = "".join(f"echo '{line}'\n" for line in lines)
        tool.write_text(f"#!/bin/sh\n{body}exit {code}\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", str(tmp_path))
        monkeypatch.setattr("kvfit.hardware.nvml.load", lambda: None)   # no NVML: nvidia-smi
    return install


def _clean(code, err, needle):
    assert code == 2, err
    assert needle in err, err
    assert "Traceback" not in err and err.count("\n") == 1, err


PLAN = ("openai/gpt-oss-20b", "--hardware", "auto", "--context", "32k", "--offline")


def test_two_rtx_5090_plan_on_two_presets_and_say_so(smi):
    smi(RTX)
    code, r = run_json(*PLAN)
    assert code == 0
    assert (r["hardware"]["id"], r["hardware"]["gpus"]) == ("rtx-5090-32", 2)
    d = r["detected_hardware"]
    assert (d["count"], d["preset"], d["planned_gpus"], d["total_mib"], d["free_mib"]) == (
        2, "rtx-5090-32", 2, 32607, 30000)
    assert [g["free_mib"] for g in d["gpus"]] == [31500, 30000]
    # the default basis is the preset's visible memory (32,607 MiB in its spec)
    assert r["hardware"]["memory_basis"] == "visible"
    assert r["hardware"]["memory_bytes_per_gpu"] == 32607 * MIB
    code, out, _ = run_cli(*PLAN)
    assert ("--hardware auto: nvidia-smi sees 2 x NVIDIA GeForce RTX 5090 (32,607 MiB total, "
            "30,000 MiB free on the least free); planned on 2 x rtx-5090-32.") in out
    assert "Layouts on 2 x rtx-5090-32" in out


def test_free_basis_budgets_from_the_least_free_gpu(smi):
    smi(RTX)
    code, r = run_json(*PLAN, "--memory-basis", "free")
    hw = r["hardware"]
    assert hw["memory_basis"] == "free" and "30,000 MiB" in hw["basis_detail"]
    # 30,000 MiB x 1,048,576 = 31,457,280,000 B; x utilization 0.9 = 28,311,552,000 B
    assert hw["memory_bytes_per_gpu"] == 31_457_280_000
    assert hw["budget_bytes_per_gpu"] == 28_311_552_000


def test_gpus_takes_the_first_n(smi):
    smi(RTX)
    code, r = run_json(*PLAN, "--gpus", "1")
    assert r["hardware"]["gpus"] == 1 and r["detected_hardware"]["planned_gpus"] == 1
    assert "(the first 1 of 2: --gpus)" in r["detected_hardware"]["summary"]
    code, _, err = run_cli(*PLAN, "--gpus", "3")
    _clean(code, err, "--gpus 3 with --hardware auto: nvidia-smi sees 2 x")


def test_dgx_spark_maps_with_its_unified_memory_caveat(smi):
    smi(["NVIDIA GB10, [N/A], [N/A]"])
    code, r = run_json(*PLAN)
    d = r["detected_hardware"]
    assert r["hardware"]["id"] == "dgx-spark" and d["unified"] is True
    assert d["total_mib"] is None and d["free_mib"] is None
    assert any("unified memory shared with the CPU" in w for w in r["warnings"])
    # the preset's planning default (121.69 GiB), not a figure nvidia-smi gave
    assert "unified memory: 121.69 GiB planning default" in r["hardware"]["basis_detail"]
    code, _, err = run_cli(*PLAN, "--memory-basis", "free")
    _clean(code, err, "nvidia-smi reports no free memory for NVIDIA GB10 (unified memory)")


def test_a_total_unlike_the_preset_is_noted(smi):
    smi(["NVIDIA H100 80GB HBM3, 81559, 81000"] * 2)       # the h100-80 preset's 81,559 MiB
    code, r = run_json(*PLAN)
    assert r["hardware"]["id"] == "h100-80"
    assert not any("the plan uses the preset's figure" in w for w in r["warnings"])
    smi(["NVIDIA GeForce RTX 5090, 24000, 23000"])
    code, r = run_json(*PLAN)
    assert any("nvidia-smi reports 24,000 MiB per GPU, the rtx-5090-32 preset 32,607 MiB"
               in w for w in r["warnings"])


@pytest.mark.parametrize("name,preset", [
    ("NVIDIA H100 80GB HBM3", "h100-80"), ("NVIDIA H100 PCIe", "h100-pcie-80"),
    ("NVIDIA H100 NVL", "h100-nvl-94"), ("NVIDIA H200", "h200-141"),
    ("NVIDIA H200 NVL", "h200-nvl-141"), ("NVIDIA B200", "b200-180"),
    ("NVIDIA A100-SXM4-80GB", "a100-80"), ("NVIDIA A100-SXM4-40GB", "a100-40"),
    ("NVIDIA A100 80GB PCIe", "a100-pcie-80"), ("NVIDIA A10G", "a10g-24"), ("NVIDIA A10", "a10-24"),
    ("NVIDIA L4", "l4-24"), ("NVIDIA L40S", "l40s-48"), ("NVIDIA GeForce RTX 4090", "rtx-4090-24"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-96"),
    ("NVIDIA GH200 480GB", "gh200-96"), ("NVIDIA GB10", "dgx-spark"),
])
def test_names_map_to_presets(name, preset):
    from kvfit.hardware.detect import preset_for
    assert preset_for(name) == preset


def test_unknown_and_mixed_gpus_exit_2(smi):
    smi(["Tesla T4, 15360, 15000"])
    code, _, err = run_cli(*PLAN)
    _clean(code, err, "nvidia-smi reports 'Tesla T4' (15,360 MiB), which no kvfit hardware")
    assert "--hardware custom:15" in err          # 15,360 MiB / 1,024 = 15 GiB
    smi(["NVIDIA H100 80GB HBM3, 81559, 81000", "NVIDIA GeForce RTX 5090, 32607, 31500"])
    code, _, err = run_cli(*PLAN)
    _clean(code, err, "GPUs of 2 kinds")


def test_a_failing_nvidia_smi_exits_2(smi):
    smi(["NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."], 9)
    code, _, err = run_cli(*PLAN)
    _clean(code, err, "nvidia-smi found no usable GPU (exit 9: NVIDIA-SMI has failed")


def test_no_nvidia_smi_is_one_clear_paragraph(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))        # an empty folder: no nvidia-smi
    monkeypatch.setattr("kvfit.hardware.nvml.load", lambda: None)      # and no NVML
    code, _, err = run_cli(*PLAN)
    _clean(code, err, "no nvidia-smi on PATH, so kvfit cannot see a local NVIDIA GPU")
    assert "--hardware h100-80 --gpus 8" in err
    code, _, err = run_cli("hardware", "detect")
    _clean(code, err, "no nvidia-smi on PATH")


def test_free_basis_needs_auto():
    code, _, err = run_cli("openai/gpt-oss-20b", "--hardware", "rtx-5090-32", "--offline",
                           "--memory-basis", "free")
    _clean(code, err, "--memory-basis free budgets from the free memory nvidia-smi reports")


def test_hardware_detect_text_and_json(smi):
    smi(RTX)
    code, out, _ = run_cli("hardware", "detect")
    assert code == 0
    assert out.splitlines()[0] == ("nvidia-smi sees 2 x NVIDIA GeForce RTX 5090 (32,607 MiB "
                                   "total, 30,000 MiB free on the least free); --hardware auto "
                                   "plans on 2 x rtx-5090-32.")
    assert "GPU 1: NVIDIA GeForce RTX 5090  total 32,607 MiB  free 30,000 MiB  -> rtx-5090-32" \
        in out
    code, d = run_json("hardware", "detect")
    assert code == 0 and d["preset"] == "rtx-5090-32" and d["count"] == 2
    assert d["free_mib"] == 30000 and d["unified"] is False
    code, _, err = run_cli("hardware")
    assert code == 2 and "Traceback" not in err


def test_detected_reports_validate_against_the_schema(smi):
    import json
    from pathlib import Path

    schema = json.loads((Path(__file__).parents[1] / "schemas" / "report.schema.json")
                        .read_text())
    smi(RTX)
    for extra in ((), ("--memory-basis", "free"), ("--engine", "vllm")):
        code, r = run_json(*PLAN, *extra)
        validate(r, schema)
    smi(["NVIDIA GB10, [N/A], [N/A]"])
    validate(run_json(*PLAN)[1], schema)
