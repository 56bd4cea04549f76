"""The short form of a layout (the recommendation, the best layouts), shared by the plan,
the search, the inverse questions and the sweep.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass

from .base import ABSENT, PART, Part


@dataclass(**PART)
class LayoutSummary(Part):
    """The short form of one layout (recommended, best_*)."""

    id: str
    parallelism: str
    label: str
    tp: int
    dp: int
    placement: str = ABSENT
    domains: int = ABSENT
    max_sequences: int | None = ABSENT
    fits: bool | None = ABSENT
    attention_dp: int = ABSENT
    attention_tp: int = ABSENT
    ep: int = ABSENT
    why: str = ABSENT
