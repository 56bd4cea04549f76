"""TP x DP layouts of identical accelerators, how many sequences each holds, and which wins."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model.base import ABSENT
from ..model.plan import Layout, PerRank
from ..model.summary import LayoutSummary
from ..report import reasons
from ..state.evaluate import ComponentState
from .systems import Topology, placement


@dataclass(frozen=True, slots=True)
class Budget:
    """Per-accelerator budget: memory x utilization, minus a fixed runtime reserve (bytes)."""

    memory_bytes: int
    utilization: float
    reserve_bytes: int

    @property
    def budget_bytes(self) -> int:
        return int(self.memory_bytes * self.utilization)


def tp_problems(tp: int, components: list[ComponentState], divides: list[tuple[str, int]]):
    """Reasons this TP size is invalid for the model (empty when valid)."""
    out = [f"TP={tp} does not divide {name} = {value}" for name, value in divides
           if value % tp != 0]
    return out + [p for c in components if (p := c.tp_problem(tp))]


def _reason(w, reserve, budget, state, per_group, total, required):
    """(fits, the fact behind the verdict) of one layout."""
    if w is None:
        return None, reasons.WeightsUnknown()
    left = budget - w - reserve
    if left < 0:
        return False, reasons.WeightsOverBudget(w, reserve, budget)
    if per_group == 0:
        return False, reasons.NoRoomForOne(state, left)
    return total >= required, reasons.Holds(total, required)


@dataclass(frozen=True, slots=True)
class Fill:
    """A layout's capacity at one budget: sequences per state-holding group, in all, the
    verdict and its reason, and the per-rank bytes used at that capacity."""

    per_group: int | None
    total: int | None
    fits: bool | None
    reason: str | None
    used: int | None


def capacity(w: int | None, state: int, padding: int, budget: Budget, groups: int,
             required: int) -> Fill:
    """Sequences per state-holding group (a TP replica or an attention-DP group), times
    `groups` such groups; per-rank bytes used at that capacity."""
    reserve = budget.reserve_bytes + padding
    left = None if w is None else budget.budget_bytes - w - reserve
    per_group = None if left is None else (max(0, left) // state if state else 0)
    total = None if per_group is None else per_group * groups
    fits, why = _reason(w, reserve, budget.budget_bytes, state, per_group, total, required)
    used = None if w is None else w + reserve + (per_group or 0) * state
    return Fill(per_group, total, fits, str(why), used)


def judged(head: dict, w: int | None, state: int, budget: Budget, invalid: list[str],
           required: int, groups: int, padding: int = 0, per_rank: dict | None = None,
           more: dict | None = None, per_user: int | None = None) -> Layout:
    """The Layout of `head` (its id, label, sizes and placement), `w` weight and `state` state
    bytes per rank (and the `per_rank` PerRank fields besides), judged: refused for `invalid`
    reasons, else filled to the budget (`groups` state-holding groups); sequences_per_replica
    is the group's (callers with several groups per replica replace it). `more`: other Layout
    fields; `per_user`: sequences per user, for max_users."""
    f = None if invalid else capacity(w, state, padding, budget, groups, required)
    per = PerRank(weights_bytes=w, state_bytes_per_sequence=state,
                  budget_bytes=budget.budget_bytes, reserve_bytes=budget.reserve_bytes,
                  padding_bytes=padding, used_bytes=None if f is None else f.used,
                  **(per_rank or {}))
    if f is None:
        return Layout(**head, valid=False, per_rank=per, max_sequences=0,
                      sequences_per_replica=0, sequences_per_group=0, fits=False,
                      reason="; ".join(invalid), max_users=0 if per_user else None,
                      **(more or {}))
    return Layout(**head, valid=True, per_rank=per, max_sequences=f.total,
                  sequences_per_group=f.per_group, sequences_per_replica=f.per_group,
                  fits=f.fits, reason=f.reason,
                  max_users=None if f.total is None or not per_user else f.total // per_user,
                  **(more or {}))


def layout(tp: int, topo: Topology, weights: int | None, components, budget: Budget,
           required: int, invalid: list[str], extra: int = 0, state: int | None = None,
           more: dict | None = None, per_user: int | None = None) -> Layout:
    """One plain TP x DP layout's per-rank numbers, capacity and verdict; `extra`: bytes per
    rank an engine adds by padding sharded weights; `state`: the per-rank state bytes per
    sequence when already counted (else counted from `components`); `more`, `per_user`: as
    judged() takes them."""
    dp = topo.gpus // tp
    if state is None:
        state = sum(c.per_rank(tp) for c in components)
    w = None if weights is None else -(-weights // tp) + extra
    head = {"id": f"tp{tp}", "parallelism": "tp", "label": f"TP={tp} x DP={dp}", "tp": tp,
            "dp": dp, "group_gpus": tp, **placement(tp, topo)}
    return judged(head, w, state, budget, invalid, required, dp, more=more, per_user=per_user)


def tp_candidates(gpus: int, requested: int | None) -> list[int]:
    """TP sizes to evaluate: the requested one, or every divisor of the GPU count."""
    if requested is not None:
        return [requested]
    small = [t for t in range(1, math.isqrt(gpus) + 1) if gpus % t == 0]   # O(sqrt n)
    return sorted(set(small) | {gpus // t for t in small})


def headroom(x: Layout) -> float:
    """Per-rank bytes left after weights, reserve and padding, in sequences of state (negative
    when the weights alone exceed the budget): how near a layout is to holding one more."""
    p = x.per_rank
    if not p or p.weights_bytes is None:
        return 0.0
    left = p.budget_bytes - p.weights_bytes - p.reserve_bytes - (p.padding_bytes or 0)
    state = p.state_bytes_per_sequence or 1
    return left / state


def _rank(x: Layout) -> tuple:
    """Sort key, best first: fits, most sequences, weights that fit the budget, the nearest
    miss (most room left per rank), fewest domains, smallest group."""
    room = headroom(x)
    return (x.fits is not True, -x.max_sequences, room < 0,
            -room if x.fits is not True else 0, x.domains, x.group_gpus)


def _side(x: Layout) -> reasons.Side:
    return reasons.Side(x.label, x.max_sequences, x.domains, x.group_gpus, headroom(x))


def _why(best: Layout, nxt: Layout | None) -> reasons.Why:
    """Which criterion separated the winner from the runner-up."""
    C = reasons.Criterion
    if nxt is None:
        return reasons.Why(C.ONLY, _side(best))
    a, b = headroom(best), headroom(nxt)
    if best.max_sequences != nxt.max_sequences or best.fits != nxt.fits:
        c = C.MORE_SEQUENCES
    elif best.fits is not True and (a < 0) != (b < 0):
        c = C.WEIGHTS_FIT
    elif best.fits is not True and a != b:
        c = C.NEARER_MISS
    elif best.domains != nxt.domains:
        c = C.FEWER_DOMAINS
    elif best.group_gpus == nxt.group_gpus:
        c = C.LISTED_FIRST
    else:
        c = C.SMALLER_GROUP
    return reasons.Why(c, _side(best), _side(nxt))


def best_of(layouts) -> tuple[Layout | None, Layout | None]:
    """(winner, runner-up) among valid layouts with known capacity."""
    ok = sorted((x for x in layouts if x.valid and x.max_sequences is not None), key=_rank)
    return (ok[0] if ok else None), (ok[1] if len(ok) > 1 else None)


def summary(x: Layout | None, why: str | None = None) -> LayoutSummary | None:
    """The short form of a layout used by `recommended`, best-of and search candidates."""
    if x is None:
        return None
    return LayoutSummary(id=x.id, parallelism=x.parallelism, label=x.label, tp=x.tp, dp=x.dp,
                         attention_dp=x.attention_dp, attention_tp=x.attention_tp, ep=x.ep,
                         placement=x.placement, domains=x.domains,
                         max_sequences=x.max_sequences, fits=x.fits,
                         why=why if why else ABSENT)


def recommend(layouts) -> LayoutSummary | None:
    """Most resident sequences, then fewer scale-up domains, then the smaller group."""
    best, nxt = best_of(layouts)
    return None if best is None else summary(best, str(_why(best, nxt)))


def layout_of(layouts, rec: LayoutSummary | None) -> Layout | None:
    """The full layout a summary (such as `recommended`) names, or None."""
    return next((x for x in layouts if rec and x.id == rec.id), None)
