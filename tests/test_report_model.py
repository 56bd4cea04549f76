"""The plan's answer is one frozen, typed Report (kvfit.model): nothing can be assigned
to it or its parts, its JSON is the schema's, and the renderers read it by attribute."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kvfit.model import base as mb
from kvfit.model import plan as rm
from kvfit.planner.build import plan
from kvfit.planner.request import PlanRequest

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"


@pytest.fixture(scope="module")
def report() -> rm.Report:
    return plan(PlanRequest(model=str(QWEN), context="32k", hardware="h100-80", gpus=8,
                            weight_gib=61, concurrent_users=100))


def _parts(obj, seen=None):
    """Every dataclass part reachable from `obj` (the Report, its layouts, their per-rank...)."""
    seen = [] if seen is None else seen
    if dataclasses.is_dataclass(obj):
        if not any(p is obj for p in seen):
            seen.append(obj)
            for f in dataclasses.fields(obj):
                _parts(getattr(obj, f.name), seen)
    elif isinstance(obj, (tuple, mb.Frozen)):
        for v in (obj.values() if isinstance(obj, mb.Frozen) else obj):
            _parts(v, seen)
    return seen


def test_plan_returns_a_frozen_report(report):
    assert isinstance(report, rm.Report)
    assert isinstance(report.layouts[0], rm.Layout)
    assert isinstance(report.layouts[0].per_rank, rm.PerRank)
    assert isinstance(report.hardware, rm.Hardware) and isinstance(report.model, rm.ModelInfo)
    for cls in (rm.Report, rm.Layout, rm.PerRank, rm.Hardware):
        assert cls.__dataclass_params__.frozen and "__slots__" in vars(cls)


def test_no_field_of_the_report_or_of_any_part_can_be_assigned(report):
    parts = _parts(report)
    kinds = {type(p).__name__ for p in parts}
    # the report, its model/architecture/state/weights/hardware/target parts, each layout
    # with its per-rank memory, the recommendation and the other basis' comparison
    assert {"Report", "ModelInfo", "Architecture", "ArchField", "LayerSet", "Dtypes", "Dtype",
            "State", "StateComponent", "WeightBytes", "Quantization", "Target", "Hardware",
            "Layout", "PerRank", "LayoutSummary", "CapacityModel", "BasisComparison"} <= kinds
    for part in parts:
        for f in dataclasses.fields(part):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(part, f.name, getattr(part, f.name))
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.layouts[0].per_rank.weights_bytes = 0
    with pytest.raises(AttributeError):      # slots: no attribute can be added either
        object.__setattr__(report, "extra", 1)


def test_lists_and_open_mappings_are_immutable_too(report):
    assert isinstance(report.layouts, tuple) and isinstance(report.warnings, tuple)
    sets = report.architecture.layer_sets
    assert isinstance(sets, mb.Frozen)
    with pytest.raises(TypeError):
        sets["all"] = None
    frozen = mb.freeze({"a": [1, {"b": [2]}]})
    assert frozen["a"][1]["b"] == (2,)
    with pytest.raises(AttributeError):
        frozen._data = {}
    assert mb.to_plain(frozen) == {"a": [1, {"b": [2]}]}


def test_the_recommended_layout_is_carried_in_full_and_stays_out_of_the_json(report):
    assert report.chosen is not None
    assert any(x is report.chosen for x in report.layouts)
    assert report.chosen.id == report.recommended.id
    doc = report.to_json()
    assert "chosen" not in doc
    assert doc["recommended"]["id"] == report.chosen.id


def test_absent_keys_stay_absent_and_render_as_plain_json(report):
    doc = report.to_json()
    for key in ("search", "inverse", "sweep", "engine_command", "engine_check", "headers",
                "rope_scaling", "detected_hardware", "expert_parallel"):
        assert key not in doc and not getattr(report, key)
    assert isinstance(doc["layouts"], list) and isinstance(doc["layouts"][0]["per_rank"], dict)
    assert "static" not in doc["layouts"][0]            # no engine: no static bound beside it


def test_every_in_process_plan_of_the_suite_is_validated_against_the_schema():
    """tests/conftest.py wraps kvfit.planner.build.plan: every Report the suite makes in-process
    has its JSON validated (and run_cli validates every --json plan report it prints)."""
    import kvfit.planner.build as build
    assert hasattr(build.plan, "__wrapped__") and plan is build.plan


# `name["key"]` or `name.get("key"` - a string-key read (a list literal `["x"]` is not one)
READ = re.compile(r'(?<=[\w\)\]])\["[a-z_]+"\]|\.get\("')
# reads that are not of the report: the plot's own series (built by series() from the
# report, then drawn)
# check_text.py renders the engine_check section, the preflight's own open JSON (a Frozen
# mapping in the Report, not a typed part), so it reads that mapping by key.
NOT_THE_REPORT = {"plot.py": ("_curves", "_bars", "draw", "write_plot", "_y_scale", "_add_bar"),
                  "check_text.py": ("_engine_lines", "render_text")}


def _functions(text: str) -> dict[str, str]:
    """{top-level function name: its source} of a module."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"def (\w+)", line)
        if m:
            name = m.group(1)
        elif line and not line[0].isspace():
            name = None
        if name:
            out[name] = out.get(name, "") + line + "\n"
    return out


def test_the_renderers_read_the_report_by_attribute_only():
    found = {}
    renderers = sorted((ROOT / "kvfit" / "report").glob("*.py"))
    assert {p.name for p in renderers} >= {"text.py", "facts_text.py", "engine_text.py",
                                           "questions_text.py", "sweep_text.py", "plot.py",
                                           "jsonout.py"}
    for path in renderers:
        skip = NOT_THE_REPORT.get(path.name, ())
        text = path.read_text()
        for name, body in [("<module>", text)] if not skip else _functions(text).items():
            if name in skip:
                continue
            hits = [line.strip() for line in body.splitlines() if READ.search(line)]
            if hits:
                found[f"{path.name}:{name}"] = hits
    assert found == {}


def test_the_renderers_never_call_the_planner():
    for path in (ROOT / "kvfit" / "report").glob("*.py"):
        assert not re.search(r"from \.\.plan|import kvfit\.plan|from kvfit\.plan",
                             path.read_text()), path.name
