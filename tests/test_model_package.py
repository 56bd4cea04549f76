"""kvfit.model is split by seam and imports none of its submodules itself: its HOME table
names the submodule of every part, and a plain plan imports only the parts it builds."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys

from kvfit import model


def test_home_names_every_part_and_its_submodule():
    found = {}
    for name in model.SUBMODULES:
        mod = importlib.import_module(f"kvfit.model.{name}")
        for k, v in vars(mod).items():
            if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == mod.__name__ \
                    and k not in ("Part",):
                found[k] = name
    assert found == model.HOME
    assert model.part("Quantity").__name__ == "Quantity"


def test_a_plain_plan_imports_no_search_sweep_tune_or_engine_parts(tmp_path):
    """A static plan (no engine, no search, sweep or tune) builds the plan core only."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    qwen = root / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
    code = ("import sys\nfrom kvfit.planner.build import plan\nfrom kvfit.planner.request import "
            f"PlanRequest\nplan(PlanRequest(model={str(qwen)!r}, context='32k', hardware='h100-80',"
            " gpus=8, weight_gib=61)).to_json()\n"
            "print(sorted(m for m in sys.modules if m.startswith('kvfit.model.')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    loaded = set(eval(run.stdout.strip().splitlines()[-1]))
    assert loaded.isdisjoint({"kvfit.model.search", "kvfit.model.sweep", "kvfit.model.tune",
                              "kvfit.model.engine"}), loaded
    assert {"kvfit.model.base", "kvfit.model.plan"} <= loaded
