"""The one straight road: metadata -> spec -> state -> weights -> placements -> Report."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..checkpoint.metadata import Metadata, once
from ..checkpoint.weights import Weights, count_weights, with_replicated
from ..errors import UsageError
from ..model.base import freeze
from ..model.plan import Dtype, Dtypes, Report
from ..paths import expand_user
from ..report.reasons import ConfigEstimate
from ..state.evaluate import evaluate_components
from ..state.resolve import resolve_architecture
from .cache_dtypes import cache_dtypes, cache_names
from .capacity import Capacity
from .context import parse_context
from .draft import speculative_draft
from .ownership import pinned_weights
from .request import DEFAULT_UTILIZATION, PlanRequest, check_request
from .sections import (
    architecture_section,
    model_section,
    quant_section,
    rope_warning,
    state_sections,
)

GIB = 1024**3
REPORT_VERSION = 2


@dataclass(slots=True)
class Model:
    """Everything placements need about the checkpoint; `at(ctx)` re-counts the state."""

    meta: Metadata
    arch: object
    fields: dict
    sets: dict
    names: dict
    cache_layout: str | None
    ctx: int
    comps: list
    weights: Weights
    divides: list
    ownership: object = None
    cache_dtypes: tuple = ()
    capacity: Capacity = field(default_factory=Capacity)
    declared: int | None = None
    rope: object = None
    memo: dict = field(default_factory=dict, repr=False)
    per_tp: dict = field(default_factory=dict, repr=False)   # placements' per-TP-size facts
    judge: object = None            # kvfit.planner.constraints.Judge: the engines' layout rules
    n_layers: int = 0               # decoder layers (what pipeline stages split)
    edge: object = None             # embedding / LM-head bytes (kvfit.engines.pp_split.Edge)

    def at(self, ctx: int) -> list:
        """The state components at context `ctx` (tokens), counted once per context."""
        if ctx == self.ctx:
            return self.comps
        if ctx not in self.memo:
            self.memo[ctx] = evaluate_components(self.arch, self.fields, self.sets, ctx,
                                                 self.names, self.cache_layout)
        return self.memo[ctx]


def load_metadata(req: PlanRequest) -> Metadata:
    """Local path -> local loader; anything else goes to the Hub resolver."""
    if req.model is None:
        raise UsageError("no model given.", hint="Pass a checkpoint directory, a config.json, "
                         "a Hub id such as Qwen/Qwen3-32B, or a TOML preset.")
    try:
        path = expand_user(req.model)  # a preset's "~/models/x" as a shell would read it
        local = path.exists()
    except ValueError:              # not encodable (a lone surrogate): the parser says why
        local = False
    except OSError as exc:          # a name the file system refuses (a part over 255 bytes)
        raise UsageError(f"cannot use the model path {str(req.model)[:80]!r}...: "
                         f"{exc.strerror}.", hint="Pass a checkpoint directory, a "
                         "config.json or a Hub id.") from None
    if local:
        from ..checkpoint.local import load_local
        if path.suffix != ".gguf":
            return load_local(path)
    from .. import hub
    ref = hub.parse_reference(req.model, req.revision)
    if ref.kind == "local":              # the parser's reading ("..\n" is "..", "~/x" expanded)
        from ..checkpoint.local import load_local
        return load_local(Path(ref.path))
    headers = req.parallelism != "tp" or req.verify_headers   # ownership/verification read them
    started = req.hub_started() if callable(req.hub_started) else req.hub_started
    return hub.resolve(ref, offline=req.offline, timeout=req.timeout, read_headers=headers,
                       quiet=req.json, started=started)


def _context(req, fields, warnings, root) -> tuple[int, int | None, str, object]:
    """(context, maximum, where the context came from, the stated RoPE scaling or None)."""
    declared = fields["max_context"].value
    rope = None
    if req.rope_scaling:                  # kvfit.planner.rope answers None for none stated
        from .rope import scaling
        rope = scaling(req.rope_scaling, req.rope_scaling_source, declared, warnings,
                       root.get("rope_scaling"))
    where = fields["max_context"].provenance
    if rope is not None:
        declared = rope.max_tokens
        where = (f"{rope.factor_text()} from {rope.source}, over {where}")
    if req.context is None:
        if declared is None:
            raise UsageError("the config declares no maximum context; pass --context.")
        return declared, declared, f"the declared maximum ({where})", rope
    ctx = parse_context(req.context)
    if declared is not None and ctx > declared:
        if not req.allow_context_overflow:
            from .rope import how_to_state
            raise UsageError(f"context {ctx:,} exceeds the checkpoint's declared maximum of "
                             f"{declared:,} tokens ({where}).",
                             hint=how_to_state(ctx, declared) if rope is None else
                             "Raise the factor, or use --allow-context-overflow to plan it "
                             "anyway; the result is then labelled hypothetical.")
        warnings.append(f"HYPOTHETICAL: context {ctx:,} exceeds the declared maximum {declared:,}.")
    return ctx, declared, f"user: --context {req.context}", rope


def loaded_quantization(cap, meta, warnings: list[str]):
    """(QuantSummary, why) when the engine flags' --quantization makes the engine quantize
    the checkpoint while loading it, else None; ConfigError (exit 2) for a method this engine
    version lacks or refuses here (kvfit.engines.load_quant.planned)."""
    method = cap.flags.get("quantization") if cap.engine else None
    if method is None:
        return None
    from ..checkpoint.quant import summarize
    from ..engines.load_quant import planned

    summary, why = planned(cap.rules, method, summarize(meta))
    if summary is None and why:
        warnings.append(why)
    return (summary, why) if summary is not None else None


def _loaded_weights(req, meta, res, model_bytes, loaded, warnings) -> Weights:
    """The weights as the engine holds them after quantizing at load (`loaded`): the config
    estimate with that storage, never the files' bytes; --weight-gib still wins."""
    if req.weight_gib is not None:
        return count_weights(meta, req.weight_gib)
    if req.parallelism != "tp":
        raise UsageError(f"--quantization with --parallelism {req.parallelism}: kvfit does not "
                         "model expert ownership of weights quantized while loading.",
                         hint="Plan --parallelism tp, or pass --weight-gib with the loaded "
                              "size per replica.")
    est, why = (None, f"spec '{res.arch.id}' lists no parameter shapes")
    if res.arch.parameters is not None:
        from ..checkpoint.weights import config_estimate
        est, why = config_estimate(meta, res, model_bytes, req.mtp, quant=loaded[0])
    if est is None:
        warnings.append(f"Weight bytes are unknown: {loaded[1]}, and no config estimate: {why}. "
                        "Pass --weight-gib with the loaded size.")
        return Weights(None, "unknown", f"{loaded[1]}; no config estimate: {why}")
    warnings.append(f"Weight bytes are the weights as loaded, an ESTIMATE from the config's "
                    f"tensor shapes: {loaded[1]} ({est.total_bytes / GIB:.2f} GiB).")
    return with_replicated(Weights(est.total_bytes, "config estimate",
                                   f"{loaded[1]}: {est.detail}"),
                           res.arch.parameters, lambda: (est, ""))


