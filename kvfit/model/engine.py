"""An engine's prediction for one layout (built by kvfit.engines) and the launch command.

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
