"""kvfit.model is split by seam and imports none of its submodules itself: its HOME table
names the submodule of every part, and a plain plan imports only the parts it builds."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from kvfit import model

QWEN = Path(__file__).resolve().parents[1] / "tests" / "architectures" / "qwen3" / "configs" / \
    "Qwen--Qwen3-32B"


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
    root = Path(__file__).resolve().parents[1]
    qwen = QWEN
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


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_an_engine_prediction_is_typed_all_the_way_down(engine):
    """The engines build their prediction typed (kvfit.model.engine): under --engine every
    layout's `engine` part holds parts, Frozen mappings, tuples and scalars only, never a
    dict or a list, and its JSON is the same object read back."""
    from kvfit.model.base import Frozen, to_plain
    from kvfit.model.engine import EngineMemory, EnginePrediction, Quantity
    from kvfit.planner.build import plan
    from kvfit.planner.request import PlanRequest

    report = plan(PlanRequest(model=str(QWEN), context="32k", hardware="h100-80", gpus=8,
                              weight_gib=61, engine=engine))

    def walk(value):
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name))
        elif isinstance(value, (tuple, Frozen)):
            for v in (value.values() if isinstance(value, Frozen) else value):
                walk(v)
        else:
            assert not isinstance(value, (dict, list)), value

    lays = [lay for lay in report.layouts if lay.engine]
    assert lays
    for lay in lays:
        e = lay.engine
        assert type(e) is EnginePrediction and e.engine == engine and e.version_basis
        assert isinstance(e.pool_bytes if engine == "sglang" else e.num_gpu_blocks, Quantity)
        assert engine == "sglang" or isinstance(e.memory, EngineMemory)
        walk(e)
        assert to_plain(e) == report.to_json()["layouts"][report.layouts.index(lay)]["engine"]
