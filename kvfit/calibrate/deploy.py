"""The plan behind a calibration: read the preset, run kvfit's plan, name the deployment.

The plan gives the prediction the sweep tests (the recommended layout's max resident
sequences at the context) and the layout a managed launch must preserve (TP, DP). A launch
(not a dry run) also runs the installed-engine preflight (kvfit.preflight) in the
calibration interpreter at the recommended TP; the preset's [engine] check options are not
run by calibrate.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import KvfitError, UsageError
from . import config

_NOT_ONE = {"systems": "--systems searches several families", "min_gpus": "--min-gpus",
            "max_context": "--max-context"}


@dataclass(slots=True)
class Deployment:
    """What the sweep needs from the plan (report: the plan report's JSON, which the
    calibration document embeds; planned: the plan's Report)."""

    report: dict
    model: str
    revision: str | None
    context: int
    kv_dtype: str
    tp: int
    dp: int
    layout: str
    parallelism: str
    predicted: int | None
    nodes: int
    hardware: str
    utilization: float | None
    request: object = None
    engine_opts: dict = field(default_factory=dict)
    meta: object = None
    preflight: dict | None = None
    engine_prediction: dict | None = None
    planned: object = None


def load(path: Path, values: dict) -> tuple[dict, config.Calibration]:
    """(plan request values, Calibration) from a preset that has a [calibration] table; values
    are its request keys as the front end read them (kvfit.cli.preset.load_preset)."""
    values = dict(values)
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("calibration")
    except (OSError, tomllib.TOMLDecodeError):   # load_preset already reported these
        table = None
    if not isinstance(table, dict):
        raise UsageError(f"preset {path.name} has no [calibration] table.",
                         hint="Add one (see README, 'Calibrate on the target host').")
    for key, what in _NOT_ONE.items():
        if values.get(key):
            raise UsageError(f"calibrate needs one deployment; the preset asks for {what}.",
                             hint="Remove it and name one hardware/system with tp.")
    values["input_config"] = str(path)
    return values, config.parse(table, path.parent, values.get("engine_python"))


_CHECK_KEYS = ("check_engine", "engine_python", "engine_probe", "engine_timeout", "engine_tp",
               "require_engine_pass")


def _request(values: dict):
    """The PlanRequest, without --check-engine options: calibrate runs its own preflight."""
    from ..planner.request import PlanRequest, normalize_tp

    values = {k: v for k, v in values.items() if k not in _CHECK_KEYS}
    return PlanRequest(**normalize_tp(values, "preset tp"))


def preflight(dep: Deployment, cal: config.Calibration) -> dict | None:
    """Run the installed-engine preflight (kvfit.preflight) in calibration.python at the
    recommended TP; the engine's result, also kept in the plan report as engine_check."""
    from ..preflight import engine_check, run_check

    req = replace(dep.request, check_engine=cal.engine, engine_python=cal.python,
                  engine_probe=dep.engine_opts.get("engine_probe") or "config",
                  engine_timeout=dep.engine_opts.get("engine_timeout"), engine_tp=dep.tp,
                  require_engine_pass=False)
    section = run_check(engine_check(req), req, dep.meta, dep.planned)
    dep.report["engine_check"] = section
    found = [r for r in section["results"] if r["engine"] == cal.engine]
    dep.preflight = found[0] if found else None
    return dep.preflight


def engine_prediction(report, engine: str) -> dict | None:
    """The engine's capacity for the recommended layout, read from the plan's Report (which
    the engine answered: kvfit.planner.capacity), or None when the engine model could not
    answer."""
    lay = report.chosen
    if lay is None or lay.capacity_model != engine:
        return None
    from ..engines import get
    from ..model.base import ABSENT
    basis = get(engine).concurrency_basis(lay.engine)
    per = lay.sequences_per_replica
    return {"per_replica": None if per is ABSENT else per, "total": lay.max_sequences,
            "engine": engine, "version": lay.engine.version, "basis": basis}


def plan(values: dict, cal: config.Calibration) -> Deployment:
    """Run the plan for the preset and name the deployment it recommends."""
    from ..planner.build import load_metadata
    from ..planner.build import plan as run_plan

    req = _request(values)
    try:      # the engine answers the plan, so the predicted boundary is the engine's
        planned = run_plan(replace(req, engine=cal.engine, engine_version=cal.version))
        report = planned.to_json()
    except KvfitError as exc:
        planned = run_plan(req)
        report = planned.to_json()
        report["warnings"].append(f"engine prediction unavailable: {exc.message}")
    rec = report.get("recommended")
    if not rec:
        raise UsageError("the plan has no layout to calibrate (no TP x DP split is valid).")
    if cal.output_tokens >= report["context_tokens"]:
        raise UsageError(f"calibration.output_tokens {cal.output_tokens:,} leaves no input "
                         f"tokens at a context of {report['context_tokens']:,}; each request "
                         "is context - output_tokens input tokens.",
                         hint="Lower output_tokens or raise the preset's context.")
    hw = report.get("hardware") or {}
    meta_model = report["model"]
    model = req.model if meta_model.get("origin") == "local" else (
        meta_model.get("source") or req.model)
    dep = Deployment(report, model, meta_model.get("revision"), report["context_tokens"],
                     report["kv_dtype"], rec["tp"], rec["dp"], rec["label"],
                     rec.get("parallelism", "tp"), rec.get("max_sequences"),
                     hw.get("nodes") or 1, f"{hw.get('gpus')} x {hw.get('id')}",
                     values.get("utilization"), request=req,
                     engine_opts={k: values.get(k) for k in ("engine_probe", "engine_timeout")},
                     planned=planned)
    pinned = replace(req, revision=dep.revision) if dep.revision else req
    dep.meta = load_metadata(pinned)      # pinned to the commit the plan read: from the cache
    dep.engine_prediction = engine_prediction(planned, cal.engine)
    return dep
