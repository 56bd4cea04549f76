"""Placements on one topology: the per-GPU budget, every layout, the winners, and why.

Used by a plain plan, by the system search (once per candidate) and by the inverse
questions (once per probe). All sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError
from ..model.base import ABSENT
from ..model.plan import BasisComparison, Hardware, Layout, Target
from ..model.summary import LayoutSummary
from ..report import reasons
from . import systems
from .constraints import Verdict
from .layouts import (
    Budget,
    best_of,
    layout,
    layout_of,
    recommend,
    summary,
    tp_candidates,
    tp_problems,
)
from .pp_layouts import check_request, dcp_components, dcp_problems, dcp_size, pp_layout

GIB, MIB = 1024**3, 1024**2
OTHER_BASIS = {"visible": "nominal", "nominal": "visible", "free": "visible"}


def topology(req) -> systems.Topology | None:
    """The request's topology (None without --hardware / --system)."""
    return systems.from_request(req)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one topology's layouts answer: the recommendation, the best node-local and best
    any-fabric layouts, and the verdict."""

    recommended: LayoutSummary | None
    best_scale_up_local: LayoutSummary | None
    best_any_fabric: LayoutSummary | None
    fits: bool | None


def target(req) -> Target:
    """Users x resident sequences per user, validated."""
    users = systems.count("concurrent-users", req.concurrent_users)
    per = systems.count("active-sequences-per-user", req.active_sequences_per_user)
    return Target(concurrent_users=users, active_sequences_per_user=per,
                  required_sequences=users * per)


def budget(req, acc, basis: str | None = None) -> tuple[Budget, dict]:
    """The per-GPU budget on `basis` (default: the request's) and its Hardware fields."""
    basis = basis or req.memory_basis
    if not 0 < req.utilization <= 1:
        raise UsageError(f"--utilization {req.utilization} must be in (0, 1].")
    if not 0 <= req.runtime_reserve_gib < 100_000:
        raise UsageError(f"--runtime-reserve-gib {req.runtime_reserve_gib} must be >= 0.")
    if basis not in OTHER_BASIS:
        raise UsageError(f"--memory-basis {basis!r}: choose visible or nominal.")
    gib = req.device_memory_gib
    if gib is not None and (isinstance(gib, bool) or not 0 < gib <= 100_000):
        raise UsageError(f"--device-memory-gib {gib} must be a size in GiB from 0 to 100000.")
    mem, detail = acc.memory(basis, gib)
    if basis == "free" and gib is None:       # --hardware auto --memory-basis free
        free = req.detected["free_mib"]     # what nvidia-smi reported (kvfit.hardware.detect)
        mem, detail = free * MIB, (f"free: {free:,} MiB on the least free GPU, reported by "
                                   "nvidia-smi when the plan ran")
    b = Budget(mem, req.utilization, round(req.runtime_reserve_gib * GIB))
    return b, {"id": acc.id, "name": acc.name, "memory_bytes_per_gpu": mem,
               "memory_basis": "override" if gib is not None else basis,
               "basis_detail": detail, "utilization": req.utilization,
               "runtime_reserve_bytes": b.reserve_bytes, "budget_bytes_per_gpu": b.budget_bytes}


def replication(tp: int, comps) -> list:
    """State that TP copies rather than splits, at TP = `tp`: one entry per component with
    its copies per sequence across the TP group (the note is written from the same numbers)."""
    out = []
    whole = [c.name for c in comps if c.heads is None and c.kind != "none"]
    if whole and tp > 1:
        out.append(dict(
            components=tuple(whole), heads=None, tp=tp, copies=tp,
            note=f"{', '.join(whole)}: one shared head, replicated on every TP rank, so the "
                 f"{tp} ranks of a group hold {tp} copies of each sequence's state"))
    for c in comps:
        if c.heads is not None and tp > c.heads:
            n = tp // c.heads
            out.append(dict(
                components=(c.name,), heads=c.heads, tp=tp, copies=n,
                note=f"{c.name}: {c.heads} heads < TP={tp}, each rank keeps 1 head, so the "
                     f"{tp} ranks of a group hold {n} copies of each sequence's state"))
    if not out:
        return out
    from ..model.layout import StateCopies  # here: most plans copy no state
    return [StateCopies(**x) for x in out]


def check_tp(req, topo) -> int:
    """The request's PP size, with --pp and --tp checked against the topology."""
    pp = check_request(req, topo)
    if req.tp is not None and (req.tp < 1 or (topo.gpus // pp) % req.tp):
        where = (f"--gpus {topo.gpus}" if topo.system is None
                 else f"the {topo.gpus} GPUs of {topo.nodes} x {topo.system.id}")
        where += f" / --pp {pp}" if pp > 1 else ""
        raise UsageError(f"--tp {req.tp} must divide {where}.")
    return pp


def evaluate(req, m, topo, b: Budget, comps, required: int, ctx: int | None = None
             ) -> list[Layout]:
    """Every layout on `topo` at context `ctx` (default the plan's): plain TP x DP, plus
    attention-DP + EP when asked for, each judged by the plan's one capacity model."""
    ctx = m.ctx if ctx is None else ctx
    pp = check_tp(req, topo)
    judge = m.judge
    dcp = dcp_size(req)
    per_rank = dcp_components(comps, dcp)   # the static bound's state under DCP

    per_user = req.active_sequences_per_user

    def extras(attention_tp: int, moe_tp: int, group: int | None) -> dict:
        return _extras(m, comps, attention_tp, moe_tp, group)

    def one(t):
        more = extras(t, t, None)
        if pp == 1 and dcp == 1:            # plain TP: its facts once per plan (_tp_facts)
            return layout(t, topo, m.weights, comps, b, required, *_tp_facts(m, comps, t),
                          more=more, per_user=per_user)
        problems = tp_problems(t, comps, m.divides) + list(_verdict(judge, t, t).problems)
        problems += dcp_problems(req, t, comps)
        if pp > 1:
            return pp_layout(t, pp, topo, m, per_rank, b, required, problems,
                             _verdict(judge, t, t).extra_bytes, req.pp_layer_partition,
                             more=more, per_user=per_user)
        return layout(t, topo, m.weights, per_rank, b, required, problems,
                      _verdict(judge, t, t).extra_bytes, more=more, per_user=per_user)

    out = [one(t) for t in tp_candidates(topo.gpus // pp, req.tp)
           if req.dp is None or req.parallelism != "tp" or topo.gpus // (t * pp) == req.dp]
    if req.parallelism != "tp":
        from .dpa import dpa_layouts
        out += [x for x in dpa_layouts(req.parallelism, topo, m.ownership, comps, b, required,
                                       m.divides, req.tp, judge, extras, per_user,
                                       m.weights.replicated)
                if (req.attention_dp is None or x.attention_dp == req.attention_dp)
                and (req.attention_tp is None or x.attention_tp == req.attention_tp)
                and (req.dp is None or x.dp == req.dp)]
    if not out:
        raise UsageError(_no_layout(req, topo))
    return [_engine(req, m, lay, comps, ctx, topo, b, required) for lay in out]


def _extras(m, comps, attention_tp: int, moe_tp: int, group: int | None) -> dict:
    """A layout's engine layout checks and the state its attention TP copies (Layout fields),
    once per plan for these components and sizes."""
    def produce():
        checks = _verdict(m.judge, attention_tp, moe_tp, group).checks
        copies = tuple(replication(attention_tp, comps))
        return {"engine_constraints": checks or ABSENT, "copies": copies,
                "replication": tuple(c.note for c in copies)}
    return _per_tp(m, comps, ("more", attention_tp, moe_tp, group), produce)


def _engine(req, m, lay: Layout, comps, ctx: int, topo, b: Budget, required: int) -> Layout:
    """The layout as the plan's capacity model answers it (the static layout itself, or the
    engine's prediction in its place), with the users it serves."""
    out = m.capacity.apply(lay, comps, ctx, topo.accelerator, b.memory_bytes, m.weights,
                           required)
    if out is lay:
        return lay
    ms, per_user = out.max_sequences, req.active_sequences_per_user
    return replace(out, max_users=None if ms is None or not per_user else ms // per_user)


def _verdict(judge, dense_tp: int, moe_tp: int, group: int | None = None):
    """The engines' layout-constraint verdict (an empty one without a judge)."""
    return judge.check(dense_tp, moe_tp, group) if judge is not None else Verdict()


def _per_tp(m, comps, key: tuple, produce):
    """produce() once per plan for these components (`m.per_tp`; a search or an inverse
    question evaluates the same TP sizes on topology after topology)."""
    slot = m.per_tp.get((id(comps), *key))
    if slot is None or slot[0] is not comps:    # kept with its components, so ids stay theirs
        slot = m.per_tp[(id(comps), *key)] = (comps, produce())
    return slot[1]


def _tp_facts(m, comps, t: int) -> tuple[list[str], int, int]:
    """What plain TP=t is on any topology: why it is invalid (model divisibility, engine
    refusals), the engine's padding bytes per rank, and per-rank state bytes per sequence."""
    def produce():
        v = _verdict(m.judge, t, t)
        return (tp_problems(t, comps, m.divides) + list(v.problems), v.extra_bytes,
                sum(c.per_rank(t) for c in comps))

    invalid, extra, state = _per_tp(m, comps, ("tp", t), produce)
    return list(invalid), extra, state


def _no_layout(req, topo) -> str:
    fixed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in (
        ("tp", req.tp), ("dp", req.dp), ("attention_dp", req.attention_dp),
        ("attention_tp", req.attention_tp)) if v is not None)
    return (f"no {req.parallelism} layout on {topo.gpus} GPU(s) has {fixed}: TP x DP must equal "
            "the GPU count (and, with attention-DP, the attention groups must divide the model "
            "group).")


def outcome(layouts: list[Layout], weights_known: bool) -> Outcome:
    """The recommendation, the best node-local and best any-fabric layouts, and the verdict."""
    rec = recommend(layouts)
    local, _ = best_of([x for x in layouts if x.placement == systems.NODE_LOCAL])
    anyf, _ = best_of(layouts)
    chosen = layout_of(layouts, rec)
    fits = chosen.fits if chosen else False
    if not weights_known and (chosen is None or fits is not False):
        fits = None         # unknown weights: judged only when a stated engine pool misses
    return Outcome(rec, summary(local), summary(anyf), fits)


def run_topology(req, m, topo, comps, required: int, basis: str | None = None,
                 ctx: int | None = None) -> tuple[list[Layout], Outcome, Hardware]:
    """(layouts, outcome, hardware) of one topology on one memory basis."""
    b, hw = budget(req, topo.accelerator, basis)
    layouts = evaluate(req, m, topo, b, comps, required, ctx)
    return (layouts, outcome(layouts, m.weights.bytes is not None),
            Hardware(**hw, **systems.section(topo),
                     utilization_basis=m.capacity.utilization_basis))


def compare_basis(req, m, topo, comps, required: int, used: Outcome, hw: Hardware,
                  ctx: int | None = None) -> BasisComparison | None:
    """What the other memory basis would answer, and why the two differ (None when equal)."""
    other = OTHER_BASIS[req.memory_basis]
    acc = topo.accelerator
    if req.device_memory_gib is not None or acc.memory(other)[0] == hw.memory_bytes_per_gpu:
        return None
    _, alt, alt_hw = run_topology(req, m, topo, comps, required, other, ctx)
    a, o = hw.memory_bytes_per_gpu, alt_hw.memory_bytes_per_gpu
    n_used = used.recommended.max_sequences if used.recommended else None
    n_alt = alt.recommended.max_sequences if alt.recommended else None
    why = reasons.BasisDifference(req.memory_basis, a, hw.basis_detail, other, o,
                                  alt_hw.basis_detail, req.utilization, n_used, n_alt,
                                  bool(acc.visible_mib and other == "visible"))
    return BasisComparison(basis=req.memory_basis, other_basis=other, memory_bytes_per_gpu=a,
                           other_memory_bytes_per_gpu=o,
                           budget_bytes_per_gpu=hw.budget_bytes_per_gpu,
                           other_budget_bytes_per_gpu=alt_hw.budget_bytes_per_gpu,
                           max_sequences=n_used, other_max_sequences=n_alt,
                           other_recommended=alt.recommended, other_fits=alt.fits,
                           explanation=str(why))


def warn(topo, acc, out: Outcome, warnings: list[str]) -> None:
    """Warnings about unified memory and cross-domain recommendations."""
    if acc.unified:
        warnings.append(f"{acc.name} has unified memory shared with the CPU and OS; what the "
                        "GPU can allocate changes with host load. Treat the budget as a plan.")
    rec = out.recommended
    if rec and rec.placement == systems.CROSS_DOMAIN:
        warnings.append(f"The recommended layout {rec.label} spans {rec.domains} scale-up "
                        "domains: it runs over the scale-out network and is unqualified until "
                        "tested on that fabric. best_scale_up_local gives the best node-local "
                        "layout.")


def copy_notes(layouts: list[Layout], rec: LayoutSummary | None, comps) -> list[str]:
    """Why the winner beats the widest plain TP layout when TP copies per-sequence state, and
    (with attention-DP) how TP+EP and DP+EP of one expert group differ."""
    plain = [x for x in layouts if x.parallelism == "tp" and x.valid
             and x.max_sequences is not None]
    split = []
    if any(x.parallelism != "tp" for x in layouts):      # attention-DP layouts: their notes
        from .dpa_notes import split_note
        split = [n for n in (split_note(layouts, comps),) if n]
    if rec is None or not plain:
        return split
    big = max(plain, key=lambda x: x.tp)
    copies = big.copies or ()
    if not copies or rec.id == big.id or rec.max_sequences <= big.max_sequences:
        return split
    if rec.parallelism != "tp":
        from .dpa_notes import attention_group_note
        note = attention_group_note(rec, big, comps)
        if note:
            return [note] + split
    return [str(reasons.CopiesBeaten(
        rec.label, rec.max_sequences, big.label, big.max_sequences, big.tp,
        tuple((c.components, c.copies) for c in copies), rec.parallelism != "tp"))] + split


@dataclass(frozen=True, slots=True)
class Placed:
    """One topology's placement: the target, the hardware, every layout, what they answer,
    the notes on copies, and the other memory basis' answer (ABSENT when not compared)."""

    target: Target
    hardware: Hardware | None
    layouts: tuple[Layout, ...]
    outcome: Outcome
    notes: tuple[str, ...] = ()
    comparison: BasisComparison | None = ABSENT

    def fields(self) -> dict:
        """The Report fields it sets (keyword arguments of kvfit.model.plan.Report)."""
        out = self.outcome
        return {"target": self.target, "hardware": self.hardware, "layouts": self.layouts,
                "recommended": out.recommended, "best_scale_up_local": out.best_scale_up_local,
                "best_any_fabric": out.best_any_fabric, "fits": out.fits,
                "placement_notes": self.notes,
                **({} if self.comparison is ABSENT else
                   {"memory_basis_comparison": self.comparison})}


def plan_placements(req, m, topo, warnings: list[str], ctx: int | None = None,
                    compare_bases: bool = True) -> Placed:
    """The placement of a Report for one topology (or a state-only report).
    compare_bases=False: the other memory basis is not evaluated and the report has no
    memory_basis_comparison (for callers that read only the verdict, as the audit does)."""
    t = target(req)
    ctx = m.ctx if ctx is None else ctx
    comps = m.at(ctx)
    if topo is None:
        if req.gpus is not None or req.tp is not None or req.pp is not None:
            raise UsageError("--gpus, --tp and --pp need --hardware (or --system).")
        return Placed(t, None, (), Outcome(None, None, None, None))
    layouts, out, hw = run_topology(req, m, topo, comps, t.required_sequences, None, ctx)
    warn(topo, topo.accelerator, out, warnings)
    placed = Placed(t, hw, tuple(layouts), out, tuple(copy_notes(layouts, out.recommended,
                                                                  comps)))
    if compare_bases:
        placed = replace(placed, comparison=compare_basis(req, m, topo, comps,
                                                          t.required_sequences, out, hw, ctx))
    return placed
