"""The planner's facts and the sentences the report writes from them.

The planner decides (which layout wins and by which criterion, whether a layout holds the
target, why a search family has no candidate, what a suggestion changes) and returns one of
these frozen facts with its numbers; `str(fact)` is the sentence the report's JSON and text
carry (`reason`, `why`, `explanation`, `note`, `description`). Only this module words them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .words import count, gib, number, tokens

# -- a layout's verdict (kvfit.planner.layouts) --------------------------------------------

@dataclass(frozen=True, slots=True)
class WeightsUnknown:
    """No weight bytes: the layout is not judged."""

    def __str__(self) -> str:
        return "weight bytes unknown: pass --weight-gib or a checkpoint with weight files"


@dataclass(frozen=True, slots=True)
class WeightsOverBudget:
    """The weights per rank and the reserve alone exceed the budget (bytes)."""

    weights: int
    reserve: int
    budget: int

    def __str__(self) -> str:
        return (f"weights alone ({gib(self.weights)} per rank) plus the reserve "
                f"({gib(self.reserve)}) exceed the budget ({gib(self.budget)})")


@dataclass(frozen=True, slots=True)
class NoRoomForOne:
    """One sequence's state per rank is more than what is left (bytes)."""

    state: int
    left: int

    def __str__(self) -> str:
        return (f"one sequence needs {gib(self.state)} per rank but only {gib(self.left)} is "
                "left after weights and reserve")


@dataclass(frozen=True, slots=True)
class Holds:
    """A layout holds `total` sequences; the target needs `required`."""

    total: int
    required: int

    def __str__(self) -> str:
        return f"holds {count(self.total, 'sequence')}; the target needs {number(self.required)}"


@dataclass(frozen=True, slots=True)
class EngineHolds:
    """An engine's answer: `why` per instance, times `instances` = `total`; the target."""

    why: str
    instances: int
    total: int
    required: int

    def __str__(self) -> str:
        return (f"{self.why}; x {count(self.instances, 'engine instance')} = "
                f"{count(self.total, 'sequence')}; the target needs {number(self.required)}")


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


# -- the recommendation (kvfit.planner.layouts) --------------------------------------------

class Criterion(Enum):
    """What separated the recommended layout from the runner-up."""

    ONLY = "the only valid layout"
    MORE_SEQUENCES = "more sequences"
    WEIGHTS_FIT = "its weights fit"
    NEARER_MISS = "the nearer miss"
    FEWER_DOMAINS = "fewer scale-up domains"
    LISTED_FIRST = "listed first"
    SMALLER_GROUP = "the smaller group"


@dataclass(frozen=True, slots=True)
class Side:
    """One layout of the comparison: its label, sequences, domains, group size and headroom
    (sequences of state left per rank)."""

    label: str
    sequences: int
    domains: int
    group_gpus: int
    headroom: float


@dataclass(frozen=True, slots=True)
class Why:
    """Why `best` is recommended over `next` (None: it is the only valid layout)."""

    criterion: Criterion
    best: Side
    next: Side | None = None

    def __str__(self) -> str:
        b, o, c = self.best, self.next, self.criterion
        lab, n = b.label, b.sequences
        if c is Criterion.ONLY:
            return f"{lab} is the only valid layout ({count(n, 'sequence')})"
        if c is Criterion.MORE_SEQUENCES:
            return (f"{lab} holds the most sequences ({number(n)}); next best {o.label} holds "
                    f"{number(o.sequences)}")
        both = f"{lab} and {o.label} both hold {count(n, 'sequence')}"
        if c is Criterion.WEIGHTS_FIT:
            return f"{both}; {lab}'s weights fit its budget and {o.label}'s do not"
        if c is Criterion.NEARER_MISS:
            return (f"{both}; {lab} is the nearer miss (room for {b.headroom:.2f} of one "
                    f"sequence's state per rank, vs {o.headroom:.2f})")
        if c is Criterion.FEWER_DOMAINS:
            return (f"{both}; {lab} spans fewer scale-up domains ({b.domains} vs "
                    f"{o.domains})")
        domains = count(b.domains, "scale-up domain")
        if c is Criterion.LISTED_FIRST:
            return (f"{both} in {domains} with groups of {b.group_gpus} GPUs; {lab} is listed "
                    "first")
        return (f"{both} in {domains}; {lab} uses the smaller group ({b.group_gpus} vs "
                f"{o.group_gpus} GPUs)")


# -- the other memory basis and copies of state (kvfit.planner.placements) -----------------

@dataclass(frozen=True, slots=True)
class BasisDifference:
    """The same plan on two memory bases: bytes per GPU, their details, the utilization and
    the best layout's sequences on each (None: unknown capacity)."""

    basis: str
    memory: int
    detail: str
    other: str
    other_memory: int
    other_detail: str
    utilization: float
    sequences: int | None
    other_sequences: int | None
    visible_is_safer: bool

    def __str__(self) -> str:
        a, o = self.memory, self.other_memory
        out = (f"The {self.basis} basis starts from {a / 1024**3:,.3f} GiB per GPU "
               f"({self.detail}); the {self.other} basis from {o / 1024**3:,.3f} GiB "
               f"({self.other_detail}), {abs(o - a) / 1024**3:,.3f} GiB "
               f"{'more' if o > a else 'less'} per GPU, "
               f"{abs(o - a) * self.utilization / 1024**3:,.3f} GiB after utilization "
               f"{self.utilization:g}. ")
        n, m = self.sequences, self.other_sequences
        if n is None and m is None:
            out += "Here neither basis has a layout of known capacity."
        else:
            out += (f"Here both hold {count(n, 'sequence')}." if n == m else
                    f"That moves the best layout from {number(n)} to "
                    f"{count(m, 'resident sequence')}.")
        if self.visible_is_safer:
            out += (" Software can only allocate what the driver reports, so the visible "
                    "answer is the safer one.")
        return out


