"""The --systems search and the inverse questions (--max-context, --min-gpus).

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import ABSENT, PART, Part

if TYPE_CHECKING:
    from .summary import LayoutSummary


@dataclass(**PART)
class OtherBasis(Part):
    basis: str
    status: str
    nodes: int | None
    max_sequences: int | None


@dataclass(**PART)
class SearchCandidate(Part):
    """One system family of a --systems search."""

    system: str
    name: str
    hardware: str
    accelerators_per_node: int
    status: str
    nodes: int | None = ABSENT
    gpus: int | None = ABSENT
    reason: str = ABSENT
    budget_bytes_per_gpu: int = ABSENT
    best_scale_up_local: LayoutSummary | None = ABSENT
    best_any_fabric: LayoutSummary | None = ABSENT
    smallest_scale_up_local_nodes: int | None = ABSENT
    other_basis: OtherBasis | None = ABSENT


@dataclass(**PART)
class Search(Part):
    """`search`: the fewest complete systems holding the target."""

    systems: tuple[str, ...]
    max_nodes: int
    memory_basis: str
    candidates: tuple[SearchCandidate, ...]
    chosen: str | None = ABSENT
    why: str = ABSENT


@dataclass(**PART)
class ContextRow(Part):
    """One layout's longest context (--max-context)."""

    id: str
    label: str
    placement: str = ABSENT
    max_context_tokens: int | None = ABSENT
    max_sequences: int | None = ABSENT


@dataclass(**PART)
class Inverse(Part):
    """`inverse`: the --max-context or --min-gpus answer."""

    question: str
    upper_bound_tokens: int = ABSENT
    required_sequences: int = ABSENT
    per_layout: tuple[ContextRow, ...] = ABSENT
    max_context_tokens: int | None = ABSENT
    best: ContextRow | None = ABSENT
    hardware: str = ABSENT
    searched_up_to: int = ABSENT
    min_gpus: int | None = ABSENT
    recommended: LayoutSummary | None = ABSENT