def checkpoint_weights(req, meta, res, quant, model_bytes, warnings, loaded=None):
    """Checkpoint bytes, and expert ownership when an expert-parallel profile is asked for.
    `loaded`: (QuantSummary, why) when the engine quantizes the checkpoint while loading."""
    if loaded is not None:
        return _loaded_weights(req, meta, res, model_bytes, loaded, warnings), None
    arch = res.arch
    if req.parallelism != "tp":
        from ..engines import parallelisms
        if req.parallelism not in parallelisms():
            raise UsageError(f"--parallelism {req.parallelism!r}: choose "
                             f"{', '.join(('tp', *parallelisms()))}.")
    floor = ((quant or {}).get("runtime_floor_gib"), (quant or {}).get("runtime_floor_basis"))
    weights = pinned_weights(count_weights(meta, req.weight_gib, *floor), meta, res, req.model)
    why_not = None
    memo: list = []

    def estimate():
        """The config-shape estimate (computed at most once): (WeightEstimate | None, why)."""
        if not memo:
            from ..checkpoint.weights import config_estimate
            memo.append(once(meta, ("estimate", model_bytes, req.mtp),
                             lambda: config_estimate(meta, res, model_bytes, req.mtp))
                        if arch.parameters is not None
                        else (None, f"spec '{arch.id}' lists no parameter shapes"))
        return memo[0]

    own = None
    if req.parallelism != "tp":
        from .ownership import establish
        own = establish(meta, arch, res.values, req.model, estimate, weights)
        if weights.bytes is None and own.source != "config estimate":
            weights = Weights(own.total_bytes, "expert ownership", f"{own.detail}; tensor "
                              "bytes only (the files are slightly larger: headers not counted)")
        elif req.weight_gib is not None and own.source != "config estimate":
            warnings.append("--weight-gib sets the plain TP layouts' weights only; attention-DP "
                            "layouts count the checkpoint's own tensor bytes.")
    if weights.source == "unknown" and arch.parameters is not None:
        est, why_not = estimate()
        weights = count_weights(meta, req.weight_gib, *floor, est)
    weights = with_replicated(weights, arch.parameters, estimate)
    if weights.source == "config estimate":
        warnings.append(str(ConfigEstimate(weights.bytes)))
    if weights.bytes is None:
        why = f" A config estimate is unavailable: {why_not}." if why_not else ""
        warnings.append("Weight bytes are unknown (no weight files or index): layouts report "
                        f"state only. Pass --weight-gib to plan the fit.{why}")
    return weights, own


