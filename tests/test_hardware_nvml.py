"""`--hardware auto` through NVML (the optional nvidia-ml-py package), with a fake `pynvml`
module driven by the test: names, totals and frees in bytes as NVML reports them, an NVML
that cannot start (falls back to nvidia-smi), and a device whose memory NVML does not
support (GB10's unified memory)."""

from __future__ import annotations

import sys
import types

import pytest

from conftest import run_cli, run_json

MIB = 2**20
PLAN = ("openai/gpt-oss-20b", "--hardware", "auto", "--context", "32k", "--offline")


class NVMLError(Exception):
    pass


def fake_nvml(devices, init_fails=False):
    """A pynvml stand-in: devices = [(name, total_bytes | None, free_bytes | None)]."""
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError
    m.calls = []

    def init():
        m.calls.append("init")
        if init_fails:
            raise NVMLError("Driver Not Loaded")

    def memory(handle):
        name, total, free = devices[handle]
        if total is None:
            raise NVMLError("Not Supported")
        return types.SimpleNamespace(total=total, free=free, used=total - free)

    m.nvmlInit = init
    m.nvmlShutdown = lambda: m.calls.append("shutdown")
    m.nvmlDeviceGetCount = lambda: len(devices)
    m.nvmlDeviceGetHandleByIndex = lambda i: i
    m.nvmlDeviceGetName = lambda h: devices[h][0]
    m.nvmlDeviceGetMemoryInfo = memory
    return m


@pytest.fixture
def nvml(monkeypatch, tmp_path):
    """nvml(devices, init_fails=False): install the fake; PATH has no nvidia-smi."""
    monkeypatch.setenv("PATH", str(tmp_path))

    def install(devices, init_fails=False):
        m = fake_nvml(devices, init_fails)
        monkeypatch.setitem(sys.modules, "pynvml", m)
        return m
    return install


def test_two_rtx_5090_through_nvml(nvml):
    # NVML reports bytes: 32,607 MiB = 34,191,032,320 B; the free memory of the second GPU
    # 30,000 MiB = 31,457,280,000 B. Names come back as str (12.x) or bytes (11.x).
    m = nvml([("NVIDIA GeForce RTX 5090", 32607 * MIB, 31500 * MIB),
              (b"NVIDIA GeForce RTX 5090", 32607 * MIB, 30000 * MIB)])
    code, r = run_json(*PLAN)
    assert code == 0
    assert (r["hardware"]["id"], r["hardware"]["gpus"]) == ("rtx-5090-32", 2)
    d = r["detected_hardware"]
    assert d["source"] == "NVML" and "nvmlDeviceGetMemoryInfo" in d["tool"]
    assert (d["total_mib"], d["free_mib"]) == (32607, 30000)
    assert m.calls == ["init", "shutdown"]
    _, out, _ = run_cli(*PLAN)
    assert "--hardware auto: NVML sees 2 x NVIDIA GeForce RTX 5090" in out


def test_an_nvml_that_cannot_start_falls_back_to_nvidia_smi(nvml, tmp_path):
    nvml([], init_fails=True)
    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559, 80000'\n")
    tool.chmod(0o755)
    code, r = run_json(*PLAN)
    assert code == 0 and r["detected_hardware"]["source"] == "nvidia-smi"
    assert r["hardware"]["id"] == "h100-80"


def test_neither_nvml_nor_nvidia_smi_is_one_clear_paragraph(nvml):
    nvml([], init_fails=True)
    code, _, err = run_cli(*PLAN)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert "no nvidia-smi on PATH" in err and "nvidia-ml-py" in err


def test_unified_memory_without_a_total_maps_with_its_caveat(nvml):
    nvml([("NVIDIA GB10", None, None)])
    code, out, err = run_cli("hardware", "detect")
    assert code == 0, err
    assert "NVML sees 1 x NVIDIA GB10 (memory total not reported)" in out
    assert "dgx-spark" in out and "unified memory" in out
