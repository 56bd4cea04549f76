"""Why one attention-DP split of an expert-parallel group holds more sequences than another.

Every number is read from the layouts the plan's one capacity model filled: per-rank weights
(`per_rank`), per-sequence state at each layout's attention TP, and `max_sequences`.
"""

from __future__ import annotations

from ..report.model import Layout
from ..report.words import count, number

GIB = 1024**3


def _gib(n: int) -> str:
    return f"{n / GIB:,.3f} GiB"


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
    t, g, a = rec.attention_tp, plain.tp, rec.attention_dp
    return (f"{rec.label} holds {count(rec.max_sequences, 'resident sequence')} where "
            f"{plain.label} holds {number(plain.max_sequences)} because each attention group "
            f"keeps its own sequences' histories: the {', '.join(rep)} of a sequence "
            f"({_gib(rep_bytes)}, one row per token that TP cannot split) lives on "
            f"{count(t, 'rank')} of its attention group only, where under TP={g} all {g} ranks "
            f"keep a copy of every sequence's; the {a} attention groups serve different "
            f"sequences, so the history is held {count(t, 'time')} per sequence instead of "
            f"{g}.")


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
    a, b = tp_ep.per_rank, dp_ep.per_rank
    head = (f"{tp_ep.label} (TP+EP) holds {count(tp_ep.max_sequences, 'sequence')} and "
            f"{dp_ep.label} (DP+EP) {number(dp_ep.max_sequences)}. Per sequence per rank, "
            f"{', '.join(rep)} is replicated on every attention-TP rank ({_gib(rep_bytes)} "
            f"under both), while {', '.join(shard)} is sharded by heads ({_gib(shard_g)} at "
            f"attention TP{g}, {_gib(shard_1)} at TP1); the other tensors take "
            f"{_gib(a.non_expert_bytes)} per rank at TP{g} and {_gib(b.non_expert_bytes)} "
            f"at TP1.")
    if tp_ep.max_sequences > dp_ep.max_sequences:
        lat = sum(c.layers for c in comps if c.heads is None and c.kind != "none")
        return (head + f" TP+EP wins: the replicated rows sit on only {count(lat, 'layer')}, so the "
                "copies TP makes cost less than the sharded state and the split weights save.")
    if tp_ep.max_sequences < dp_ep.max_sequences:
        return (head + " DP+EP wins: each attention group keeps its own sequences' histories, "
                f"so the replicated rows are held once per sequence instead of on {g} ranks.")
    return head
