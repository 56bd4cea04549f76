"""`--systems A B C --max-nodes N`: the smallest number of complete systems that fits.

For each system family the answer is the first node count 1..N whose best layout (any
fabric) meets the target (plain TP x DP across any fabric; attention-DP + EP groups inside
one scale-up domain). It states its best node-local layout and its best layout on any
fabric, so a cross-domain result never passes for a validated local one, and the smallest
count with a node-local fit. A family is "incompatible" when the model cannot be placed on
it at all (no valid layout, or a 4-bit cache format the accelerator lacks), and has "no
candidate" when layouts exist but none reaches the target within N.

With plain TP x DP (_fits_grow) a TP size's validity and sequences per replica do not depend
on the node count, only its replicas do; capacity is not monotone in the count (TP=16 fits
on 2 dgx-h100 nodes, and 3 nodes have no TP=16), but per TP size it is. So the counts where
each valid TP size has the most replicas are evaluated, and the first fitting count, the
first node-local fit or the most any count holds are computed from their layouts
(_from_tp_sizes): a handful of evaluations for any N. Other modes walk the counts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError
from ..hardware.presets import find_accelerator, find_system
from ..model.search import OtherBasis, Search, SearchCandidate
from ..report.search_reasons import CandidateFits, NoCandidate, SearchChoice
from . import placements, systems

DEFAULT_MAX_NODES = 8
FP4_CACHES = ("nvfp4", "mxfp4")


def _validate(req) -> int:
    for flag, value in (("hardware", req.hardware), ("gpus", req.gpus),
                        ("system", req.system), ("nodes", req.nodes)):
        if value is not None:
            raise UsageError(f"--systems searches node counts itself; drop --{flag}.",
                             hint="Use --max-nodes N to bound the search.")
    if req.min_gpus or req.max_context:
        raise UsageError("--systems cannot be combined with --min-gpus or --max-context.")
    n = DEFAULT_MAX_NODES if req.max_nodes is None else req.max_nodes
    return systems.count("max-nodes", n, systems.MAX_NODES)


def _incompatible(m, acc) -> str | None:
    """Why this accelerator cannot hold the requested cache format at all (or None)."""
    for what, name in m.cache_dtypes:
        if name in FP4_CACHES and acc.fp4 is False:
            return (f"{acc.id} has no native FP4 ({acc.name}); the {what} cache is {name}, "
                    "so this family cannot serve the requested format")
    return None


@dataclass(frozen=True, slots=True)
class Scan:
    """What a family's walk over node counts found: whether any layout is valid, the count and
    best layout holding the most sequences, the first fitting count (count, outcome,
    hardware) and the first count with a node-local fit."""

    valid: bool
    best_seen: tuple | None
    found: tuple | None
    local_at: int | None


def _scan(req, m, system, required: int, max_nodes: int, basis: str | None) -> Scan:
    """Walk node counts 1..max_nodes to the first whose best any-fabric layout fits; from
    there, the smallest count whose best node-local layout fits (see _first_local).

    Where capacity only grows with nodes (_fits_grow), the walk upward is interleaved with
    the counts above max_nodes / 2, largest first: a count that does not fit rules out every
    count dividing it, and when none of those fits no count does (every smaller count divides
    one of them), so a search that never fits evaluates about half the counts."""
    best_seen, valid, found, local_at = None, False, None, None
    counts = [n for n in range(1, max_nodes + 1)
              if (req.tp is None or (system.accelerators * n) % req.tp == 0)
              and (req.pp is None or (system.accelerators * n) % (req.pp * (req.tp or 1)) == 0)]
    seen: dict[int, tuple] = {}

    def at(n: int) -> tuple:
        if n not in seen:
            seen[n] = _outcome(req, m, system, n, required, basis)
        return seen[n]

    if _fits_grow(req) and m.divides:
        known = _from_tp_sizes(req, m, system, required, max_nodes, counts, at, seen)
        if known is not None:
            return known
    top = [n for n in reversed(counts) if 2 * n > max_nodes] if _fits_grow(req) else []
    misses: list[int] = []                # counts of `top` where no layout fits
    for i, n in enumerate(counts):
        if top:
            k = top.pop(0)
            if _fits(at(k)[0]):
                top = []                  # some count fits: the walk upward finds the first
            else:
                misses.append(k)
                if not top:               # no count fits
                    return _never(counts, at, seen)
        if any(k % n == 0 for k in misses):
            continue                      # a multiple of n holds more and does not fit
        out, hw, _ = at(n)
        anyf, local = out.best_any_fabric, out.best_scale_up_local
        valid = valid or anyf is not None
        if anyf and (best_seen is None or anyf.max_sequences > best_seen[1].max_sequences):
            best_seen = (n, anyf)
        if found is None and anyf and anyf.fits:
            found = (n, out, hw)
        if local and local.fits:
            local_at = n
            break
        if found is not None and _local_grows(req, system):
            local_at = _first_local(req, m, system, counts[i + 1:], required, basis)
            break
    return Scan(valid, best_seen, found, local_at)


def _fits(out) -> bool:
    return bool(out.best_any_fabric and out.best_any_fabric.fits)


def _never(counts: list[int], at, seen: dict) -> Scan:
    """The scan's answer when no count fits, from the counts evaluated: every count divides
    an evaluated one, whose layouts are the same TP groups with proportionally more replicas
    (_fits_grow), so the first count holding the most sequences is among them when that
    most is not zero; when it is zero, the first count with a valid layout is looked for."""
    best_seen = None
    for n in sorted(seen):
        anyf = seen[n][0].best_any_fabric
        if anyf and (best_seen is None or anyf.max_sequences > best_seen[1].max_sequences):
            best_seen = (n, anyf)
    if best_seen is not None and best_seen[1].max_sequences == 0:
        best_seen = next((n, at(n)[0].best_any_fabric) for n in counts
                         if at(n)[0].best_any_fabric is not None)
    return Scan(best_seen is not None, best_seen, None, None)


def _outcome(req, m, system, n: int, required: int, basis: str | None
             ) -> tuple:
    """(placements.Outcome, Hardware, the Layouts) of `n` complete systems."""
    layouts, out, hw = placements.run_topology(req, m, systems.of_system(system, n), m.comps,
                                               required, basis)
    return out, hw, layouts


def _from_tp_sizes(req, m, system, required: int, max_nodes: int, counts: list[int], at,
                   seen: dict) -> Scan | None:
    """The scan's answer for plain TP x DP (_fits_grow) from the layouts of a few counts.

    A valid TP size t divides every `tensor_parallel.divides` value (layouts.tp_problems), so
    it divides their gcd g. On n nodes, t is a layout when it divides n x accelerators, i.e.
    when q = t / gcd(t, accelerators) divides n, with n x accelerators / t replicas of the same
    sequences per replica p. Evaluating, for every t dividing g, the largest multiple of q up
    to max_nodes gives every valid t's p; then t first fits at the smallest multiple of q
    with p x n x accelerators / t >= required, and the most a count can hold is at one of the
    evaluated counts. Node-local TP sizes are the same at every count (_local_grows). None
    (walk instead) if a layout's capacity is not p x replicas or a computed count does not
    fit when evaluated."""
    from math import gcd

    from .layouts import tp_candidates

    acc, g = system.accelerators, 0
    for _, value in m.divides:
        g = gcd(g, value)
    sizes = [t for t in tp_candidates(g, None) if req.tp in (None, t)]
    step = {t: t // gcd(t, acc) for t in sizes}
    probes = sorted({max_nodes // q * q for q in step.values() if q <= max_nodes})
    per: dict[int, tuple[int, bool]] = {}       # TP size -> (sequences per replica, node-local)
    for n in probes:
        for lay in at(n)[2]:
            if not lay.valid or lay.max_sequences is None:
                continue
            p = lay.sequences_per_replica
            if lay.parallelism != "tp" or p * lay.dp != lay.max_sequences:
                return None
            per[lay.tp] = (p, lay.placement == systems.NODE_LOCAL)

    def first(t: int, p: int) -> int | None:
        """The smallest count placing TP=t whose replicas of p sequences reach `required`."""
        need = -(-required * t // (p * acc))
        n = -(-need // step[t]) * step[t]
        return n if n <= max_nodes else None

    fits_at = {t: first(t, p) for t, (p, _) in per.items() if p > 0}
    reachable = [n for n in fits_at.values() if n is not None]
    if not reachable:
        return _never(counts, at, seen)
    n = min(reachable)
    out, hw, _ = at(n)
    local = out.best_scale_up_local
    if not _fits(out):
        return None
    if local and local.fits:
        local_at = n
    elif _local_grows(req, system):
        local_at = min((k for t, k in fits_at.items() if k is not None and per[t][1]),
                       default=None)
        best_local = at(local_at)[0].best_scale_up_local if local_at is not None else None
        if local_at is not None and not (best_local and best_local.fits):
            return None
    else:
        return None
    return Scan(True, None, (n, out, hw), local_at)


def _fits_grow(req) -> bool:
    """Whether every layout of a count is also a layout of each multiple of it, holding
    proportionally more: plain TP x DP (no fixed DP, no --pp), where a layout is a TP size whose
    per-replica capacity and validity do not depend on the count, times count x accelerators
    / TP replicas (placements.evaluate; layouts.layout, capacity.Capacity.apply)."""
    return req.parallelism == "tp" and req.dp is None and req.pp is None


def _local_grows(req, system) -> bool:
    """Whether a node-local fit, once reached, holds at every larger node count: with plain TP
    x DP (no fixed DP, no --pp) on a system whose scale-up domain divides its accelerators, the
    node-local layouts are the same TP groups at every count (TP dividing one domain), each
    replica holds the same sequences, and the replicas grow with the nodes."""
    return (req.parallelism == "tp" and req.dp is None and req.pp is None
            and system.accelerators % system.domain_accelerators == 0)


def _first_local(req, m, system, counts: list[int], required: int, basis) -> int | None:
    """The first of `counts` (ascending) whose best node-local layout fits, for a fit that
    only grows with the count (_local_grows): doubling steps out to the first fit, then
    bisection back, so a search to 1,024 nodes evaluates about 20 counts, not 1,024."""
    def fits(i: int) -> bool:
        local = _outcome(req, m, system, counts[i], required, basis)[0].best_scale_up_local
        return bool(local and local.fits)

    lo, step = -1, 1                      # counts[lo] does not fit (-1: none tried yet)
    while True:
        hi = min(lo + step, len(counts) - 1)
        if hi <= lo:
            return None
        if fits(hi):
            break
        if hi == len(counts) - 1:
            return None
        lo, step = hi, step * 2
    while hi - lo > 1:                    # counts[lo] does not fit, counts[hi] fits
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return counts[hi]


def candidate(req, m, system, required: int, max_nodes: int, basis: str | None = None
              ) -> SearchCandidate:
    """One family's answer: status, node count, and its best local / any-fabric layouts."""
    acc = find_accelerator(system.hardware)
    head = {"system": system.id, "name": system.name, "hardware": acc.id,
            "accelerators_per_node": system.accelerators}
    why = _incompatible(m, acc)
    scan = None if why else _scan(req, m, system, required, max_nodes, basis)
    if why or not scan.valid:
        return SearchCandidate(**head, status="incompatible", nodes=None, gpus=None,
                               reason=why or "no layout of this model is valid on this system",
                               best_scale_up_local=None, best_any_fabric=None,
                               smallest_scale_up_local_nodes=None)
    if scan.found is None:
        n, lay = scan.best_seen
        return SearchCandidate(**head, status="no candidate", nodes=None, gpus=None,
                               reason=str(NoCandidate(
                                   max_nodes, lay.max_sequences, lay.label, n, lay.placement,
                                   required)),
                               best_scale_up_local=None, best_any_fabric=lay,
                               smallest_scale_up_local_nodes=None)
    n, out, hw = scan.found
    best = out.best_any_fabric
    return SearchCandidate(**head, status="fits", nodes=n, gpus=hw.gpus,
                           reason=str(CandidateFits(n, best.label,
                                                            best.max_sequences, required)),
                           budget_bytes_per_gpu=hw.budget_bytes_per_gpu,
                           best_scale_up_local=out.best_scale_up_local, best_any_fabric=best,
                           smallest_scale_up_local_nodes=scan.local_at)


