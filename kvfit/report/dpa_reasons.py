"""The attention-DP facts (kvfit.planner.dpa, kvfit.planner.dpa_notes) and their sentences:
what an attention-DP layout multiplies, and why one split of an expert-parallel group
holds more sequences than another. Kept apart from kvfit.report.reasons, so only a plan
with attention-DP layouts imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .words import count, gib, number

# -- an attention-DP layout's verdict (kvfit.planner.dpa) ----------------------------------

@dataclass(frozen=True, slots=True)
class AttentionGroups:
    """What an attention-DP layout multiplies: model groups x attention groups x sequences."""

    model_groups: int
    attention_groups: int
    sequences: int

    def __str__(self) -> str:
        return (f"({count(self.model_groups, 'model group')} x "
                f"{count(self.attention_groups, 'attention group')} x "
                f"{count(self.sequences, 'sequence')})")


# -- attention-DP notes (kvfit.planner.dpa_notes) -------------------------------------------

@dataclass(frozen=True, slots=True)
class AttentionGroupHistories:
    """Attention-DP beat the widest plain TP layout: each attention group keeps its own
    histories (`replicated` components, `replicated_bytes` per sequence per rank)."""

    label: str
    sequences: int
    tp_label: str
    tp_sequences: int
    replicated: tuple[str, ...]
    replicated_bytes: int
    attention_tp: int
    tp: int
    attention_dp: int

    def __str__(self) -> str:
        t, g = self.attention_tp, self.tp
        return (f"{self.label} holds {count(self.sequences, 'resident sequence')} where "
                f"{self.tp_label} holds {number(self.tp_sequences)} because each attention "
                f"group keeps its own sequences' histories: the {', '.join(self.replicated)} "
                f"of a sequence ({gib(self.replicated_bytes)}, one row per token that TP "
                f"cannot split) lives on {count(t, 'rank')} of its attention group only, "
                f"where under TP={g} all {g} ranks keep a copy of every sequence's; the "
                f"{self.attention_dp} attention groups serve different sequences, so the "
                f"history is held {count(t, 'time')} per sequence instead of {g}.")


class Winner(Enum):
    TP_EP = "TP+EP"
    DP_EP = "DP+EP"
    TIE = "tie"


@dataclass(frozen=True, slots=True)
class SplitComparison:
    """TP+EP (one attention group) against DP+EP (one per GPU) in one EP group of `group`."""

    tp_ep_label: str
    tp_ep_sequences: int
    dp_ep_label: str
    dp_ep_sequences: int
    replicated: tuple[str, ...]
    replicated_bytes: int
    sharded: tuple[str, ...]
    sharded_bytes_group: int
    sharded_bytes_one: int
    non_expert_group: int
    non_expert_one: int
    group: int
    winner: Winner
    replicated_layers: int

    def __str__(self) -> str:
        g = self.group
        head = (f"{self.tp_ep_label} (TP+EP) holds {count(self.tp_ep_sequences, 'sequence')} "
                f"and {self.dp_ep_label} (DP+EP) {number(self.dp_ep_sequences)}. Per sequence "
                f"per rank, {', '.join(self.replicated)} is replicated on every attention-TP "
                f"rank ({gib(self.replicated_bytes)} under both), while "
                f"{', '.join(self.sharded)} is sharded by heads ({gib(self.sharded_bytes_group)}"
                f" at attention TP{g}, {gib(self.sharded_bytes_one)} at TP1); the other "
                f"tensors take {gib(self.non_expert_group)} per rank at TP{g} and "
                f"{gib(self.non_expert_one)} at TP1.")
        if self.winner is Winner.TP_EP:
            return (head + f" TP+EP wins: the replicated rows sit on only "
                    f"{count(self.replicated_layers, 'layer')}, so the copies TP makes cost "
                    "less than the sharded state and the split weights save.")
        if self.winner is Winner.DP_EP:
            return (head + " DP+EP wins: each attention group keeps its own sequences' "
                    f"histories, so the replicated rows are held once per sequence instead of "
                    f"on {g} ranks.")
        return head
