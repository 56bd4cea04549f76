"""The plan core: the checkpoint, its architecture and state, the hardware, the layouts, the
recommendation and the Report that holds them.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .base import ABSENT, PART, Frozen, Part

if TYPE_CHECKING:
    from .engine import EngineCommand, EnginePrediction
    from .layout import EngineConstraint, Pipeline, StateCopies, StaticBound
    from .search import Inverse, Search
    from .sections import DetectedHardware, ExpertParallel, Headers, RopeScaling, SpeculativeDraft
    from .summary import LayoutSummary
    from .sweep import Sweep
    from .tune import Tune


@dataclass(**PART)
class ModelInfo(Part):
    """`model`: the checkpoint that was read."""

    source: str
    origin: str | None = None
    revision_requested: str | None = None
    revision: str | None = None
    model_type: str | None = None
    architectures: tuple[str, ...] | None = None
    artifact: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(**PART)
class ArchField(Part):
    name: str
    value: object
    provenance: str


@dataclass(**PART)
class LayerSet(Part):
    count: int
    layers: str


@dataclass(**PART)
class Architecture(Part):
    """`architecture`: the matched spec and every field it read."""

    id: str
    spec: str
    summary: str
    fields: tuple[ArchField, ...]
    layers: int
    layer_sets: Mapping[str, LayerSet]


@dataclass(**PART)
class Dtype(Part):
    name: str
    bytes_per_value: str
    provenance: str
    note: str | None


@dataclass(**PART)
class Dtypes(Part):
    kv: Dtype
    index: Dtype
    model: Dtype


@dataclass(**PART)
class StateComponent(Part):
    """One counted state component (whole model, one sequence)."""

    name: str
    kind: str
    summary: str | None = None
    layer_set: str | None = None
    layers: int = 0
    retention: str = ""
    window: int | None = None
    ratio: int | None = None
    entries_per_layer: int = 0
    bytes_per_entry: int = 0
    bytes_per_entry_formula: str = ""
    layout: str = "logical"
    shard: str = ""
    bytes_per_sequence: int = 0


@dataclass(**PART)
class State(Part):
    bytes_per_sequence: int
    components: tuple[StateComponent, ...]


@dataclass(**PART)
class WeightBytes(Part):
    """`weights`: checkpoint bytes and their source."""

    bytes: int | None
    source: str
    detail: str | None = ABSENT


@dataclass(**PART)
class Quantization(Part):
    """`quantization`: weight quantization and the KV-cache declaration."""

    declared: bool | None = None
    method: str | None = None
    weight_algorithm: str | None = None
    weight_bits: object = None
    group_size: object = None
    block_size: object = None
    formats: object = None
    scope: str | None = None
    mixed: bool | None = None
    excluded_modules: int = 0
    kv_cache: str | None = None
    kv_cache_source: str | None = None
    runtime_floor_gib: float | None = None
    runtime_floor_basis: str | None = None
    sources: tuple = ()
    warnings: tuple = ()


@dataclass(**PART)
class Target(Part):
    concurrent_users: int
    active_sequences_per_user: int
    required_sequences: int


@dataclass(**PART)
class Hardware(Part):
    """`hardware`: the accelerators, their topology, memory basis and per-GPU budget."""

    id: str
    name: str
    gpus: int
    system: str | None = None
    system_name: str | None = None
    nodes: int | None = None
    scale_up_domain_accelerators: int = ABSENT
    scale_up_domains: int = ABSENT
    memory_domains: int = ABSENT
    scale_up_fabric: str | None = ABSENT
    scale_out_fabric: str | None = ABSENT
    topology_source: str = ABSENT
    memory_bytes_per_gpu: int = ABSENT
    memory_basis: str = ABSENT
    basis_detail: str = ABSENT
    utilization: float = ABSENT
    runtime_reserve_bytes: int = ABSENT
    budget_bytes_per_gpu: int = ABSENT
    utilization_basis: str = ABSENT


@dataclass(**PART)
class PerRank(Part):
    """A layout's memory on one rank."""

    weights_bytes: int | None
    state_bytes_per_sequence: int
    budget_bytes: int
    reserve_bytes: int = ABSENT
    padding_bytes: int = ABSENT
    used_bytes: int | None = ABSENT
    non_expert_bytes: int = ABSENT
    routed_expert_bytes: int = ABSENT
    padding_page_tokens: int = ABSENT


