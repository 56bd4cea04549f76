"""A --sweep's cells and the per-rank memory bars.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import PART, Frozen, Part

if TYPE_CHECKING:
    from .summary import LayoutSummary


@dataclass(**PART)
class MemoryBars(Part):
    total_bytes: int
    weights_bytes: int
    state_bytes: int
    reserve_bytes: int
    engine_overheads_bytes: int
    free_bytes: int
    basis: str


@dataclass(**PART)
class SweepLayout(Part):
    id: str
    label: str
    valid: bool
    max_sequences: int | None
    fits: bool | None
    reason: str | None
    memory_per_rank: MemoryBars | None


@dataclass(**PART)
class SweepCell(Part):
    values: Frozen
    context_tokens: int
    hypothetical: bool
    kv_dtype: str
    gpus: int | None
    concurrent_users: int | None
    required_sequences: int | None
    fits: bool | None
    recommended: LayoutSummary | None
    layouts: tuple[SweepLayout, ...]


@dataclass(**PART)
class SweepAxis(Part):
    axis: str
    field: str
    values: tuple[str, ...]


@dataclass(**PART)
class Sweep(Part):
    """`sweep`: every cell of a --sweep, in axis order."""

    axes: tuple[SweepAxis, ...]
    cells: tuple[SweepCell, ...]
    warnings: tuple[str, ...]
    exit_code: int
