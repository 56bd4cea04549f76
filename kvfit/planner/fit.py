"""`kvfit fit`: plan many checkpoints on one target with the single plan's own code path.

Every candidate is planned by kvfit.planner.build.plan() from the request the single-plan CLI
builds out of the same plan flags (the CLI hands run() its request builder), so each row can be
checked by running `kvfit MODEL <the same flags>`. Nothing here computes a capacity of its own:
the rows read the report's recommended layout (Report.chosen), its
verdict (the single plan's exit code, also handed in) and its weights section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import KvfitError
from ..model.base import ABSENT
from ..textsafe import safe
from .request import PlanRequest

FITS, DOES_NOT_FIT, NOT_JUDGED, REFUSED = "fits", "does not fit", "not judged", "refused"
STATUSES = (FITS, DOES_NOT_FIT, NOT_JUDGED, REFUSED)
WEIGHT_BASIS = {"safetensors index": "index", "config estimate": "estimate"}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A checkpoint to plan: a catalog repo id or a local folder, and its quantized siblings."""

    model: str
    origin: str                     # "catalog" or "local"
    siblings: tuple[str, ...] = ()


def _one_line(text: str) -> str:
    return safe(" ".join(str(text).split()), keep_newlines=False)


def _weights(report) -> dict:
    w = report.weights
    return {"bytes": w.bytes, "source": w.source,
            "basis": WEIGHT_BASIS.get(w.source, w.source), "detail": w.detail}


def _reason(report, status: str, layout) -> str:
    """One line: why the row has its status (the recommended layout's own reason)."""
    layout = layout or next(iter(report.layouts), None)
    if layout is not None and layout.reason:
        return _one_line(layout.reason)
    if status == NOT_JUDGED:
        return "weight bytes unknown: no weight files, index or config estimate"
    return "no layout could be planned"


def row_of(cand: Candidate, report, code: int) -> dict:
    """The fit row of one finished plan (its exit code as a single plan would return it); with
    --tune, the tuned settings' answer."""
    status = {0: FITS, 1: DOES_NOT_FIT}.get(code, NOT_JUDGED)
    best, rec = report.chosen, report.recommended
    short = None
    if rec:
        short = {k: v for k, v in (("id", rec.id), ("label", rec.label), ("tp", rec.tp),
                                   ("dp", rec.dp), ("placement", rec.placement)) if v is not ABSENT}
    row = {"model": cand.model, "origin": cand.origin, "status": status, "exit_code": code,
           "reason": _reason(report, status, best),
           "max_sequences": rec.max_sequences if rec else None,
           "max_users": (best.max_users or None) if best else None,
           "recommended": short,
           "weights": _weights(report), "siblings": list(cand.siblings),
           "revision": report.model.revision,
           "architecture": report.architecture.id}
    return _tuned(row, report) if report.tune else row


def _tuned(row: dict, report) -> dict:
    """The row as the tuned settings answer it (--tune): their verdict, sequences and layout,
    and the settings that changed with the launch command that carries them."""
    t = report.tune
    lay = next((x for x in report.layouts if x.id == t.layout_id), None)
    per_user = report.target.active_sequences_per_user if report.target else 1
    status = {True: FITS, False: DOES_NOT_FIT}.get(t.holds, NOT_JUDGED)
    short = None if lay is None else {k: v for k, v in (
        ("id", lay.id), ("label", lay.label), ("tp", lay.tp), ("dp", lay.dp),
        ("placement", lay.placement)) if v is not ABSENT}
    return row | {"status": status, "reason": _one_line(t.summary),
                  "max_sequences": t.max_sequences, "recommended": short,
                  "max_users": None if t.max_sequences is None else t.max_sequences // per_user,
                  "tune": {"default_max_sequences": t.default_max_sequences,
                           "changed": [{"flag": x.flag, "value": x.recommended,
                                        "text": x.recommended_text}
                                       for x in t.settings if x.changed],
                           "launch": t.command.launch if t.command else None}}


def refused_row(cand: Candidate, err: KvfitError) -> dict:
    """The row of a candidate the single plan refuses (exit 2 there)."""
    return {"model": cand.model, "origin": cand.origin, "status": REFUSED,
            "exit_code": err.exit_code, "reason": _one_line(err.message),
            "max_sequences": None, "max_users": None, "recommended": None,
            "weights": None, "siblings": list(cand.siblings), "revision": None,
            "architecture": None}


def target_of(report) -> dict:
    """What every plan was asked (the same in each report): hardware, context and target."""
    hw = report.hardware.to_json() if report.hardware else {}
    keys = ("id", "name", "gpus", "system", "nodes", "budget_bytes_per_gpu", "utilization")
    return {"hardware": {k: hw.get(k) for k in keys}, "context_tokens": report.context_tokens,
            "target": report.target.to_json() if report.target else None,
            "capacity_model": report.capacity_model.label}


def _rank(row: dict) -> tuple:
    """Best first: most resident sequences, then the smaller weights, then the id."""
    w = (row["weights"] or {}).get("bytes")
    return (-(row["max_sequences"] or 0), w if w is not None else float("inf"), row["model"])


def run(cands: list[Candidate], request_for: Callable[[str], PlanRequest],
        verdict: Callable[[dict], int],
        progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Plan every candidate with the request request_for(model) makes (the single plan's flags
    after the model); verdict(report) is the single plan's exit code. Rows by status, the
    fitting ones best first."""
    from .build import plan

    rows, target = [], None
    for i, cand in enumerate(cands):
        if progress is not None:
            progress(i, len(cands), cand.model)
        try:
            req = request_for(cand.model)
            # suggestions ("what would fit") change no number of the row; not asked for here
            report = plan(replace(req, suggest=False))
        except KvfitError as err:
            rows.append(refused_row(cand, err))
            continue
        rows.append(row_of(cand, report, verdict(report)))
        target = target or target_of(report)
    by = {s: sorted((r for r in rows if r["status"] == s), key=_rank) for s in STATUSES}
    return {"target": target, "planned": len(rows), "counts": {s: len(by[s]) for s in STATUSES}, "rows": by}
