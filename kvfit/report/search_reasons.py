"""The --systems search's facts (kvfit.planner.search) and their sentences: which node
count first holds the target, or why none does, and why the search chose its family.
"""

from __future__ import annotations

from dataclasses import dataclass

from .words import count, number


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