def _judge(cap, quant, res, own, meta, model_bytes):
    """The engines' layout constraints (kvfit.planner.constraints) for this checkpoint; a padded
    shard's routed-expert bytes come from the ownership, else the estimate's routed rows."""
    from .constraints import judge_for

    def routed():
        if own is not None:
            return own.routed_bytes
        from ..checkpoint.weights import config_estimate
        from .expert_split import split_of

        est, _ = once(meta, ("estimate", model_bytes, False), lambda: config_estimate(
            meta, res, model_bytes)) if res.arch.parameters else (None, "")
        split = split_of(est) if est is not None else None
        return split.routed_bytes if split else None

    return judge_for(cap, quant, res.root, routed)


def _headers(req, meta, n_layers, warnings):
    """--verify-headers section (or, without it, an index-coverage warning)."""
    from .headers import index_coverage_warning, verify

    if not req.verify_headers:
        index_coverage_warning(meta, n_layers, warnings)
        return None
    path = Path(req.model) if req.model else None
    return verify(meta, n_layers, path if path is not None and path.is_dir() else None)


def engine_setup(req: PlanRequest, meta, res, warnings: list[str]):
    """(Capacity without its per-model facts, the engine tuple cache_dtypes takes)."""
    stated = req.utilization is not None
    if not req.engine:
        return Capacity(budget_utilization=req.utilization if stated else DEFAULT_UTILIZATION,
                        utilization_basis="user" if stated else "kvfit default"), None
    from ..checkpoint.quant import summarize
    from ..engines import get, resolve_rules
    from ..engines.quant_methods import check as check_quant

    eng = get(req.engine)
    rules, how = resolve_rules(req.engine, req.engine_version, req.engine_strict)
    if rules.extrapolated_from:
        warnings.append(f"{req.engine} {rules.version} is newer than every version kvfit has rules "
                        f"for: the {rules.extrapolated_from} rules answer, extrapolated (an engine "
                        "change since then is not modelled). --engine-strict refuses instead.")
    flags = dict(req.engine_flags)
    if flags.get("quantization") is not None:      # the engines' method names are lower case
        flags["quantization"] = str(flags["quantization"]).strip().lower()
    if req.kv_dtype != "auto" and "kv_cache_dtype" not in flags:
        flags["kv_cache_dtype"] = eng.kv_spelling(rules, req.kv_dtype)
    if req.utilization is not None and eng.utilization_flag:
        flags[eng.utilization_flag] = req.utilization
    if req.mtp and not flags.get("num_speculative_tokens"):
        from .launch import mtp_tokens
        flags["num_speculative_tokens"] = mtp_tokens(req, res.fields)
    u, basis = (req.utilization, "user") if stated else eng.budget_utilization(rules)
    u = DEFAULT_UTILIZATION if u is None else u             # None: kvfit's default
    summary = summarize(meta).to_json()
    check_quant(rules, summary, meta.config, flags)
    cap = Capacity(req.engine, rules.version, how, rules, flags, dict(req.engine_overrides),
                   None if eng.utilization_flag else req.utilization, req.engine_selected_by,
                   summary, budget_utilization=u, utilization_basis=basis)
    if req.engine_selected_by:
        warnings.append(f"Engine {req.engine} {rules.version} answers this plan: chosen by "
                        f"{req.engine_selected_by}.")
    return cap, (rules, res, summary, flags.get("kv_cache_dtype"), flags.get("dtype"))


