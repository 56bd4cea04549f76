"""The engine settings --tune searched.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import ABSENT, PART, Part

if TYPE_CHECKING:
    from .engine import EngineCommand


@dataclass(**PART)
class TuneValue(Part):
    """One candidate of a tuned setting and the resident sequences with it (every other
    setting at its recommended value)."""

    value: object
    max_sequences: int | None


@dataclass(**PART)
class TuneSetting(Part):
    """One engine setting --tune searched: the engine's default beside the recommended value,
    and the resident sequences of each."""

    flag: str
    name: str
    default: object
    default_text: str
    recommended: object
    recommended_text: str
    changed: bool
    max_sequences_at_default: int | None
    max_sequences: int | None
    rule: str
    values: tuple[TuneValue, ...]
    default_refusal: str = ABSENT
    tradeoff: str = ABSENT


@dataclass(**PART)
class Tune(Part):
    """`tune`: the engine settings that hold the target with the most headroom (--tune)."""

    engine: str
    version: str
    required_sequences: int
    holds: bool | None
    max_sequences: int | None
    default_max_sequences: int | None
    layout: str | None
    layout_id: str | None
    summary: str
    combinations: int
    settings: tuple[TuneSetting, ...]
    command: EngineCommand | None
    warnings: tuple[str, ...]
