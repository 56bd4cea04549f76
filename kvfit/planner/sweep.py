"""`--sweep AXIS=v1,v2,...`: one plan per grid cell, each from the plan's own capacity model.

A sweep does not compute a second answer: every cell is `kvfit.planner.build.plan` run on the
request with the swept field replaced (the engine's prediction when an engine answers), on the
checkpoint metadata the first cell resolved. A cell keeps the per-layout capacity, verdict and
per-rank memory of that plan; the report of the sweep is the plan of its first cell with a
`sweep` object holding every cell. Up to two axes (a second --sweep makes a grid).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from ..errors import KvfitError, UsageError
from ..model.base import Frozen
from ..model.plan import Report
from ..model.sweep import Sweep, SweepAxis, SweepCell, SweepLayout
from ..numbers import shown
from .context import parse_context
from .memory_bars import memory_bars

MAX_AXES, MAX_VALUES = 2, 64


@dataclass(frozen=True, slots=True)
class AxisKind:
    """A sweepable knob: the request field, the flags it replaces, how one value is read."""

    field: str
    flags: tuple[str, ...]
    what: str


AXES = {
    "context": AxisKind("context", ("context", "max_model_len", "context_length"),
                        "tokens per sequence as --context takes them (8k, 32768, 1m)"),
    "users": AxisKind("concurrent_users", ("concurrent_users",),
                      "concurrent users (whole numbers)"),
    "gpus": AxisKind("gpus", ("gpus",), "accelerators of --hardware (whole numbers)"),
    "nodes": AxisKind("nodes", ("nodes",), "complete systems of --system (whole numbers)"),
    "kv-dtype": AxisKind("kv_dtype", ("kv_dtype", "kv_cache_dtype"),
                         "KV-cache dtypes as --kv-dtype takes them (auto, bf16, fp8, ...)"),
}
# Questions a sweep cannot combine with (each cell is a plain plan).
REFUSED = {"systems": "--systems", "min_gpus": "--min-gpus", "max_context": "--max-context",
           "check_engine": "--check-engine", "print_command": "--print-command"}


@dataclass(frozen=True, slots=True)
class Axis:
    """One parsed --sweep: its name, the values as typed and their request values."""

    name: str
    labels: tuple[str, ...]
    values: tuple

    @property
    def field(self) -> str:
        return AXES[self.name].field

    def section(self) -> SweepAxis:
        return SweepAxis(axis=self.name, field=self.field, values=tuple(self.labels))


def _value(name: str, text: str, spec: str):
    """(request value, key that identifies duplicates) of one swept value."""
    if name == "context":
        n = parse_context(text)
        return text, n
    if name == "kv-dtype":
        if text.lower() == "auto":
            return "auto", "auto"
        from ..dtypes import explicit
        dt = explicit(text, f"--sweep {spec}:")
        return text, dt.name
    from ..numbers import parse_whole

    n = parse_whole(text)
    if n is None or not 0 < n <= 1_000_000:
        raise UsageError(f"--sweep {shown(spec)}: {shown(text)} is not a whole number from 1 to "
                         "1,000,000.", hint=f"{name} takes {AXES[name].what}.")
    return n, n


def parse_axis(spec: str) -> Axis:
    """One `AXIS=v1,v2,...`, validated: a known axis, values that parse, no duplicates."""
    name, eq, rest = str(spec).partition("=")
    name = name.strip().lower().replace("_", "-")
    known = ", ".join(AXES)
    if not eq:
        raise UsageError(f"--sweep {shown(spec)} is not AXIS=v1,v2,...", hint=f"Axes: {known}; e.g. "
                         "--sweep context=8k,32k,128k.")
    if name not in AXES:
        close = difflib.get_close_matches(name, list(AXES), n=1)
        raise UsageError(f"--sweep {shown(spec)}: unknown axis {shown(name)}"
                         + (f" (did you mean {close[0]}?)" if close else "") + ".",
                         hint=f"Axes: {known}.")
    texts = [t.strip() for t in rest.split(",")]
    if not rest.strip() or any(not t for t in texts):
        raise UsageError(f"--sweep {shown(spec)}: empty value(s); give a comma-separated list such as "
                         f"{name}=" + {"context": "8k,32k,128k", "kv-dtype": "bf16,fp8"}.get(
                             name, "1,2,4") + ".", hint=f"{name} takes {AXES[name].what}.")
    if len(texts) > MAX_VALUES:
        raise UsageError(f"--sweep {name}: {len(texts)} values; at most {MAX_VALUES} per axis.")
    seen: dict = {}
    values = []
    for t in texts:
        value, key = _value(name, t, spec)
        if key in seen:
            raise UsageError(f"--sweep {shown(spec)}: {shown(t)} repeats {shown(seen[key])} "
                             f"(the same {name}).",
                             hint="Give each value once.")
        seen[key] = t
        values.append(value)
    return Axis(name, tuple(texts), tuple(values))


def parse_axes(specs: list[str], flags: dict, values: dict) -> list[Axis]:
    """Every --sweep, checked against each other and the flags given (`flags`: the parsed
    command line before spellings resolve; `values`: the request fields after)."""
    if len(specs) > MAX_AXES:
        raise UsageError(f"{len(specs)} --sweep axes: at most {MAX_AXES} (a grid).",
                         hint="Run one sweep per extra axis.")
    axes = [parse_axis(s) for s in specs]
    names = [a.name for a in axes]
    for a in axes:
        if names.count(a.name) > 1:
            raise UsageError(f"--sweep {a.name} is given twice.", hint="Give each axis once; "
                             "a second axis makes a grid.")
        given = [f"--{f.replace('_', '-')}" for f in AXES[a.name].flags if f in flags]
        if given:
            raise UsageError(f"--sweep {a.name} and {', '.join(given)} set the same knob.",
                             hint="Drop one of them: the sweep gives every value.")
    for key, flag in REFUSED.items():
        if values.get(key):
            raise UsageError(f"--sweep with {flag}: a sweep answers plain plans, one per cell.",
                             hint=f"Run {flag} without --sweep"
                             + (", or use --engine for the engine's capacity in every cell."
                                if key == "print_command" else "."))
    return axes


def cells_of(axes: list[Axis]) -> list[dict]:
    """Every grid cell in order (the first axis varies slowest): {axis: (label, value)}."""
    cells: list[dict] = [{}]
    for a in axes:
        cells = [c | {a.name: (lab, v)} for c in cells for lab, v in zip(a.labels, a.values,
                                                                          strict=True)]
    return cells


def cell_result(report: Report, labels: dict) -> SweepCell:
    """What a sweep keeps of one plan: its target, verdict, recommendation and every layout's
    capacity, reason and per-rank memory (the plan's own numbers, not recomputed)."""
    hw, target = report.hardware, report.target
    layouts = tuple(SweepLayout(id=x.id, label=x.label, valid=x.valid,
                                max_sequences=x.max_sequences, fits=x.fits, reason=x.reason,
                                memory_per_rank=memory_bars(x, hw)) for x in report.layouts)
    return SweepCell(values=Frozen(labels), context_tokens=report.context_tokens,
                     hypothetical=report.hypothetical, kv_dtype=report.kv_dtype,
                     gpus=hw.gpus if hw else None,
                     concurrent_users=target.concurrent_users if target else None,
                     required_sequences=target.required_sequences if target else None,
                     fits=report.fits, recommended=report.recommended, layouts=layouts)


def run(req, axes: list[Axis]) -> Report:
    """The first cell's report with a `sweep` object of every cell (axis order)."""
    from .build import load_metadata, plan
    from .request import check_request

    check_request(req)                 # the plan's own refusal, before any cell names itself
    meta = load_metadata(req)          # resolved once: no cell varies what the Hub is asked
    first, cells, warnings = None, [], []
    for i, cell in enumerate(cells_of(axes)):
        fields = {AXES[n].field: v for n, (_, v) in cell.items()}
        cell_req = replace(req, **fields, suggest=req.suggest and i == 0)
        try:
            report = plan(cell_req, meta=meta)
        except KvfitError as err:
            where = ", ".join(f"{n}={lab}" for n, (lab, _) in cell.items())
            err.message = f"sweep cell {where}: {err.message}"
            raise
        labels = {n: lab for n, (lab, _) in cell.items()}
        cells.append(cell_result(report, labels))
        warnings += [w for w in report.warnings if w not in warnings]
        first = first or report
    return replace(first, sweep=Sweep(axes=tuple(a.section() for a in axes),
                                      cells=tuple(cells), warnings=tuple(warnings),
                                      exit_code=exit_code(cells)))


def exit_code(cells: list) -> int:
    """1 if some cell does not meet the target; else 5 if some cell could not be judged
    (weights unknown, no hardware); else 0: every cell meets it."""
    verdicts = [c.fits for c in cells]
    if False in verdicts:
        return 1
    return 5 if None in verdicts else 0