def tp_divides(arch, values: dict) -> list[tuple[str, int]]:
    """The spec's `tensor_parallel.divides` values: positive whole numbers, or a ConfigError
    (a config's `num_attention_heads: 1e308` leaves the sandbox's bounds here)."""
    from ..errors import ConfigError
    from ..expr import ExprError

    out = []
    for e in arch.tp_divides:
        try:
            value = e.evaluate(values)
        except ExprError as exc:
            raise ConfigError(f"spec '{arch.id}': the TP divisor '{e.text}' cannot be computed "
                              f"from this config: {exc.message}.") from None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"spec '{arch.id}': the TP divisor '{e.text}' is {value!r} for "
                              "this config, not a positive whole number.")
        out.append((e.text, value))
    return out


def _capability(req: PlanRequest) -> str | None:
    """The compute capability of the one GPU type the plan names (--hardware / --system), for
    the engine's backend-specific storage layouts; None for a --systems search or no GPU."""
    from .systems import from_request
    if req.systems:
        return None
    topo = from_request(req)
    return topo.accelerator.compute_capability if topo is not None else None


def prepare(req: PlanRequest, warnings: list[str], meta: Metadata | None = None
            ) -> tuple[Model, dict]:
    """Read the checkpoint (unless `meta` was read), match its spec, count its state: (Model, head)."""
    meta = load_metadata(req) if meta is None else meta
    res = once(meta, ("resolution",), lambda: resolve_architecture(meta.config))
    arch, root, root_name, prefix = res.arch, res.root, res.root_name, res.prefix
    fields, values, n_layers, sets = res.fields, res.values, res.n_layers, res.sets
    quant = quant_section(meta, warnings)
    cap, engine = engine_setup(req, meta, res, warnings)
    kv, index, model, layout = cache_dtypes(req, meta, arch, root, root_name, quant, warnings, engine,
                                            _capability(req) if engine else None)
    layout = req.cache_layout or layout
    ctx, declared, ctx_source, rope = _context(req, fields, warnings, root)
    warnings += arch.class_default_warnings(fields)
    rope_warning(root, prefix, warnings)
    names = {"kv_bytes": kv.bytes, "index_bytes": index.bytes, "model_bytes": model.bytes,
             "mtp": 1 if req.mtp else 0}
    comps = once(meta, ("state", ctx, tuple(names.items()), layout),
                 lambda: evaluate_components(arch, fields, sets, ctx, names, layout))
    weights, own = checkpoint_weights(req, meta, res, quant, model.bytes, warnings,
                                      loaded_quantization(cap, meta, warnings))
    divides = tp_divides(arch, values)
    caches = cache_names(kv, index, arch, comps, req.index_dtype, warnings)
    if cap.engine:
        from ..engines.state import architectures, model_head_size, vocab_size
        cap = replace(cap, vocab=vocab_size(meta, res), max_context=declared,
                      kv_bytes=float(kv.bytes), index_dtype=dict(caches).get("index")
                      if req.index_dtype != "auto" else None, kv_name=kv.name,
                      head_size=model_head_size(cap.rules, fields), config=root,
                      architectures=architectures(meta.config), model_config=meta.config)
    m = Model(meta, arch, fields, sets, names, layout, ctx, comps, weights, divides,
              own, caches, cap, declared, rope)
    m.judge = _judge(cap, quant, res, own, meta, model.bytes)
    if (req.pp or 1) > 1:
        from ..engines.pp_split import edge_weights
        m.n_layers, m.edge = n_layers, edge_weights(root, model.bytes)
    headers = _headers(req, meta, n_layers, warnings)
    head = {
        "report_version": REPORT_VERSION, "model": model_section(meta),
        "input_config": req.input_config,
        "architecture": architecture_section(arch, fields, n_layers, sets),
        "context_tokens": ctx, "context_source": ctx_source, "max_context_tokens": declared,
        "hypothetical": declared is not None and ctx > declared,
        **({"rope_scaling": rope.section()} if rope is not None else {}),
        "kv_dtype": kv.name,
        "dtypes": Dtypes(**{k: Dtype(name=d.name, bytes_per_value=str(d.bytes),
                                     provenance=d.provenance, note=d.note)
                            for k, d in (("kv", kv), ("index", index), ("model", model))}),
        "quantization": quant, "capacity_model": cap.section(),
    }
    if headers is not None:
        head["headers"] = headers
    return m, head | speculative_draft(values, fields, comps)


