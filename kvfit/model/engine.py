"""An engine's prediction for one layout, built typed where kvfit.engines computes it, and the
launch command. Every number is a `Quantity`: its value and the rule (basis) it comes from.

Frozen parts of the report (kvfit.model.base); attribute names are the JSON keys of
`schemas/report.schema.json`."""

from __future__ import annotations

from dataclasses import dataclass

from .base import ABSENT, PART, Frozen, Part


@dataclass(**PART)
class Quantity(Part):
    """One number of an engine's prediction and the rule (or source) it comes from."""

    value: object = ABSENT
    basis: str | None = ABSENT
    charged: bool = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class Refusal(Part):
    """Why the engine refuses to start, in its own words, and the rule that refuses."""

    reason: str
    rule: str = ABSENT
    estimated_max_model_len: int = ABSENT       # vLLM: the longest context that would fit
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
    """Whether a prediction lies inside the regime its fitted constants were fitted in."""

    inside: bool
    note: str = ABSENT
    outside: tuple[str, ...] = ABSENT
    regime: Frozen = ABSENT
    constants: tuple[str, ...] = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class EngineMemory(Part):
    """vLLM's memory terms on one rank."""

    total_bytes: Quantity | None = ABSENT
    gpu_memory_utilization: Quantity | None = ABSENT
    requested_bytes: Quantity | None = ABSENT
    weights_bytes: Quantity | None = ABSENT
    activation_peak_bytes: Quantity | None = ABSENT
    non_torch_bytes: Quantity | None = ABSENT
    cudagraph_bytes: Quantity | None = ABSENT
    available_kv_bytes: Quantity | None = ABSENT
    fitted_regime: FittedRegime | None = ABSENT
    free_at_start_bytes: Quantity | None = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class EngineStage(Part):
    """One pipeline stage's pool (vLLM: its memory and blocks; SGLang: its tokens)."""

    stage: int
    layers: tuple[int, ...]
    num_gpu_blocks: int | None = ABSENT
    max_total_num_tokens: int | None = ABSENT
    weights_bytes: int | None = ABSENT
    activation_peak_bytes: int | None = ABSENT
    available_kv_bytes: int | None = ABSENT
    bytes_per_block: int | None = ABSENT
    rest_bytes: int | None = ABSENT
    full_bytes_per_token: int | float | None = ABSENT
    refusal: str = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class EngineStages(Part):
    """Every pipeline stage's pool and the stage that binds."""

    value: tuple[EngineStage, ...]
    binding_stage: int
    basis: str
    pp: int = ABSENT
    split: str = ABSENT
    more: Frozen = ABSENT


@dataclass(**PART)
class PoolCells(Part):
    """SGLang's bytes per token of its full and SWA pools and per recurrent slot (one rank)."""

    full_bytes_per_token: Quantity
    swa_bytes_per_token: Quantity
    recurrent_bytes_per_slot: Quantity
    unmodelled_kinds: tuple[str, ...] = ()


@dataclass(**PART)
class EnginePrediction(Part):
    """The engine's prediction for one instance of a layout (kvfit.engines): what its log
    would print, its pool, its memory terms and whether it refuses to start. The engine
    builds it; the registry adds how its version was chosen (`version_basis`). Numbers only
    one engine computes are its own fields below, ABSENT under the other; `more` holds any
    other engine's own numbers."""

    engine: str
    version: str
    version_basis: str = ABSENT
    rules_range: str = ABSENT
    evidence: tuple[str, ...] = ABSENT
    tp: int = ABSENT
    per: str = ABSENT
    metrics: Frozen = ABSENT
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
    # vLLM's own: its settings, KV-cache groups and blocks
    max_model_len: Quantity = ABSENT
    max_num_batched_tokens: Quantity = ABSENT
    max_num_seqs: Quantity = ABSENT
    prefix_caching: Quantity = ABSENT
    groups: Quantity = ABSENT
    padding_layers: Quantity = ABSENT
    bytes_per_block: Quantity = ABSENT
    kv_cache_tokens: Quantity = ABSENT
    # SGLang's own: its pages, cells, the memory left for pools and the token pools
    attn_tp: Quantity = ABSENT
    swa_full_tokens_ratio: float = ABSENT
    padding_tokens: int = ABSENT
    page_size: Quantity = ABSENT
    context_len: Quantity = ABSENT
    cells: PoolCells = ABSENT
    rest_bytes: Quantity = ABSENT
    multimodal_reserve_bytes: Quantity = ABSENT
    max_total_num_tokens: Quantity = ABSENT
    swa_tokens: Quantity | None = ABSENT
    fixed_state_bytes: Quantity = ABSENT
    bytes_per_full_token: Quantity = ABSENT
    more: Frozen = ABSENT


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
