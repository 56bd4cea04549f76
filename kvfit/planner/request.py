"""What the user asked for, after CLI flags, TOML presets and engine spellings are merged.

One field per knob: `--utilization` and vLLM's `--gpu-memory-utilization` are the same field,
as are `--kv-dtype` / `--kv-cache-dtype`, `--context` / `--max-model-len` / `--context-length`
and `--tp` / `--tensor-parallel-size` / `--tp-size` (kvfit.planner.spellings maps them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

DEFAULT_UTILIZATION = 0.9


@dataclass
class PlanRequest:
    """One plan's inputs. Sizes in GiB, context as given (int or '32k'), fractions 0-1.

    utilization None: not stated; the plan resolves it once (the engine's default with
    --engine vllm, else kvfit's 0.9) and says where it came from.
    engine / engine_version / engine_flags / engine_overrides / print_command: the capacity
    model (kvfit.planner.capacity) and launch command (engine_strict: refuse a version newer
    than kvfit's rules instead of extrapolating); engine_selected_by says how the engine
    was chosen when --engine was not given (an engine-only flag, or --print-command).
    pp: pipeline-parallel stages per replica (None: 1); pp_layer_partition: vLLM's
    VLLM_PP_LAYER_PARTITION (decoder layers per stage, "16,32").
    tp: the model-group size (attention-DP + EP: the EP group); dp: replicas (or model
    groups), attention_dp: attention-DP groups per model group, when the user fixed them.
    detected: what `--hardware auto` saw (kvfit.hardware.detect), set by the plan; memory_basis "free"
    budgets from its least free GPU.
    hub_started: the time.monotonic() reading --timeout counts from (the CLI: the process
    start, so the whole run ends within it), or a function giving it (read when the Hub is
    first needed, so a local plan never imports the Hub's clock); None: from the first Hub
    request.
    tune: search the engine's settings for the target (kvfit.planner.tune);
    tune_max_utilization: the highest memory fraction it may choose (None: the engine's default).
    rope_scaling: the RoPE scaling the deployment serves with (kvfit.planner.rope), which raises
    the declared maximum context; rope_scaling_source: the flag or preset key that stated it.
    """

    model: str | None = None
    revision: str | None = None
    context: str | int | None = None
    kv_dtype: str = "auto"
    index_dtype: str = "auto"
    weight_gib: float | None = None
    allow_context_overflow: bool = False
    rope_scaling: dict | None = None
    rope_scaling_source: str | None = None
    hardware: str | None = None
    gpus: int | None = None
    system: str | None = None
    nodes: int | None = None
    systems: list[str] | None = None
    max_nodes: int | None = None
    parallelism: str = "tp"
    device_memory_gib: float | None = None
    max_context: bool = False
    min_gpus: bool = False
    tp: int | None = None
    pp: int | None = None
    pp_layer_partition: str | None = None
    dp: int | None = None
    attention_dp: int | None = None
    attention_tp: int | None = None
    utilization: float | None = None
    runtime_reserve_gib: float = 0.0
    concurrent_users: int = 1
    active_sequences_per_user: int = 1
    memory_basis: str = "visible"
    cache_layout: str | None = None
    mtp: bool = False
    offline: bool = False
    verify_headers: bool = False
    timeout: float = 10.0
    json: bool = False
    check_engine: str | None = None
    engine_python: str | None = None
    engine_probe: str | None = None
    engine_timeout: float | None = None
    engine_tp: int | None = None
    require_engine_pass: bool = False
    input_config: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    engine_strict: bool = False
    engine_flags: dict = field(default_factory=dict)
    engine_overrides: dict = field(default_factory=dict)
    print_command: str | None = None
    engine_selected_by: str | None = None
    suggest: bool = True
    tune: bool = False
    tune_max_utilization: float | None = None
    detected: dict | None = None
    hub_started: float | Callable[[], float] | None = None
    explicit: set = field(default_factory=set)
    origins: dict = field(default_factory=dict)   # request key -> the preset key that set it

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.name not in ("explicit", "origins")]


def normalize_tp(values: dict, flag: str = "--tp") -> dict:
    """Turn a tp of 'auto' (drop it) or a digit string into the request's int, in place."""
    from ..errors import UsageError

    tp = values.get("tp")
    if tp == "auto":
        values.pop("tp")
    elif isinstance(tp, str):
        from ..numbers import FIELDS, parse_whole, shown

        n = parse_whole(tp)
        if n is None:
            raise UsageError(f"{flag} {shown(tp)} must be auto or a whole number.")
        values["tp"] = whole_tp = n
        lo, hi = FIELDS["tp"][2:4]
        if not lo <= whole_tp <= hi:
            raise UsageError(f"{flag} must be a whole number from {lo:,} to {hi:,} "
                             f"(got {shown(tp)}).")
    return values


def check_request(req) -> None:
    """The plan's own checks of its numbers, one place for every caller (a single plan, a
    sweep's base request, `kvfit fit`'s target): each numeric field within its range
    (kvfit.numbers.FIELDS, whether it came from a flag, a preset or a library caller) and the
    context a token count, and a --kv-dtype other than auto a known cache dtype."""
    from ..numbers import FIELDS, check_fields
    from .context import parse_context

    check_fields({name: getattr(req, name, None) for name in FIELDS})
    if req.context is not None:
        parse_context(req.context)
    if req.kv_dtype is not None and req.kv_dtype != "auto":
        from ..dtypes import explicit
        explicit(req.kv_dtype)          # a name no model could make valid
