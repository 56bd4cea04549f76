"""Attention data parallelism with expert parallelism (SGLang DPA, vLLM DP + EP).

A model group of G GPUs (SGLang `--tp G`) runs A attention groups of T = G/A GPUs each
(`--attn-dp-size A`); every attention group serves its own sequences and owns its own
cache pool, while the routed experts are spread over the whole group (`--ep-size G`).
vLLM's equivalent is `--data-parallel-size A --tensor-parallel-size T
--enable-expert-parallel`. Per GPU this counts (bytes):

    weights = every non-expert tensor split over the T attention-TP ranks (ideal sharding,
              as the plain TP layouts assume; whole on every GPU at attention TP 1)
              + the routed-expert bytes of the fullest EP rank (contiguous expert blocks)
    state   = per-sequence state at attention TP = T (latent/MLA rows stay whole): each
              attention group keeps only its own sequences' histories, so a latent row is
              copied on the T ranks of one group, not on all G ranks as under plain TP G
    padding = one padding page of the pool (token state) or one slot (constant state)
    sequences per attention group = floor((budget - weights - reserve - padding) / state)
    max_sequences = that x A attention groups x (GPUs / G) model groups

Not modelled yet (SGLang 0.5.23, models/deepseek_v2.py family): the engine splits only the
attention and the input embedding over attention TP; the dense MLP layers (:2665-2675,
parallel_group "tp" unless --moe-dense-tp-size 1 replicates them), the shared experts (:888-896,
"tp" unless an all-to-all MoE backend such as DeepEP or SGLANG_SHARED_EXPERT_TP1 replicates them)
and lm_head (:3291-3297, the attention-TP group only with --enable-dp-lm-head) split over the
whole --tp group G. Counting them over T therefore over-counts those bytes per rank with the
default flags (capacity under-stated), and under-counts the shared experts when an all-to-all
backend replicates them (capacity over-stated).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from ..checkpoint.weights import rank_share
from ..model.plan import Layout
from ..model.sections import ExpertParallel
from ..report.dpa_reasons import AttentionGroups
from .layouts import Budget, judged, tp_problems
from .ownership import Ownership
from .systems import Topology, placement


def profile_of(name: str):
    """The engine's attention-DP + EP mode (kvfit.engines.base.DpaProfile) named `name`."""
    from ..engines import parallelism
    return parallelism(name)


def page_tokens(profile, components) -> int:
    """Tokens per pool page: the latent-backend page when any state is latent."""
    latent = any(c.kind == "latent" for c in components)
    return profile.latent_page if latent else profile.default_page


def padding_bytes(components, tp: int, page: int) -> int:
    """One padding page of token state (page x bytes per token per rank) plus one slot of
    constant state, per rank, at attention TP = `tp`."""
    total = 0
    for c in components:
        if c.kind == "none" or c.entries_per_layer == 0:
            continue
        if c.kind == "constant":
            total += c.per_rank(tp)
            continue
        row = Fraction(c.layers * c.bytes_per_entry)
        if c.heads is not None:
            row = row * c.heads_per_rank(tp) / c.heads
        total += page * -(-row.numerator // row.denominator)
    return total


def group_sizes(topo: Topology, requested: int | None, experts: int) -> list[int]:
    """Model-group sizes to evaluate: the requested --tp, else every divisor of the GPU
    count from 2 up to one scale-up domain (cross-domain expert groups are not searched)."""
    if requested is not None:
        return [requested]
    return [g for g in range(2, min(topo.gpus, topo.domain_size) + 1)
            if topo.gpus % g == 0 and experts % g == 0]


def dpa_layout(profile, g: int, a: int, topo: Topology, own: Ownership, comps,
               budget: Budget, required: int, divides, judge=None, extras=None,
               per_user: int | None = None, replicated: int = 0) -> Layout:
    """One attention-DP + EP layout: A attention groups of T = G/A GPUs, EP over G (the
    experts stay whole: their TP is 1 for the engines' layout constraints). extras(attention
    TP, experts' TP, group): other Layout fields (kvfit.planner.placements); per_user: for
    max_users."""
    t, groups = g // a, topo.gpus // g
    verdict = judge.check(t, 1, g) if judge is not None else None
    invalid = tp_problems(t, comps, divides) + [p for p in (own.problem(g),) if p] + \
        list(verdict.problems if verdict else ())
    expert_rank = own.rank_bytes(g)
    # `replicated`: non-expert bytes every rank holds whole (the weights' replicated part)
    rep = replicated if replicated < own.non_expert_bytes else 0
    other = rank_share(own.non_expert_bytes, rep, t)
    w = other + expert_rank + (verdict.extra_bytes if verdict else 0)
    state = sum(c.per_rank(t) for c in comps)
    page = page_tokens(profile, comps)
    pad = padding_bytes(comps, t, page)
    fmt = {"a": a, "t": t, "g": g}
    head = {"id": f"{profile.name}-g{g}-a{a}", "parallelism": profile.name,
            "label": profile.label.format(**fmt), "engine_flags": profile.flags.format(**fmt),
            "tp": g, "dp": groups, "attention_dp": a, "attention_tp": t, "ep": g,
            "group_gpus": g, **placement(g, topo)}
    out = judged(head, w, state, budget, invalid, required, a * groups, pad,
                 {"non_expert_bytes": other, "routed_expert_bytes": expert_rank,
                  "padding_page_tokens": page}, extras(t, 1, g) if extras else None, per_user)
    if not out.valid:
        return out
    per = out.sequences_per_group
    reason = out.reason
    if out.fits is not None and per:
        reason += f" {AttentionGroups(groups, a, per)}"
    return replace(out, sequences_per_replica=per * a, reason=reason)


def dpa_layouts(profile_name: str, topo: Topology, own: Ownership, comps, budget: Budget,
                required: int, divides, requested: int | None, judge=None, extras=None,
                per_user: int | None = None, replicated: int = 0) -> list[Layout]:
    """Every attention-DP split of every model-group size."""
    profile = profile_of(profile_name)
    out = []
    for g in group_sizes(topo, requested, own.experts):
        for a in (x for x in range(g, 0, -1) if g % x == 0):
            out.append(dpa_layout(profile, g, a, topo, own, comps, budget, required, divides,
                                  judge, extras, per_user, replicated))
    return out


def section(profile_name: str, own: Ownership, comps) -> ExpertParallel:
    """The report's `expert_parallel` section."""
    profile = profile_of(profile_name)
    return ExpertParallel(parallelism=profile.name, engine=profile.engine,
                          padding_rule=profile.padding_rule,
                          padding_page_tokens=page_tokens(profile, comps), **own.section())
