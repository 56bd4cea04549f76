"""The plan's one capacity model: the static counted-state bound, or an engine's prediction.

With `--engine ID` (vllm, sglang, ...; or an engine-only flag, or `--print-command`), every layout's
`max_sequences`, `fits` and `reason` are the engine's: how many full-context requests the
engine's own pool admits at once, per engine instance, times the instances of the layout. The
static bound stays beside it in `layouts[].static`. Without an engine the static bound answers.
Every question of a plan — headline, table, recommendation, --max-context, --min-gpus, the
--systems search, suggestions, audit, the launch command — goes through `Capacity.apply`, so
they cannot disagree.

Sequences per engine instance (one DP replica / one attention-DP group) are the engine's
answer (kvfit.engines.base.Engine.per_instance): vLLM's num_gpu_blocks // blocks per request,
SGLang's max_total_num_tokens // context_len, each capped by its running-requests limit; 0 if
the engine refuses to start.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..model.plan import Layout
from ..report.reasons import EngineHolds
from .request import DEFAULT_UTILIZATION


@dataclass(frozen=True, slots=True)
class Capacity:
    """Which model answers, and what it needs besides a layout.

    name: "static", or the id of the engine that answers (kvfit.engines.get); version /
    version_basis / rules: the engine rules
    used; flags: engine flags in the engine's names (kv_cache_dtype as the engine spells it,
    gpu_memory_utilization when the user stated one); overrides: GiB overrides of fitted
    terms; utilization: the stated --utilization (SGLang converts it to its memory
    fraction); selected_by: how the engine was chosen when --engine was not given;
    budget_utilization / utilization_basis: the one utilization every budget of the plan uses
    (the user's, else vLLM's default under --engine vllm, else kvfit's) and where it came from.
    """

    name: str = "static"
    version: str | None = None
    version_basis: str | None = None
    rules: object = None
    flags: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    utilization: float | None = None
    selected_by: str | None = None
    quant: dict | None = None
    vocab: int | None = None
    max_context: int | None = None
    kv_bytes: float | None = None
    index_dtype: str | None = None
    kv_name: str | None = None
    head_size: int | None = None
    config: dict | None = None
    architectures: tuple = ()
    model_config: dict | None = None
    budget_utilization: float = DEFAULT_UTILIZATION
    utilization_basis: str = "kvfit default"

    @property
    def engine(self) -> bool:
        return self.name != "static"

    @property
    def label(self) -> str:
        if not self.engine:
            return "static bound"
        extra = (f" (extrapolated from the {self.rules.extrapolated_from} rules)"
                 if getattr(self.rules, "extrapolated_from", None) else "")
        return f"{self.eng.title} {self.version} prediction{extra}"

    @property
    def eng(self):
        """The Engine that answers (kvfit.engines.base.Engine); only when `engine`."""
        from ..engines import get
        return get(self.name)

    def section(self) -> dict:
        """The report's `capacity_model`."""
        if not self.engine:
            from ..engines import engine_choices
            return {"name": "static", "label": self.label, "detail": "weights + counted "
                    f"per-sequence state within the budget; add {engine_choices()} for the "
                    "engine's own allocator"}
        return {"name": self.name, "label": self.label, "version": self.version,
                "version_basis": self.version_basis, "selected_by": self.selected_by,
                "detail": f"{self.eng.title}'s own pool: full-context sequences the engine "
                          "admits at once, per instance, times the layout's instances; the "
                          "static counted-state bound is shown beside it"}

    @property
    def pool_stated(self) -> bool:
        """True when the engine's KV pool needs no weights (vLLM with
        --kv-cache-memory-bytes)."""
        return self.engine and self.eng.pool_stated(self.flags)

    def apply(self, lay: Layout, comps, ctx: int, acc, memory_bytes: int, weights,
              required: int) -> Layout:
        """A static layout with the engine's capacity and verdict in place of its own (the
        layout unchanged without an engine). Without weight bytes only a stated pool is
        predicted: its blocks, tokens and concurrency are known, the verdict is not (unless
        the pool alone misses the target)."""
        no_weights = lay.per_rank.weights_bytes is None
        if not self.engine or not lay.valid or (no_weights and not self.pool_stated):
            return lay
        from ..engines import parallelism, predict_inputs
        from ..engines.common import MIB, Inputs
        from ..model.layout import StaticBound

        par = lay.parallelism
        mode = parallelism(par) if par != "tp" else None      # an attention-DP + EP mode
        tp, flags = mode.prediction_layout(lay.tp, lay.attention_tp, lay.attention_dp,
                                           dict(self.flags)) if mode else (lay.tp,
                                                                           dict(self.flags))
        total = acc.cuda_total_mib * MIB if acc.cuda_total_mib else None
        inp = Inputs(list(comps), tp, ctx, lay.per_rank.weights_bytes, memory_bytes,
                     weights_basis=f"plan: {weights.source}, per rank of this layout",
                     weights_packed=weights.source in ("checkpoint files", "safetensors index"),
                     total_bytes=total, total_basis=f"hardware spec {acc.id}: CUDA total"
                     if total else None, quant=self.quant, vocab=self.vocab,
                     overrides=self.overrides, max_context=self.max_context, device=acc.id,
                     utilization=self.utilization, capability=acc.compute_capability,
                     kv_bytes=self.kv_bytes, index_dtype=self.index_dtype,
                     kv_name=self.kv_name, head_size=self.head_size, config=self.config,
                     architectures=self.architectures, model_config=self.model_config)
        if lay.pipeline:
            inp.stages = pipeline_inputs(lay.pipeline, comps)
        e = predict_inputs(self.name, self.version, flags, inp)     # typed by the engine
        per, why = self.eng.per_instance(e, ctx)
        if e.pipeline_stages:               # the engine's pools say which stage binds
            lay = replace(lay, pipeline=replace(lay.pipeline,
                                                binding_stage=e.pipeline_stages.binding_stage))
        instances = lay.dp if par == "tp" else lay.attention_dp * lay.dp
        lay = replace(lay, static=StaticBound(max_sequences=lay.max_sequences,
                                              sequences_per_group=lay.sequences_per_group,
                                              fits=lay.fits, reason=lay.reason),
                      engine=e, capacity_model=self.name)
        if per is None:
            return replace(lay, max_sequences=None, sequences_per_group=None, fits=None,
                           reason=f"{self.label} unavailable: {why}")
        n = per * instances
        reason = why if e.refusal else str(EngineHolds(why, instances, n, required))
        fits = n >= required
        over = self._stated_pool_overflow(lay, total)
        if over:
            n, per, fits, reason = 0, 0, False, f"{why}; but {over}"
        elif no_weights and fits:
            fits, reason = None, reason + (" (the pool is the stated --kv-cache-memory-bytes; "
                                           "not judged: weight bytes unknown, so whether the "
                                           "weights fit beside it is not known)")
        return replace(lay, max_sequences=n, sequences_per_group=per, fits=fits, reason=reason,
                       sequences_per_replica=per if par == "tp" else per * lay.attention_dp)

    def _stated_pool_overflow(self, lay: Layout, total: int | None) -> str | None:
        """Why a stated pool cannot be allocated beside the weights, or None (the engine's
        answer: vLLM skips its memory check for a stated pool and runs out of memory)."""
        weights = lay.per_rank.weights_bytes
        if not self.pool_stated or weights is None or total is None:
            return None
        return self.eng.pool_overflow(self.flags, weights, total)


def pipeline_inputs(pipeline, comps) -> list:
    """The engine's per-stage inputs (kvfit.engines.common.StageInputs) of a TP x PP layout
    (the same split the layout used)."""
    from ..engines.common import StageInputs
    from ..engines.pp_split import stage_components
    rows, out = pipeline.stages, []
    for i, row in enumerate(rows):
        last = i == len(rows) - 1
        lo, hi = row.layers
        out.append(StageInputs(components=tuple(stage_components(
            comps, lo, 1 << 62 if last else hi, last)), weights_bytes_per_rank=row.weights_bytes,
            last=last, layers=tuple(row.layers)))
    return out
