"""Run an audit: every model x context, every fleet, the oracle and the monotonicity checks."""

from __future__ import annotations

import re
from fractions import Fraction

from ..errors import KvfitError
from ..planner.build import load_metadata, plan
from ..planner.prepared import Preparations
from ..planner.request import PlanRequest
from ..report.words import count
from .config import Frontier
from .oracle import state_bytes
from .weights_check import summary, weights_check


def _plan(m: dict, ctx, offline: bool, engine: str | None = None, **extra):
    """One plan of the audit, answered by the audit's capacity model (its engine, if any), on
    the checkpoint the audit read once (`m["meta"]`; None: the plan reads it and refuses),
    prepared once per context and dtype for all its fleets (`m["prepared"]`). The audit reads
    each fleet's verdict on the plan's own memory basis, so the other basis is not priced."""
    name, version = (None, None)
    if engine:
        from ..engines.spec import parse_engine
        name, version = parse_engine(engine)
    req = PlanRequest(model=m["model"], revision=m.get("revision"), context=ctx,
                      kv_dtype=m.get("kv_dtype", "auto"),
                      weight_gib=m.get("weight_gib"), offline=offline, engine=name,
                      engine_version=version, suggest=False, **extra)
    return plan(req, meta=m.get("meta"), prepared=m.get("prepared"), compare_bases=False)


def _pinned(m: dict, offline: bool) -> dict:
    """The model entry with its checkpoint read once (`meta`) and pinned to the Hub commit it
    resolved to, so every plan of the audit (each context, fleet, oracle, weights and dtype
    check) uses that metadata instead of reading or resolving it again, and its preparations
    (`prepared`: spec, dtypes, state and weights once per context and dtype, priced on every
    fleet). A model that cannot be read is left as given: its plans report the refusal."""
    try:
        meta = load_metadata(PlanRequest(model=m["model"], offline=offline))
    except KvfitError:
        return m
    if meta.origin == "hub" and meta.revision and re.fullmatch(r"[0-9a-f]{40}", meta.revision):
        m = m | {"revision": meta.revision}
    return m | {"meta": meta, "prepared": Preparations()}


def _meta(m: dict, offline: bool):
    """The checkpoint the audit read once (read now if that first read failed)."""
    return m.get("meta") or load_metadata(PlanRequest(model=m["model"], offline=offline))


def _oracle(meta, ctx_tokens: int, report) -> dict:
    width = Fraction(report.dtypes.kv.bytes_per_value)
    expected, how = state_bytes(meta.config, ctx_tokens, width)
    got = report.state.bytes_per_sequence
    return {"formula": how, "expected": expected,
            "agrees": None if expected is None else expected == got}


def _fleet(m: dict, ctx, offline: bool, label: str, engine=None, **where) -> dict:
    try:
        r = _plan(m, ctx, offline, engine, **where)
    except KvfitError as err:
        return {"fleet": label, "status": "refused", "reason": err.message}
    best = r.chosen
    topology_ok = all(x.tp * x.dp == r.hardware.gpus for x in r.layouts
                      if (x.parallelism or "tp") == "tp")
    return {"fleet": label, "status": "answered", "fits": r.fits,
            "memory_bytes_per_gpu": r.hardware.memory_bytes_per_gpu,
            "gpus": r.hardware.gpus, "best": best.label if best else None,
            "max_sequences": best.max_sequences if best else None,
            "capacity_model": r.capacity_model.label, "topology_ok": topology_ok}