def plan(req: PlanRequest, engine: dict | None = None, meta: Metadata | None = None,
         prepared=None, compare_bases: bool = True) -> Report:
    """Run a plan and return its frozen Report (kvfit.model).

    engine (optional, for library callers): {"engine", "version", "flags", "overrides",
    "print_command"} merged into the request; its prediction is then every layout's capacity.
    meta (optional): the checkpoint metadata `load_metadata(req)` returned, reused (a sweep
    resolves the checkpoint once for all its cells). prepared (optional): a
    kvfit.planner.prepared.Preparations, prepare() once for requests differing only in the fleet.
    compare_bases=False (for callers that read only the verdict): no memory_basis_comparison.
    """
    from ..preflight.options import engine_check

    if engine:
        req = replace(req, engine=engine.get("engine") or engine.get("print_command"),
                      engine_version=engine.get("version"), engine_flags=dict(engine.get("flags") or {}),
                      engine_overrides=dict(engine.get("overrides") or {}),
                      print_command=engine.get("print_command"))
    check_request(req)                 # the plan's numbers, then --check-engine, before any work
    if req.tune or req.tune_max_utilization is not None:
        from .tune import check as check_tune
        check_tune(req)
    check = engine_check(req)
    warnings: list[str] = []
    from ..hardware.presets import alias_note

    detected = None      # kvfit.hardware.detect.apply acts on --hardware auto and --memory-basis free only
    if req.memory_basis == "free" or str(req.hardware or "").casefold() == "auto":
        from ..hardware.detect import apply
        req, detected = apply(req, warnings)
    note = alias_note(req.hardware)
    if note:
        warnings.append(note)
    m, report = (prepared or prepare)(req, warnings, meta)
    if detected is not None:
        report["detected_hardware"] = detected
    asked, req = req, replace(req, utilization=m.capacity.budget_utilization)   # resolved once
    report |= state_sections(m, m.comps, m.ctx)
    if req.systems:
        from . import search
        report |= search.run(req, m, warnings)
    elif req.min_gpus or req.max_context:
        from . import inverse
        report |= (inverse.min_gpus if req.min_gpus else inverse.max_context)(
            req, m, warnings).fields
    else:
        from . import placements
        report |= placements.plan_placements(req, m, placements.topology(req), warnings,
                                             compare_bases=compare_bases).fields()
    if m.ownership is not None:
        from .dpa import section
        report["expert_parallel"] = section(req.parallelism, m.ownership, m.comps)
    from .assemble import assemble
    out = assemble(report | {"suggestions": [], "warnings": warnings})
    if req.print_command:
        from .launch import launch_command
        out = replace(out, engine_command=launch_command(req, m, out))
    if req.tune:
        from .tune import run as tune
        out = replace(out, tune=tune(req, m, out, asked))
    if out.fits is False and req.suggest and out.hardware:
        from .suggest import suggestions
        out = replace(out, suggestions=suggestions(req, m, out, plan, asked))
    if check is not None:
        from ..preflight import run_check
        out = replace(out, engine_check=freeze(run_check(check, req, m.meta, out)))
    return replace(out, warnings=tuple(warnings))
