"""A layout's optional parts: pipeline stages, engine layout rules, the static bound beside an
engine's answer, replicated state.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass

from .base import ABSENT, PART, Part


@dataclass(**PART)
class PipelineStage(Part):
    stage: int
    layers: tuple[int, ...]
    weights_bytes: int | None
    state_bytes_per_sequence: int
    left_bytes: int | None = ABSENT
    sequences: int | None = ABSENT
    components: tuple[str, ...] = ABSENT
    replicated_bytes: int = ABSENT


@dataclass(**PART)
class Pipeline(Part):
    stages: tuple[PipelineStage, ...]
    binding_stage: int
    split_rule: str
    weights_basis: str | None = ABSENT
    note: str = ABSENT


@dataclass(**PART)
class EngineConstraint(Part):
    """One engine layout rule that refuses, refines or pads a layout."""

    engine: str
    constraint: str
    action: str
    text: str
    source: str
    dimension: str
    value: int
    tp: int
    shard: int
    block: tuple[int, ...]
    extra_bytes: int


@dataclass(**PART)
class StaticBound(Part):
    """The static bound beside an engine-answered layout."""

    max_sequences: int | None = ABSENT
    sequences_per_group: int | None = ABSENT
    fits: bool | None = ABSENT
    reason: str | None = ABSENT


@dataclass(**PART)
class StateCopies(Part):
    components: tuple[str, ...]
    heads: int | None
    tp: int
    copies: int
    note: str
