"""Accelerators people own (issue 27, item 6): RTX 3090, 4080, 5080, RTX A6000 and L40 presets
from published figures, each with its sources; A10, A100 40 GB and L40S were there already.
A driver-visible total is set only where a published nvidia-smi output shows one."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kvfit.hardware.presets import find_accelerator

from conftest import run_cli

SPECS = Path(__file__).resolve().parents[1] / "specs" / "hardware"

# id: (nominal GiB, visible MiB or None, compute capability)
# RTX 3090: club-3090#390 nvidia-smi "24576MiB" (= 24 x 1024, no ECC on GeForce).
# RTX A6000: thamada/gls RTX_A6000_x9_smi.py, ECC on: 48 x 1024 x 15/16 - 12 = 46,068 MiB.
# RTX 4080, RTX 5080, L40: no published nvidia-smi total was found -> None.
PRESETS = {"rtx-3090-24": (24, 24576, "8.6"), "rtx-4080-16": (16, None, "8.9"),
           "rtx-5080-16": (16, None, "12.0"), "rtx-a6000-48": (48, 46068, "8.6"),
           "l40-48": (48, None, "8.9"), "a10-24": (24, 23028, "8.6"),
           "a100-40": (40, 40960, "8.0"), "l40s-48": (48, 46068, "8.9")}


@pytest.mark.parametrize("pid", PRESETS)
def test_preset_figures_and_sources(pid):
    acc = find_accelerator(pid)
    nominal, visible, cc = PRESETS[pid]
    assert (acc.nominal_gib, acc.visible_mib, acc.compute_capability) == (nominal, visible, cc)
    spec = YAML(typ="safe").load((SPECS / f"{pid}.yaml").read_text())
    backed = {k for src in spec["sources"] for k in src["supports"]}
    assert all(src.get("url") or src.get("ref") for src in spec["sources"])
    # every figure that is set names where it came from
    assert {"nominal_gib", "compute_capability"} <= backed
    assert (visible is None) or "visible_mib" in backed
    assert (spec["bandwidth_tb_s"] is None) or "bandwidth_tb_s" in backed


@pytest.mark.parametrize("pid", ["rtx-4080-16", "rtx-5080-16", "l40-48"])
def test_without_a_visible_figure_the_plan_says_nominal(pid):
    code, text, err = run_cli("Qwen/Qwen3-8B", "--offline", "--hardware", pid, "--context", "8k")
    assert code in (0, 1), err
    nominal = PRESETS[pid][0]
    assert f"(nominal: {nominal} GiB (no visible figure known);" in text
