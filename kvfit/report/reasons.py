"""The planner's facts and the sentences the report writes from them.

The planner decides (which layout wins and by which criterion, whether a layout holds the
target, why a search family has no candidate, what a suggestion changes) and returns one of
these frozen facts with its numbers; `str(fact)` is the sentence the report's JSON and text
carry (`reason`, `why`, `explanation`, `note`, `description`). Only kvfit/report words them.

This module holds the facts of every plan (layout verdicts, the recommendation, the memory
bases, copies of state, the weights' estimate) and the --tune sentences; the facts of the
questions a plain plan does not ask have their own modules beside it: dpa_reasons
(attention-DP), search_reasons (--systems) and suggest_reasons (suggestions).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .words import count, gib, number

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


# -- the weights (kvfit.planner.build) -------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ConfigEstimate:
    """The weights are an estimate from the config's tensor shapes (`bytes`)."""

    bytes: int

    def __str__(self) -> str:
        return ("Weight bytes are an ESTIMATE from the config's tensor shapes (no weight files "
                f"or index were available): {gib(self.bytes)}. Give the checkpoint, or "
                "--weight-gib, for its real bytes.")


# -- the --tune answer (kvfit.planner.tune) ---------------------------------------------------

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
