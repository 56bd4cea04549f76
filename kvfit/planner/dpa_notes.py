"""Why one attention-DP split of an expert-parallel group holds more sequences than another.

Every number is read from the layouts the plan's one capacity model filled: per-rank weights
(`per_rank`), per-sequence state at each layout's attention TP, and `max_sequences`.
"""

from __future__ import annotations

from ..model.plan import Layout


def _parts(comps, tp: int) -> tuple[list, int, list, int]:
    """(replicated names, their bytes per rank, sharded names, their bytes per rank) at `tp`."""
    live = [c for c in comps if c.kind != "none" and c.bytes_per_sequence]
    rep = [c for c in live if c.heads is None]
    shard = [c for c in live if c.heads is not None]
    return ([c.name for c in rep], sum(c.per_rank(tp) for c in rep),
            [c.name for c in shard], sum(c.per_rank(tp) for c in shard))


def _known(x: Layout) -> bool:
    return x.valid and x.max_sequences is not None


def attention_group_note(rec, plain: Layout, comps) -> str | None:
    """DPA beat the widest plain TP layout: each attention group keeps its own histories."""
    rep, rep_bytes, _, _ = _parts(comps, rec.attention_tp)
    if not rep:
        return None
    from ..report.dpa_reasons import AttentionGroupHistories

    return str(AttentionGroupHistories(
        rec.label, rec.max_sequences, plain.label, plain.max_sequences, tuple(rep), rep_bytes,
        rec.attention_tp, plain.tp, rec.attention_dp))


def split_note(layouts, comps) -> str | None:
    """Within the largest EP group with both ends judged: TP+EP (one attention group) against
    DP+EP (one attention group per GPU), and which part of the state or weights decides."""
    dpa = [x for x in layouts if x.parallelism != "tp" and _known(x)]
    for g in sorted({x.group_gpus for x in dpa}, reverse=True):
        tp_ep = next((x for x in dpa if x.group_gpus == g and x.attention_dp == 1), None)
        dp_ep = next((x for x in dpa if x.group_gpus == g and x.attention_tp == 1), None)
        if tp_ep and dp_ep and tp_ep is not dp_ep:
            return _compare(tp_ep, dp_ep, comps, g)
    return None


def _compare(tp_ep: Layout, dp_ep: Layout, comps, g: int) -> str | None:
    rep, rep_bytes, shard, shard_g = _parts(comps, g)
    _, _, _, shard_1 = _parts(comps, 1)
    if not rep or not shard:
        return None
    from ..report.dpa_reasons import SplitComparison, Winner

    a, b = tp_ep.max_sequences, dp_ep.max_sequences
    winner = Winner.TP_EP if a > b else Winner.DP_EP if a < b else Winner.TIE
    return str(SplitComparison(
        tp_ep.label, tp_ep.max_sequences, dp_ep.label, dp_ep.max_sequences, tuple(rep),
        rep_bytes, tuple(shard), shard_g, shard_1, tp_ep.per_rank.non_expert_bytes,
        dp_ep.per_rank.non_expert_bytes, g, winner,
        sum(c.layers for c in comps if c.heads is None and c.kind != "none")))
