"""Shared pieces of the engine predictions: the inputs, numbers with a basis, GiB helpers."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.base import ABSENT, Frozen, freeze
from ..model.engine import EnginePrediction, Quantity, Refusal

GIB, MIB = 1024**3, 1024**2
_PLAIN = (str, int, float, bool, type(None))


def num(value, basis: str, *, charged: bool = ABSENT, **extra) -> Quantity:
    """A number with its basis ("engine rule <file:line>", "estimate (...)", "user", "log",
    "checkpoint", "hardware spec"), plus optional extra facts (None ones left out)."""
    more = {k: v for k, v in extra.items() if v is not None}
    return Quantity(value=value if type(value) in _PLAIN else freeze(value), basis=basis,
                    charged=charged, more=Frozen(more) if more else ABSENT)


def prediction(rules, inp, **parts) -> EnginePrediction:
    """An engine's prediction for one instance at inp.tp: the rules it used and its `parts`
    (kvfit.model.engine.EnginePrediction fields); the registry adds how the version was
    chosen."""
    return EnginePrediction(
        engine=rules.engine, version=rules.version, rules_range=rules.label,
        evidence=freeze(list(rules.evidence)), tp=inp.tp,
        per="one engine instance (one DP replica); every number is per GPU of it",
        metrics=freeze(rules.metrics), **parts)


def gib(n: float | int | None) -> str:
    """'58.11 GiB' (two decimals, like the engines print) or 'n/a'."""
    return "n/a" if n is None else f"{n / GIB:.2f} GiB"


@dataclass(slots=True)
class Inputs:
    """Everything a prediction needs besides the engine rules and flags.

    components: kvfit ComponentState list (evaluated with the engine's KV dtype/layout);
    tp: tensor-parallel size of one replica; context: the planned max_model_len (tokens);
    weights_bytes_per_rank: weight bytes one rank loads (None: unknown);
    weights_basis: where that number came from ("checkpoint", "user", "log");
    weights_packed: True when weights come from checkpoint bytes and the engine's load-time
      packing estimate should apply;
    visible_bytes: driver-visible (nvidia-smi) memory per GPU; total_bytes: torch-visible
      total when known (hardware spec cuda_total or a log), with total_basis;
    free_before_load_bytes: free memory before weights load (SGLang), when a log shows it;
    quant: kvfit's quantization summary dict; vocab: the model's vocabulary size;
    overrides: user GiB overrides {"activation", "cudagraph", "non_torch", "free_before_load"};
    graph_counts: (piecewise, full) CUDA graphs captured, when a log states them;
    max_context: the config's declared maximum context (engines refuse a longer one);
    device: the kvfit hardware id of the GPU, when known (some defaults depend on it);
    utilization: the plan's stated --utilization (fraction of total GPU memory); SGLang
      converts it to its --mem-fraction-static (None: the engine's own default);
    capability: the GPU's CUDA compute capability ("9.0"; None: unknown); kv_bytes: bytes per
      KV value of the cache (the MLA backend, hence the block size, depends on both);
    index_dtype: the sparse-indexer key dtype the user chose (None: the engine's default);
    stages: pipeline stages (StageInputs; None: no pipeline parallelism;
      kvfit.engines.vllm_pp, kvfit.engines.sglang_pp);
    sampler: False on a PP stage that is not the last (no sampler logits in its profiling run);
    pp_first: False on a PP stage that is not the first (it receives intermediate tensors);
    kv_name: kvfit's name of the KV cache dtype ("fp8_e4m3"; some backends take only some 8-bit
      spellings); head_size: the model's largest attention head size (vLLM's whole-model
      head_size, the maximum over layers; None: unknown or not a plain-attention model);
    config: the model's text config (kernel choices read it, e.g. a KDA gate bound);
    architectures: config.json's `architectures` (some engine pools depend on the class name;
      empty: unknown);
    model_config: config.json as a whole (SGLang's multimodal rules read its vision_config,
      sub-configs and model_type; None: unknown).
    """

    components: list
    tp: int
    context: int
    weights_bytes_per_rank: int | None
    visible_bytes: int
    weights_basis: str = "checkpoint"
    weights_packed: bool = False
    total_bytes: int | None = None
    total_basis: str | None = None
    free_before_load_bytes: int | None = None
    quant: dict | None = None
    vocab: int | None = None
    overrides: dict = field(default_factory=dict)
    graph_counts: tuple | None = None
    max_context: int | None = None
    device: str | None = None
    utilization: float | None = None
    capability: str | None = None
    index_dtype: str | None = None
    kv_bytes: float | None = None
    stages: list | None = None
    sampler: bool = True
    pp_first: bool = True
    kv_name: str | None = None
    head_size: int | None = None
    config: dict | None = None
    architectures: tuple = ()
    model_config: dict | None = None

    @property
    def latent(self) -> bool:
        """True when the model keeps a latent (MLA) cache."""
        return any(c.kind == "latent" for c in self.components)

    @property
    def sparse(self) -> bool:
        """True when the model keeps sparse-indexer keys (DSA: DeepSeek-V3.2, GLM-5)."""
        return any(c.kind == "index" for c in self.components)

    @property
    def recurrent(self) -> bool:
        """True when the model keeps constant-size (recurrent) state."""
        return any(c.kind == "constant" for c in self.components)


@dataclass(frozen=True, slots=True)
class StageInputs:
    """One pipeline stage's inputs: its state components, the weight bytes one of its ranks
    loads, whether it is the last stage, and its decoder layers [first, end)."""

    components: tuple
    weights_bytes_per_rank: int | None
    last: bool
    layers: tuple[int, int]


def too_long(where: str, length: int, inp: Inputs) -> Refusal | None:
    """The refusal for a max_model_len above the config's declared maximum, or None; `where`:
    the engine code that refuses it."""
    if inp.max_context is None or length <= inp.max_context:
        return None
    return Refusal(reason=f"User-specified max_model_len ({length}) is greater than the derived "
                          f"max_model_len ({inp.max_context}) from the model's config.json.",
                   rule=f"engine rule {where}; not in engines.md (the engines allow it only "
                        "with an override environment variable)")


def flag(flags: dict, name: str, default=None):
    """A flag value, treating None as absent."""
    value = flags.get(name)
    return default if value is None else value