@dataclass(frozen=True, slots=True)
class CopiesBeaten:
    """The winner holds more than the widest plain TP layout, whose TP group keeps `held`
    copies ((components, copies) per entry) of each sequence's state."""

    label: str
    sequences: int
    tp_label: str
    tp_sequences: int
    tp: int
    held: tuple[tuple[tuple[str, ...], int], ...]
    attention_dp: bool

    def __str__(self) -> str:
        who = ("attention-DP gives each attention group" if self.attention_dp
               else "DP gives each replica")
        held = "; ".join(f"{', '.join(names)}: {count(n, 'copy')}" for names, n in self.held)
        return (f"{self.label} holds {count(self.sequences, 'resident sequence')} where "
                f"{self.tp_label} holds {number(self.tp_sequences)}: under TP={self.tp} the "
                "ranks of a group keep copies of each sequence's state instead of splitting it "
                f"({held}); {who} different sequences instead.")


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


# -- the --systems search (kvfit.planner.search) --------------------------------------------

@dataclass(frozen=True, slots=True)
class NoCandidate:
    """No node count up to `max_nodes` meets the target; the most any layout held."""

    max_nodes: int
    most: int
    label: str
    nodes: int
    placement: str
    required: int

    def __str__(self) -> str:
        return (f"no candidate under these settings: up to {count(self.max_nodes, 'node')} "
                f"the most any layout holds is {number(self.most)} ({self.label} on "
                f"{count(self.nodes, 'node')}, {self.placement}); the target needs "
                f"{number(self.required)}")


@dataclass(frozen=True, slots=True)
class CandidateFits:
    """The first node count whose best layout meets the target."""

    nodes: int
    label: str
    sequences: int
    required: int

    def __str__(self) -> str:
        return (f"{count(self.nodes, 'node')}: {self.label} holds "
                f"{count(self.sequences, 'sequence')}; the target needs "
                f"{number(self.required)}")


@dataclass(frozen=True, slots=True)
class SearchChoice:
    """Why the search chose its family: `fitting` candidates (0: none)."""

    fitting: int

    def __str__(self) -> str:
        if not self.fitting:
            return "no family has a candidate under these settings"
        return f"fewest accelerators among the {count(self.fitting, 'fitting candidate')}"


# -- suggestions (kvfit.planner.suggest) -----------------------------------------------------

@dataclass(frozen=True, slots=True)
class LayoutHolds:
    """A change and what the re-planned layout then holds: `{what}: {label} holds N
    sequences` (`what` names the change)."""

    what: str
    label: str
    sequences: int
    because: str = ""

    def __str__(self) -> str:
        out = f"{self.what}: {self.label} holds {count(self.sequences, 'sequence')}"
        return f"{out} ({self.because})" if self.because else out


@dataclass(frozen=True, slots=True)
class LongestContext:
    """The longest context at which `sequences` fit (`fp8`: with an fp8 KV cache)."""

    context: int
    sequences: int
    fp8: bool = False

    def __str__(self) -> str:
        if self.fp8:
            return (f"an fp8 KV cache with a context of {tokens(self.context)} (the longest at "
                    f"which {count(self.sequences, 'sequence')} then fit)")
        return (f"a context of {tokens(self.context)} (the longest at which "
                f"{count(self.sequences, 'sequence')} fit on these GPUs)")


@dataclass(frozen=True, slots=True)
class FewerUsers:
    """`users` users at `per_user` sequences each fit the `label` layout's `sequences`."""

    users: int
    per_user: int
    label: str
    sequences: int

    def __str__(self) -> str:
        return (f"{count(self.users, 'user')} at {count(self.per_user, 'sequence')} each: "
                f"{self.label} holds {number(self.sequences)}")


@dataclass(frozen=True, slots=True)
class FewerPerUser:
    """`per_user` resident sequences per user for `users` users."""

    per_user: int
    users: int

    def __str__(self) -> str:
        return (f"{count(self.per_user, 'resident sequence')} per user for "
                f"{count(self.users, 'user')}")


@dataclass(frozen=True, slots=True)
class ConfigEstimate:
    """The weights are an estimate from the config's tensor shapes (`bytes`)."""

    bytes: int

    def __str__(self) -> str:
        return ("Weight bytes are an ESTIMATE from the config's tensor shapes (no weight files "
                f"or index were available): {gib(self.bytes)}. Give the checkpoint, or "
                "--weight-gib, for its real bytes.")


def setting_text(value) -> str:
    """An engine setting's value as the --tune table writes it (on/off, 8,192, 0.9)."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    return number(value) if isinstance(value, int) else f"{value:g}" \
        if isinstance(value, float) else str(value)


def tune_tradeoff(name: str, value: str, flag: str, default: str, tradeoff: str) -> str:
    """The warning naming what a tuned setting gives up that is not memory."""
    return f"{name} {value} ({flag}; default {default}): {tradeoff}."


def tune_summary(best: int | None, at_defaults: int | None, required: int,
                 label: str | None) -> str:
    """The --tune answer in one sentence: what the best settings hold against the defaults."""
    if best == 0:
        text = ("no combination of these settings starts the engine with room for one "
                "sequence (see the layouts' reasons)")
    elif at_defaults is not None and best is not None and best == at_defaults:
        text = f"the engine's defaults already hold the most: {count(best, 'resident sequence')}"
    elif best is None:
        return "no setting could be judged (the weights or the GPU memory are unknown)"
    else:
        text = (f"{count(best, 'resident sequence')} on {label}, {number(at_defaults)} with "
                "the engine's defaults")
    return f"{text}; the target needs {number(required)}"