def _other_basis(req, m, system, required: int, max_nodes: int, cand: SearchCandidate
                 ) -> OtherBasis | None:
    """The same family on the other memory basis (None when both bases agree in memory)."""
    other = placements.OTHER_BASIS[req.memory_basis]
    acc = find_accelerator(system.hardware)
    if req.device_memory_gib is not None or acc.memory(other)[0] == acc.memory(
            req.memory_basis)[0] or cand.status == "incompatible":
        return None
    alt = candidate(req, m, system, required, max_nodes, other)
    return OtherBasis(basis=other, status=alt.status, nodes=alt.nodes,
                      max_sequences=alt.best_any_fabric.max_sequences
                      if alt.best_any_fabric else None)


def run(req, m, warnings: list[str]) -> dict:
    """The search's Report fields: a candidate per family, and the full placement of the
    chosen one."""
    max_nodes = _validate(req)
    if m.weights.bytes is None:
        raise UsageError("a system search needs the checkpoint's weight bytes; pass "
                         "--weight-gib or a checkpoint with weight files or an index.")
    required = placements.target(req).required_sequences
    chosen_systems = [find_system(s) for s in dict.fromkeys(req.systems)]
    cands = []
    for s in chosen_systems:
        c = candidate(req, m, s, required, max_nodes)
        cands.append(replace(c, other_basis=_other_basis(req, m, s, required, max_nodes, c)))
    fitting = sorted((c for c in cands if c.status == "fits"),
                     key=lambda c: (c.gpus, -c.best_any_fabric.max_sequences))
    search = Search(systems=tuple(s.id for s in chosen_systems), max_nodes=max_nodes,
                    memory_basis=req.memory_basis, candidates=tuple(cands),
                    chosen=fitting[0].system if fitting else None,
                    why=str(SearchChoice(len(fitting))))
    if not fitting:
        none = placements.Outcome(None, None, None, False)
        return {"search": search} | placements.Placed(placements.target(req), None, (), none,
                                                      comparison=None).fields()
    best = fitting[0]
    topo = systems.of_system(find_system(best.system), best.nodes)
    return {"search": search} | placements.plan_placements(req, m, topo, warnings).fields()