@dataclass(**PART)
class Layout(Part):
    """One layout (TP x DP, TP x PP x DP, or attention-DP + EP) with its per-rank memory and,
    under an engine, the engine's prediction (`engine`)."""

    id: str
    parallelism: str
    label: str
    tp: int
    dp: int
    valid: bool
    per_rank: PerRank
    max_sequences: int | None
    fits: bool | None
    reason: str | None
    pp: int = ABSENT
    pipeline: Pipeline = ABSENT
    sequences_per_replica: int | None = ABSENT
    replication: tuple[str, ...] = ABSENT
    engine_constraints: tuple[EngineConstraint, ...] = ABSENT
    group_gpus: int = ABSENT
    placement: str = ABSENT
    domains: int = ABSENT
    placement_note: str | None = ABSENT
    attention_dp: int = ABSENT
    attention_tp: int = ABSENT
    ep: int = ABSENT
    engine_flags: str = ABSENT
    sequences_per_group: int | None = ABSENT
    max_users: int | None = ABSENT
    static: StaticBound = ABSENT
    capacity_model: str = ABSENT
    engine: EnginePrediction = ABSENT
    copies: tuple[StateCopies, ...] = ABSENT


@dataclass(**PART)
class BasisComparison(Part):
    """`memory_basis_comparison`: the same plan on the other memory basis."""

    basis: str
    other_basis: str
    memory_bytes_per_gpu: int
    other_memory_bytes_per_gpu: int
    budget_bytes_per_gpu: int
    other_budget_bytes_per_gpu: int
    max_sequences: int | None
    other_max_sequences: int | None
    other_recommended: LayoutSummary | None
    other_fits: bool | None
    explanation: str


@dataclass(**PART)
class CapacityModel(Part):
    """`capacity_model`: which capacity model answered (the static bound or an engine)."""

    name: str
    label: str
    detail: str
    version: str | None = ABSENT
    version_basis: str | None = ABSENT
    selected_by: str | None = ABSENT


@dataclass(**PART)
class Suggestion(Part):
    """One change that would fit, re-planned with the same capacity model."""

    change: str
    flags: str
    description: str
    layout: str = ABSENT
    max_sequences: int | None = ABSENT
    value: object = ABSENT
    context: int = ABSENT


@dataclass(**PART)
class Report(Part):
    """A plan's answer. `chosen` is the recommended layout in full (the same object as its
    entry in `layouts`; not part of the JSON)."""

    report_version: int
    model: ModelInfo
    input_config: str | None
    architecture: Architecture
    context_tokens: int
    context_source: str
    max_context_tokens: int | None
    hypothetical: bool
    kv_dtype: str
    dtypes: Dtypes
    quantization: Quantization | None
    capacity_model: CapacityModel
    state: State
    weights: WeightBytes
    layouts: tuple[Layout, ...]
    recommended: LayoutSummary | None
    fits: bool | None
    suggestions: tuple[Suggestion, ...]
    warnings: tuple[str, ...]
    rope_scaling: RopeScaling = ABSENT
    target: Target = ABSENT
    hardware: Hardware | None = ABSENT
    detected_hardware: DetectedHardware = ABSENT
    best_scale_up_local: LayoutSummary | None = ABSENT
    best_any_fabric: LayoutSummary | None = ABSENT
    placement_notes: tuple[str, ...] = ABSENT
    memory_basis_comparison: BasisComparison | None = ABSENT
    expert_parallel: ExpertParallel = ABSENT
    search: Search = ABSENT
    inverse: Inverse = ABSENT
    headers: Headers = ABSENT
    engine_command: EngineCommand = ABSENT
    engine_check: Frozen = ABSENT
    sweep: Sweep = ABSENT
    speculative_draft: SpeculativeDraft = ABSENT
    tune: Tune = ABSENT
    chosen: Layout | None = field(default=None, metadata={"json": False})
