"""The plan report: one frozen, typed model that the planner builds once and renderers read.

Every part is a frozen dataclass; attribute names are the JSON keys of
`schemas/report.schema.json`. A field holding `ABSENT` is a key the JSON leaves out (falsy,
so `if lay.static:` reads naturally). Open mappings (`engine_check`, RoPE `stated`/`engines`,
`layer_sets`, a sweep cell's `values`, an open part's `more`) are `Frozen`: read-only, deeply.
`to_json()` renders the model as the JSON the `--json` output prints. An engine's prediction
is typed where text and charts read it; the engine-specific rest of it stays in `more` (a
Frozen mapping rendered inline).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass


class _Absent:
    """The one ABSENT marker: a key the JSON leaves out."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


class Frozen(Mapping):
    """A read-only mapping whose values are frozen too (dicts -> Frozen, lists -> tuples)."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping = ()):
        object.__setattr__(self, "_data", {k: freeze(v) for k, v in data.items()} if type(data)
                           is dict else {k: freeze(v) for k, v in dict(data).items()})

    def __setattr__(self, name, value):
        raise AttributeError("a Frozen mapping cannot be changed")

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Frozen({self._data!r})"


_SCALARS = frozenset({str, int, float, bool, type(None)})


def freeze(value):
    """`value` with every dict made a Frozen mapping and every list a tuple."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return Frozen(value)
    if kind is list or kind is tuple:
        return tuple(freeze(v) for v in value)
    if isinstance(value, Frozen) or is_dataclass(value):
        return value
    if isinstance(value, Mapping):
        return Frozen(value)
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def to_plain(value):
    """JSON-ready: dataclasses and Frozen mappings become dicts (ABSENT fields and fields
    marked json=False left out), tuples become lists."""
    if is_dataclass(value):
        out = {}
        for f in fields(value):
            v = getattr(value, f.name)
            if v is ABSENT or not f.metadata.get("json", True):
                continue
            if f.name == "more":              # an open part's other keys, inline
                out |= to_plain(v)
            else:
                out[f.name] = to_plain(v)
        return out
    if isinstance(value, Mapping):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


PART = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**PART)
class Part:
    """Base of every report part: `to_json()` is its JSON object."""

    def to_json(self) -> dict:
        return to_plain(self)


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
class PipelineStage(Part):
    stage: int
    layers: tuple[int, ...]
    weights_bytes: int | None
    state_bytes_per_sequence: int
    left_bytes: int | None = ABSENT
    sequences: int | None = ABSENT
    components: tuple[str, ...] = ABSENT


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


@dataclass(**PART)
class Quantity(Part):
    """One number of an engine's prediction and the rule (or source) it comes from."""

    value: object = ABSENT
    basis: str | None = ABSENT
    charged: bool = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class Refusal(Part):
    reason: str
    rule: str = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class BlockGroup(Part):
    """The blocks one KV-cache group pins per request (vLLM)."""

    components: str = ABSENT
    family: str = ABSENT
    blocks: int = ABSENT
    rule: str = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class HybridPages(Part):
    """vLLM's hybrid attention + recurrent page padding."""

    log_line: str = ABSENT
    recurrent_padding_percent: Quantity = ABSENT
    attention_page_bytes_per_token: Quantity = ABSENT
    recurrent_page_bytes: Quantity = ABSENT
    recurrent_page_padded_bytes: Quantity = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class FittedRegime(Part):
    inside: bool
    note: str = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class EngineMemory(Part):
    """vLLM's memory terms on one rank."""

    total_bytes: Quantity | None = ABSENT
    requested_bytes: Quantity | None = ABSENT
    weights_bytes: Quantity | None = ABSENT
    activation_peak_bytes: Quantity | None = ABSENT
    non_torch_bytes: Quantity | None = ABSENT
    cudagraph_bytes: Quantity | None = ABSENT
    available_kv_bytes: Quantity | None = ABSENT
    fitted_regime: FittedRegime | None = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class EngineStage(Part):
    stage: int
    layers: tuple[int, ...]
    num_gpu_blocks: int | None = ABSENT
    max_total_num_tokens: int | None = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class EngineStages(Part):
    value: tuple[EngineStage, ...]
    binding_stage: int
    basis: str
    more: Frozen = ABSENT


@dataclass(**PART)
class EnginePrediction(Part):
    """The engine's prediction for one instance of a layout (kvfit.engines): what its log
    would print, its pool, its memory terms and whether it refuses to start; its other,
    engine-specific numbers are in `more`."""

    engine: str
    version: str
    version_basis: str
    log_lines: tuple[str, ...] = ABSENT
    warnings: tuple[str, ...] = ABSENT
    refusal: Refusal | None = ABSENT
    mem_fraction_static: Quantity | None = ABSENT
    max_running_requests: Quantity | None = ABSENT
    mamba_cache_size: Quantity | None = ABSENT
    num_gpu_blocks: Quantity | None = ABSENT
    block_size: Quantity | None = ABSENT
    blocks_per_request: Quantity | None = ABSENT
    attention_token_capacity: Quantity | None = ABSENT
    capacity_over_len: Quantity | None = ABSENT
    max_concurrency: Quantity | None = ABSENT
    pool_bytes: Quantity | None = ABSENT
    free_before_load_bytes: Quantity | None = ABSENT
    weights_bytes: Quantity | None = ABSENT
    request_blocks_by_group: tuple[BlockGroup, ...] = ABSENT
    hybrid: HybridPages | None = ABSENT
    memory: EngineMemory | None = ABSENT
    pipeline_stages: EngineStages | None = ABSENT
    more: Frozen = ABSENT


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


@dataclass(**PART)
class Headers(Part):
    """`headers`: what --verify-headers read."""

    source: str
    tensors: int
    tensor_bytes: int
    bytes_by_dtype: Frozen
    layers_covered: int


@dataclass(**PART)
class HostLaunch(Part):
    host: int
    launch: str


@dataclass(**PART)
class EngineCommand(Part):
    """`engine_command`: the launch command of the recommended layout."""

    engine: str = ABSENT
    version: str | None = ABSENT
    version_basis: str | None = ABSENT
    launch: str | None = ABSENT
    hosts: tuple[HostLaunch, ...] = ABSENT
    notes: tuple[str, ...] = ABSENT
    bench: str | None = ABSENT
    source: str | None = ABSENT
    layout: str = ABSENT
    layout_id: str = ABSENT


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
