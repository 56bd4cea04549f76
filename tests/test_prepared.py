"""kvfit.planner.prepared: one preparation (spec, dtypes, state, weights) per checkpoint and
question, priced on every fleet, with answers identical to a fresh plan per fleet (issue 13:
an audit "evaluates its state once, then prices every fleet and context from those")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.audit.config import load_frontier
from kvfit.audit.run import run
from kvfit.planner import build
from kvfit.planner.build import load_metadata, plan
from kvfit.planner.prepared import Preparations
from kvfit.planner.request import PlanRequest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "audit" / "open-frontier.toml"
QWEN = str(ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B")
FLEETS = [{}, {"hardware": "h100-80", "gpus": 1}, {"hardware": "h100-80", "gpus": 8},
          {"hardware": "b200-180", "gpus": 8}, {"system": "dgx-h100", "nodes": 2}]


@pytest.fixture
def prepares(monkeypatch) -> list:
    """Every call of kvfit.planner.build.prepare, as (request's kv dtype, context, hardware)."""
    calls, real = [], build.prepare

    def counted(req, warnings, meta=None):
        calls.append((req.kv_dtype, req.context, req.hardware))
        return real(req, warnings, meta)

    monkeypatch.setattr(build, "prepare", counted)
    return calls


def _reports(engine: str | None, prepared) -> list[str]:
    meta = load_metadata(PlanRequest(model=QWEN))
    out = []
    for fleet in FLEETS:
        req = PlanRequest(model=QWEN, context="32k", weight_gib=61, engine=engine, suggest=False,
                          **fleet)
        out.append(json.dumps(plan(req, meta=meta, prepared=prepared).to_json(), sort_keys=True))
    return out


@pytest.mark.parametrize("engine", [None, "vllm"])
def test_a_prepared_plan_answers_as_a_fresh_one(engine, prepares):
    fresh = _reports(engine, None)
    assert len(prepares) == len(FLEETS)
    prepares.clear()
    assert _reports(engine, Preparations()) == fresh       # warnings and all, byte for byte
    # Without an engine the fleet never enters the preparation: one for all five. With vLLM
    # its storage layout depends on the GPU's compute capability: none (no fleet), sm_90
    # (H100, DGX H100) and sm_100 (B200) are three.
    assert len(prepares) == (1 if engine is None else 3)


def test_a_different_question_is_prepared_anew(prepares):
    meta = load_metadata(PlanRequest(model=QWEN))
    prepared = Preparations()
    for kv, ctx in (("auto", "32k"), ("fp8", "32k"), ("auto", "16k"), ("auto", "32k")):
        plan(PlanRequest(model=QWEN, context=ctx, kv_dtype=kv, weight_gib=61,
                         hardware="h100-80"), meta=meta, prepared=prepared)
    assert prepares == [("auto", "32k", "h100-80"), ("fp8", "32k", "h100-80"),
                        ("auto", "16k", "h100-80")]


def test_the_bundled_audit_prepares_each_question_once(prepares, monkeypatch):
    # 12 models x 2 contexts, each planned state-only and on the file's 9 fleets (6 GPU counts,
    # 3 system node counts), plus the dtype check's fp8 plan per model (its bf16 side is the
    # state-only plan of the model's first cell, reused): 24 x 10 + 12 = 252 plans. Prepared
    # once per model, context and dtype: 24 + 12.
    report = run(load_frontier(EXAMPLE))
    assert len(prepares) == 24 + 12
    assert sum(1 for kv, _, _ in prepares if kv == "fp8") == 12
    prepares.clear()

    class Fresh:                      # the audit as it was: a new preparation for every plan
        def __call__(self, req, warnings, meta):
            return build.prepare(req, warnings, meta)

    monkeypatch.setattr("kvfit.audit.run.Preparations", Fresh)
    assert run(load_frontier(EXAMPLE)) == report
    assert len(prepares) == 252


def test_only_the_fleet_is_left_out_of_the_key():
    # Every other request field keys a preparation, so a field prepare() reads can never be
    # shared by mistake; the fleet names are real fields (a rename would only cost reuse).
    from kvfit.planner.prepared import FLEET

    assert set(FLEET) == {"hardware", "gpus", "system", "nodes"} <= set(PlanRequest.names())
