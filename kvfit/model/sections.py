"""The report's optional sections: RoPE scaling, detected GPUs, expert parallelism, verified
headers, a speculative draft.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass

from .base import ABSENT, PART, Frozen, Part


@dataclass(**PART)
class RopeScaling(Part):
    stated: Frozen
    source: str
    rope_type: str
    factor: float
    original_max_position_embeddings: int
    declared_max_tokens: int | None
    max_context_tokens: int
    rule: str
    engines: Frozen


@dataclass(**PART)
class DetectedGpu(Part):
    index: int
    name: str
    total_mib: int | None
    free_mib: int | None
    preset: str | None


@dataclass(**PART)
class DetectedHardware(Part):
    tool: str
    source: str
    gpus: tuple[DetectedGpu, ...]
    count: int
    name: str
    preset: str
    total_mib: int | None
    free_mib: int | None
    unified: bool
    notes: tuple[str, ...]
    planned_gpus: int
    summary: str


@dataclass(**PART)
class ExpertParallel(Part):
    """`expert_parallel`: expert ownership behind the attention-DP + EP layouts."""

    parallelism: str
    engine: str = ABSENT
    source: str
    detail: str
    routed_experts: int = ABSENT
    routed_expert_bytes: int = ABSENT
    non_expert_bytes: int = ABSENT
    total_bytes: int = ABSENT
    per_tensor: bool = ABSENT
    assumption: str = ABSENT
    padding_rule: str = ABSENT
    padding_page_tokens: int = ABSENT


@dataclass(**PART)
class Headers(Part):
    """`headers`: what --verify-headers read."""

    source: str
    tensors: int
    tensor_bytes: int
    bytes_by_dtype: Frozen
    layers_covered: int


@dataclass(**PART)
class SpeculativeDraft(Part):
    """`speculative_draft`: a config-declared integrated draft model (DeepSeek V4 DSpark)."""

    kind: str
    declaration_source: str
    fields: Frozen
    draft_layers: int
    draft_layers_source: str
    components: tuple[str, ...]
    runtime_enabled: bool | None
    note: str
