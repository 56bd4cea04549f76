"""Placements on one topology: the per-GPU budget, every layout, the winners, and why.

Used by a plain plan, by the system search (once per candidate) and by the inverse
questions (once per probe). All sizes are bytes.
"""

from __future__ import annotations

from ..errors import UsageError
from . import systems
from .layouts import Budget, best_of, layout, recommend, summary, tp_candidates, tp_problems

GIB = 1024**3
OTHER_BASIS = {"visible": "nominal", "nominal": "visible"}


def topology(req) -> systems.Topology | None:
    """The request's topology (None without --hardware / --system)."""
    return systems.from_request(req)


def target(req) -> dict:
    """Users x resident sequences per user, validated."""
    users = systems.count("concurrent-users", req.concurrent_users)
    per = systems.count("active-sequences-per-user", req.active_sequences_per_user)
    return {"concurrent_users": users, "active_sequences_per_user": per,
            "required_sequences": users * per}


def budget(req, acc, basis: str | None = None) -> tuple[Budget, dict]:
    """The per-GPU budget on `basis` (default: the request's) and its report fields."""
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
    b = Budget(mem, req.utilization, round(req.runtime_reserve_gib * GIB))
    return b, {"id": acc.id, "name": acc.name, "memory_bytes_per_gpu": mem,
               "memory_basis": "override" if gib is not None else basis,
               "basis_detail": detail, "utilization": req.utilization,
               "runtime_reserve_bytes": b.reserve_bytes, "budget_bytes_per_gpu": b.budget_bytes}


def _replication(tp: int, comps) -> list[str]:
    """State that TP copies rather than splits, at TP = `tp`."""
    whole = [c.name for c in comps if c.heads is None]
    notes = []
    if whole and tp > 1:
        notes.append(f"{', '.join(whole)}: one shared head, replicated on every TP rank, so the "
                     f"{tp} ranks of a group hold {tp} copies of each sequence's state")
    notes += [f"{c.name}: {c.heads} heads < TP={tp}, each rank keeps 1 head "
              f"({tp // c.heads} copies of each)" for c in comps
              if c.heads is not None and tp > c.heads]
    return notes


def evaluate(req, m, topo, b: Budget, comps, required: int) -> list[dict]:
    """Every layout on `topo`: plain TP x DP, plus attention-DP + EP when asked for."""
    if req.tp is not None and (req.tp < 1 or topo.gpus % req.tp):
        where = (f"--gpus {topo.gpus}" if topo.system is None
                 else f"the {topo.gpus} GPUs of {topo.nodes} x {topo.system.id}")
        raise UsageError(f"--tp {req.tp} must divide {where}.")
    out = [layout(t, topo, m.weights.bytes, comps, b, required, tp_problems(t, comps, m.divides))
           for t in tp_candidates(topo.gpus, req.tp)]
    if req.parallelism != "tp":
        from .dpa import dpa_layouts
        out += dpa_layouts(req.parallelism, topo, m.ownership, comps, b, required, m.divides,
                           req.tp)
    for lay in out:
        lay["replication"] = _replication(lay.get("attention_tp", lay["tp"]), comps)
    return out


def outcome(layouts: list[dict], weights_known: bool) -> dict:
    """The recommendation, the best node-local and best any-fabric layouts, and the verdict."""
    rec = recommend(layouts)
    local, _ = best_of([x for x in layouts if x["placement"] == systems.NODE_LOCAL])
    anyf, _ = best_of(layouts)
    chosen = next((x for x in layouts if rec and x["id"] == rec["id"]), None)
    fits = None if not weights_known else (chosen["fits"] if chosen else False)
    return {"recommended": rec, "best_scale_up_local": summary(local),
            "best_any_fabric": summary(anyf), "fits": fits}


def run_topology(req, m, topo, comps, required: int, basis: str | None = None):
    """(layouts, outcome, hardware fields) of one topology on one memory basis."""
    b, hw = budget(req, topo.accelerator, basis)
    layouts = evaluate(req, m, topo, b, comps, required)
    return layouts, outcome(layouts, m.weights.bytes is not None), hw | systems.section(topo)