def _cell(f: Frontier, m: dict, ctx, plans: dict) -> dict:
    """One model x context: its state-only plan (kept in `plans` for the dtype check), the
    oracle and weights checks, and every fleet."""
    cell = {"family": m["family"], "model": m["model"], "context": ctx,
            "required": m.get("required", True)}
    try:
        r = plans[id(m), ctx] = _plan(m, ctx, f.offline)
    except KvfitError as err:
        return cell | {"status": "refused", "reason": err.message}
    meta = _meta(m, f.offline)
    cell |= {"status": "answered", "architecture": r.architecture.id,
             "revision": r.model.revision, "origin": r.model.origin,
             "context_tokens": r.context_tokens, "kv_dtype": r.kv_dtype,
             "state_bytes": r.state.bytes_per_sequence,
             "weights_bytes": r.weights.bytes, "oracle": _oracle(meta, r.context_tokens, r)}
    check = weights_check(meta, r)
    if check is not None:
        cell["weights_check"] = check
    fleets = [_fleet(m, ctx, f.offline, f"{h['preset']} x {n}", f.engine, hardware=h["preset"],
                     gpus=n) for h in f.hardware for n in h["counts"]]
    fleets += [_fleet(m, ctx, f.offline, f"{s['preset']} x {count(n, 'node')}", f.engine,
                      system=s["preset"], nodes=n) for s in f.systems for n in s["node_counts"]]
    unjudged = [x["fleet"] for x in fleets if x["status"] == "answered" and x["fits"] is None]
    if unjudged:      # state without a verdict is not coverage: a gate must not pass on it
        cell |= {"status": "not judged", "reason": f"no fit judged on {len(unjudged)} of "
                 f"{count(len(fleets), 'fleet')} (weights unknown: no weight files, index or "
                 "config estimate)"}
    return cell | {"fleets": fleets}


def run(f: Frontier, quiet: bool = False, stream=None) -> dict:
    """The audit report (JSON-ready); progress per cell on a terminal's stderr unless `quiet`."""
    from ..progress import progress
    from .checks import coverage, monotonicity

    models = [_pinned(m, f.offline) for m in f.models]
    todo = [(m, ctx) for m in models for ctx in m["contexts"]]
    cells, plans = [], {}
    with progress("audit", total=len(todo), stream=stream, quiet=quiet) as shown:
        for m, ctx in todo:
            shown.step(f"{m['model']} at {ctx}")
            cells.append(_cell(f, m, ctx, plans))
    dtype = [_dtype_check(f, m, plans) for m in models]
    problems = monotonicity(cells) + [p for p in dtype if p]
    cov = coverage(cells)
    oracle_fail = [c for c in cells if c.get("oracle", {}).get("agrees") is False]
    ok = (cov["coverage"] >= f.min_coverage and cov["family_coverage"] >= f.min_family_coverage
          and not problems and not oracle_fail)
    return {"audit_version": 1, "name": f.name, "offline": f.offline,
            "thresholds": {"min_coverage": f.min_coverage,
                           "min_family_coverage": f.min_family_coverage},
            "coverage": cov, "cells": cells, "problems": problems,
            "oracle": {"checked": sum(1 for c in cells if c.get("oracle", {}).get("agrees")
                                      is not None), "disagreements": len(oracle_fail)},
            "weights_check": summary(cells), "passed": ok}


def _dtype_check(f: Frontier, m: dict, plans: dict) -> str | None:
    """A 1-byte cache never needs more state than the model's own dtype (the model's own
    being the cell's state-only plan at its first context, `plans`)."""
    ctx = m["contexts"][0]
    try:
        wide = plans.get((id(m), ctx)) or _plan(m, ctx, f.offline)
        narrow = plan(PlanRequest(model=m["model"], revision=m.get("revision"), context=ctx,
                                  kv_dtype="fp8",
                                  weight_gib=m.get("weight_gib"), offline=f.offline),
                      meta=m.get("meta"), prepared=m.get("prepared"))
    except KvfitError:
        return None
    if narrow.state.bytes_per_sequence > wide.state.bytes_per_sequence:
        return (f"{m['model']} at {ctx}: fp8 state {narrow.state.bytes_per_sequence} B "
                f"exceeds {wide.kv_dtype} state {wide.state.bytes_per_sequence} B")
    return None
