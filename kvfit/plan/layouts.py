"""TP x DP layouts of identical accelerators, and how many sequences each can hold."""

from __future__ import annotations

from dataclasses import dataclass

from ..state.evaluate import ComponentState

GIB = 1024**3


@dataclass(frozen=True)
class Budget:
    """Per-accelerator budget: memory x utilization, minus a fixed runtime reserve (bytes)."""

    memory_bytes: int
    utilization: float
    reserve_bytes: int

    @property
    def budget_bytes(self) -> int:
        return int(self.memory_bytes * self.utilization)


def _gib(n: int) -> str:
    return f"{n / GIB:,.3f} GiB"


def tp_problems(tp: int, components: list[ComponentState], divides: list[tuple[str, int]]):
    """Reasons this TP size is invalid for the model (empty when valid)."""
    out = [f"TP={tp} does not divide {name} = {value}" for name, value in divides
           if value % tp != 0]
    return out + [p for c in components if (p := c.tp_problem(tp))]


def _reason(w, reserve, budget, state, per_replica, total, required):
    if w is None:
        return None, "weight bytes unknown: pass --weight-gib or a checkpoint with weight files"
    left = budget - w - reserve
    if left < 0:
        return False, (f"weights alone ({_gib(w)} per rank) plus the reserve ({_gib(reserve)}) "
                       f"exceed the budget ({_gib(budget)})")
    if per_replica == 0:
        return False, (f"one sequence needs {_gib(state)} per rank but only {_gib(left)} is "
                       "left after weights and reserve")
    if total < required:
        return False, f"holds {total} sequences; the target needs {required}"
    return True, f"holds {total} sequences; the target needs {required}"


def layout(tp: int, gpus: int, weights: int | None, components, budget: Budget,
           required: int, invalid: list[str]) -> dict:
    """One layout's per-rank numbers, capacity and verdict (a JSON-ready dict)."""
    dp = gpus // tp
    state = sum(c.per_rank(tp) for c in components)
    w = None if weights is None else -(-weights // tp)
    base = {"tp": tp, "dp": dp, "valid": not invalid,
            "per_rank": {"weights_bytes": w, "state_bytes_per_sequence": state,
                         "budget_bytes": budget.budget_bytes,
                         "reserve_bytes": budget.reserve_bytes}}
    if invalid:
        return base | {"max_sequences": 0, "sequences_per_replica": 0, "fits": False,
                       "reason": "; ".join(invalid)}
    left = None if w is None else budget.budget_bytes - w - budget.reserve_bytes
    per_replica = None if left is None else (max(0, left) // state if state else 0)
    total = None if per_replica is None else per_replica * dp
    fits, reason = _reason(w, budget.reserve_bytes, budget.budget_bytes, state, per_replica,
                           total, required)
    return base | {"max_sequences": total, "sequences_per_replica": per_replica,
                   "fits": fits, "reason": reason}


def tp_candidates(gpus: int, requested: int | None) -> list[int]:
    """TP sizes to evaluate: the requested one, or every divisor of the GPU count."""
    if requested is not None:
        return [requested]
    return [t for t in range(1, gpus + 1) if gpus % t == 0]


def recommend(layouts: list[dict]) -> dict | None:
    """Most resident sequences, then the smaller TP; only valid layouts with known capacity."""
    ok = [x for x in layouts if x["valid"] and x["max_sequences"] is not None]
    if not ok:
        return None
    best = max(ok, key=lambda x: (x["fits"] is True, x["max_sequences"], -x["tp"]))
    runner = [x for x in ok if x is not best]
    why = f"TP={best['tp']} x DP={best['dp']} holds the most sequences ({best['max_sequences']})"
    if runner:
        nxt = max(runner, key=lambda x: (x["max_sequences"], -x["tp"]))
        why += f"; next best TP={nxt['tp']} x DP={nxt['dp']} holds {nxt['max_sequences']}"
    return {"tp": best["tp"], "dp": best["dp"], "why": why}