def compare_basis(req, m, topo, comps, required: int, used: dict, hw: dict) -> dict | None:
    """What the other memory basis would answer, and why the two differ (None when equal)."""
    other = OTHER_BASIS[req.memory_basis]
    acc = topo.accelerator
    if req.device_memory_gib is not None or acc.memory(other)[0] == hw["memory_bytes_per_gpu"]:
        return None
    _, alt, alt_hw = run_topology(req, m, topo, comps, required, other)
    a, o = hw["memory_bytes_per_gpu"], alt_hw["memory_bytes_per_gpu"]
    n_used = (used["recommended"] or {}).get("max_sequences")
    n_alt = (alt["recommended"] or {}).get("max_sequences")
    why = (f"The {req.memory_basis} basis starts from {a / GIB:,.3f} GiB per GPU "
           f"({hw['basis_detail']}); the {other} basis from {o / GIB:,.3f} GiB "
           f"({alt_hw['basis_detail']}), {abs(o - a) / GIB:,.3f} GiB {'more' if o > a else 'less'}"
           f" per GPU, {abs(o - a) * req.utilization / GIB:,.3f} GiB after utilization "
           f"{req.utilization:g}. ")
    why += (f"Here both hold {n_used} sequences." if n_used == n_alt else
            f"That moves the best layout from {n_used} to {n_alt} resident sequences.")
    if acc.visible_mib and other == "visible":
        why += " Software can only allocate what the driver reports, so the visible answer is " \
               "the safer one."
    return {"basis": req.memory_basis, "other_basis": other, "memory_bytes_per_gpu": a,
            "other_memory_bytes_per_gpu": o, "budget_bytes_per_gpu": hw["budget_bytes_per_gpu"],
            "other_budget_bytes_per_gpu": alt_hw["budget_bytes_per_gpu"],
            "max_sequences": n_used, "other_max_sequences": n_alt,
            "other_recommended": alt["recommended"], "other_fits": alt["fits"],
            "explanation": why}


def warn(topo, acc, out: dict, warnings: list[str]) -> None:
    """Warnings about unified memory and cross-domain recommendations."""
    if acc.unified:
        warnings.append(f"{acc.name} has unified memory shared with the CPU and OS; what the "
                        "GPU can allocate changes with host load. Treat the budget as a plan.")
    rec = out["recommended"]
    if rec and rec.get("placement") == systems.CROSS_DOMAIN:
        warnings.append(f"The recommended layout {rec['label']} spans {rec['domains']} scale-up "
                        "domains: it runs over the scale-out network and is unqualified until "
                        "tested on that fabric. best_scale_up_local gives the best node-local "
                        "layout.")


def copy_notes(layouts: list[dict], rec: dict | None, comps) -> list[str]:
    """Why the winner beats the widest plain TP layout when TP copies per-sequence state."""
    plain = [x for x in layouts if x["parallelism"] == "tp" and x["valid"]
             and x["max_sequences"] is not None]
    if rec is None or not plain:
        return []
    big = max(plain, key=lambda x: x["tp"])
    copied = [c.name for c in comps if big["tp"] > 1 and (c.heads is None or c.heads < big["tp"])]
    if not copied or rec["id"] == big["id"] or rec["max_sequences"] <= big["max_sequences"]:
        return []
    who = ("attention-DP gives each attention group" if rec["parallelism"] != "tp"
           else "DP gives each replica")
    return [f"{rec['label']} holds {rec['max_sequences']} resident sequences where "
            f"{big['label']} holds {big['max_sequences']}: under TP={big['tp']} every rank keeps "
            f"its own copy of each sequence's {', '.join(copied)} state, so the {big['tp']} ranks "
            f"of a group hold {big['tp']} copies; {who} different sequences instead."]


def plan_placements(req, m, topo, warnings: list[str], comps=None) -> dict:
    """The placement part of a report for one topology (or a state-only report)."""
    t = target(req)
    comps = m.comps if comps is None else comps
    if topo is None:
        if req.gpus is not None or req.tp is not None:
            raise UsageError("--gpus and --tp need --hardware (or --system).")
        return {"target": t, "hardware": None, "layouts": [], "recommended": None,
                "best_scale_up_local": None, "best_any_fabric": None, "fits": None,
                "placement_notes": []}
    layouts, out, hw = run_topology(req, m, topo, comps, t["required_sequences"])
    warn(topo, topo.accelerator, out, warnings)
    cmp = compare_basis(req, m, topo, comps, t["required_sequences"], out, hw)
    return {"target": t, "hardware": hw, "layouts": layouts, **out,
            "placement_notes": copy_notes(layouts, out["recommended"], comps),
            "memory_basis_comparison": cmp}
