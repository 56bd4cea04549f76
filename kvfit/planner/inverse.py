"""Inverse questions: the longest context that still fits, and the fewest accelerators.

`--max-context`: for every layout, the largest context C (tokens, 1..the --context given or
the declared maximum) at which the layout still holds the target's sequences. Capacity
never grows with context (every retention kind keeps a non-decreasing number of entries),
so a binary search is exact. The report is then drawn at the best layout's C.

`--min-gpus`: the fewest accelerators of a --hardware preset (1..--gpus, default 1,024)
on which some layout holds the target; the report is drawn at that count.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from ..model.plan import Layout
from ..model.search import ContextRow, Inverse
from . import placements, systems
from .layouts import layout_of
from .sections import state_sections

DEFAULT_MAX_GPUS = 1024


@dataclass(frozen=True, slots=True)
class Answer:
    """An inverse question's answer: the Report fields it sets (`fields`, keyword arguments of
    kvfit.model.plan.Report), its `inverse` part and the recommended layout in full."""

    fields: dict
    inverse: Inverse
    chosen: Layout | None


def _answer(fields: dict, placed, inverse: Inverse) -> Answer:
    out = placed.outcome
    return Answer(fields | {"inverse": inverse}, inverse,
                  layout_of(placed.layouts, out.recommended))


def _need_weights(m, flag: str) -> None:
    if m.weights.bytes is None:
        raise UsageError(f"{flag} needs the checkpoint's weight bytes; pass --weight-gib or a "
                         "checkpoint with weight files or an index.")


def _fits_by_id(req, m, topo, b, required: int, ctx: int, memo: dict) -> dict[str, Layout]:
    """{layout id: layout} at context `ctx` (memoised per context)."""
    if ctx not in memo:
        layouts = placements.evaluate(req, m, topo, b, m.at(ctx), required, ctx)
        memo[ctx] = {x.id: x for x in layouts}
    return memo[ctx]


def _longest(ok, upper: int) -> int | None:
    """Largest c in [1, upper] with ok(c), for ok true up to some point then false."""
    if not ok(1):
        return None
    lo, hi = 1, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


def max_context(req, m, warnings: list[str]) -> Answer:
    """The --max-context report: per-layout longest contexts, drawn at the best one."""
    topo = placements.topology(req)
    if topo is None:
        raise UsageError("--max-context needs --hardware (with --gpus) or --system.")
    if req.min_gpus:
        raise UsageError("--max-context and --min-gpus are separate questions; ask one.")
    _need_weights(m, "--max-context")
    required = placements.target(req).required_sequences
    b, _ = placements.budget(req, topo.accelerator)
    memo: dict = {}
    ids = list(_fits_by_id(req, m, topo, b, required, m.ctx, memo))
    rows = []
    for lid in ids:
        best = _longest(lambda c, i=lid: _fits_by_id(req, m, topo, b, required, c,
                                                     memo)[i].fits is True, m.ctx)
        lay = _fits_by_id(req, m, topo, b, required, best or m.ctx, memo)[lid]
        rows.append(ContextRow(id=lid, label=lay.label, placement=lay.placement,
                               max_context_tokens=best,
                               max_sequences=lay.max_sequences if best else None))
    answered = [r for r in rows if r.max_context_tokens]
    top = max((r.max_context_tokens for r in answered), default=None)
    ctx = top or m.ctx
    comps = m.at(ctx)
    placed = placements.plan_placements(req, m, topo, warnings, ctx)
    report = state_sections(m, comps, ctx) | placed.fields()
    if top is not None:
        report["context_source"] = (f"--max-context: the longest context (1..{m.ctx:,}) at "
                                    "which the target still fits")
    report["fits"] = top is not None
    return _answer(report, placed, Inverse(
        question="max_context", upper_bound_tokens=m.ctx, required_sequences=required,
        per_layout=tuple(rows), max_context_tokens=top,
        best=next((r for r in answered if r.max_context_tokens == top), None)))


def min_gpus(req, m, warnings: list[str]) -> Answer:
    """The --min-gpus report: the fewest accelerators of --hardware that hold the target."""
    if req.system is not None or req.hardware is None:
        raise UsageError("--min-gpus needs --hardware (an accelerator preset); for complete "
                         "systems use --systems ID --max-nodes N.")
    _need_weights(m, "--min-gpus")
    from ..hardware.presets import find_accelerator

    acc = find_accelerator(req.hardware)
    ceiling = systems.count("gpus", DEFAULT_MAX_GPUS if req.gpus is None else req.gpus)
    required = placements.target(req).required_sequences
    found = None
    for n in range(1, ceiling + 1):
        if req.tp is not None and n % req.tp:
            continue
        if req.pp is not None and n % (req.pp * (req.tp or 1)):
            continue
        _, out, _ = placements.run_topology(req, m, systems.of_hardware(acc, n), m.comps,
                                            required)
        if out.best_any_fabric and out.best_any_fabric.fits:
            found = n
            break
    topo = systems.of_hardware(acc, found or ceiling)
    placed = placements.plan_placements(req, m, topo, warnings)
    report = placed.fields()
    report["fits"] = found is not None
    return _answer(report, placed, Inverse(
        question="min_gpus", hardware=acc.id, searched_up_to=ceiling,
        required_sequences=required, min_gpus=found,
        recommended=placed.outcome.recommended if found else None))
