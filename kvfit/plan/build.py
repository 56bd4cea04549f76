"""The one straight road: metadata -> spec -> state -> weights -> layouts -> report dict."""

from __future__ import annotations

from pathlib import Path

from .. import dtypes
from ..errors import UsageError
from ..hardware import find_accelerator
from ..metadata import Metadata
from ..specs.registry import builtin_architectures, watchlist
from ..state.evaluate import check_requirements, evaluate_components
from ..state.fields import resolve_fields
from ..state.layers import evaluate_layers
from ..state.match import reject_unhandled, select
from ..weights import count_weights
from .context import parse_context
from .layouts import Budget, layout, recommend, tp_candidates, tp_problems
from .request import PlanRequest
from .sections import (
    architecture_section,
    component_section,
    model_section,
    quant_section,
    rope_warning,
)

GIB = 1024**3


def load_metadata(req: PlanRequest) -> Metadata:
    """Local path -> local loader; anything else goes to the Hub resolver."""
    if req.model is None:
        raise UsageError("no model given.", hint="Pass a checkpoint directory, a config.json, "
                         "a Hub id such as Qwen/Qwen3-32B, or a TOML preset.")
    path = Path(req.model)
    if path.exists():
        from ..source.local import load_local
        if path.suffix != ".gguf":
            return load_local(path)
    from .. import hub
    ref = hub.parse_reference(req.model, req.revision)
    return hub.resolve(ref, offline=req.offline, timeout=req.timeout)


def _dtypes(req, meta, root, root_name, quant, warnings):
    declared = quant.get("kv_cache") if quant else None
    source = quant.get("kv_cache_source") if quant else None
    kv = (dtypes.auto(meta.config, root, root_name, declared, source, warnings)
          if req.kv_dtype == "auto" else dtypes.explicit(req.kv_dtype))
    index = (dtypes.CacheDtype(kv.name, kv.bytes, "same as the KV cache (--index-dtype auto)")
             if req.index_dtype == "auto" else dtypes.explicit(req.index_dtype, "--index-dtype"))
    model = dtypes.model_dtype(meta.config, root, root_name) or dtypes.CacheDtype(
        "bf16", dtypes.WIDTHS["bf16"], "assumption: bf16")
    return kv, index, model


def _context(req, fields, warnings) -> tuple[int, int | None, str]:
    declared = fields["max_context"].value
    if req.context is None:
        if declared is None:
            raise UsageError("the config declares no maximum context; pass --context.")
        return declared, declared, f"the declared maximum ({fields['max_context'].provenance})"
    ctx = parse_context(req.context)
    if declared is not None and ctx > declared:
        if not req.allow_context_overflow:
            raise UsageError(f"context {ctx:,} exceeds the checkpoint's declared maximum of "
                             f"{declared:,} tokens ({fields['max_context'].provenance}).",
                             hint="Use --allow-context-overflow to plan it anyway; the result "
                                  "is then labelled hypothetical.")
        warnings.append(f"HYPOTHETICAL: context {ctx:,} exceeds the declared maximum {declared:,}.")
    return ctx, declared, f"user: --context {req.context}"


def plan(req: PlanRequest) -> dict:
    """Run a plan and return the JSON-ready report."""
    meta = load_metadata(req)
    arch, root, root_name = select(meta.config, builtin_architectures(), watchlist())
    reject_unhandled(arch, root, root_name, watchlist())
    prefix = f"{root_name}." if root_name else ""
    fields = resolve_fields(arch, root, prefix)
    check_requirements(arch, fields)
    values = {k: r.value for k, r in fields.items() if r.value is not None}
    n_layers, sets = evaluate_layers(arch, values)
    warnings: list[str] = []
    quant = quant_section(meta, warnings)
    kv, index, model = _dtypes(req, meta, root, root_name, quant, warnings)
    ctx, declared, ctx_source = _context(req, fields, warnings)
    rope_warning(root, prefix, warnings)
    names = {"kv_bytes": kv.bytes, "index_bytes": index.bytes, "model_bytes": model.bytes,
             "mtp": 1 if req.mtp else 0}
    comps = evaluate_components(arch, fields, sets, ctx, names, req.cache_layout)
    weights = count_weights(meta, req.weight_gib)
    if weights.bytes is None:
        warnings.append("Weight bytes are unknown (no weight files or index): layouts report "
                        "state only. Pass --weight-gib to plan the fit.")
    report = {
        "report_version": 1,
        "model": model_section(meta),
        "input_config": req.input_config,
        "architecture": architecture_section(arch, fields, n_layers, sets),
        "context_tokens": ctx, "context_source": ctx_source, "max_context_tokens": declared,
        "kv_dtype": kv.name,
        "dtypes": {k: {"name": d.name, "bytes_per_value": str(d.bytes), "provenance": d.provenance,
                       "note": d.note} for k, d in (("kv", kv), ("index", index), ("model", model))},
        "state": {"bytes_per_sequence": sum(c.bytes_per_sequence for c in comps),
                  "components": [component_section(c) for c in comps]},
        "weights": {"bytes": weights.bytes, "source": weights.source, "detail": weights.detail},
        "quantization": quant,
    }
    report |= _placements(req, arch, values, comps, weights.bytes, warnings)
    report["warnings"] = warnings
    return report


def _target(req) -> dict:
    for name in ("concurrent_users", "active_sequences_per_user", "gpus"):
        value = getattr(req, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 < value <= 1_000_000):
            raise UsageError(f"--{name.replace('_', '-')} must be a whole number from 1 to "
                             f"1,000,000 (got {value!r}).")
    return {"concurrent_users": req.concurrent_users,
            "active_sequences_per_user": req.active_sequences_per_user,
            "required_sequences": req.concurrent_users * req.active_sequences_per_user}


def _budget(req, acc, warnings) -> tuple[Budget, dict]:
    if not 0 < req.utilization <= 1:
        raise UsageError(f"--utilization {req.utilization} must be in (0, 1].")
    if not 0 <= req.runtime_reserve_gib < 100_000:
        raise UsageError(f"--runtime-reserve-gib {req.runtime_reserve_gib} must be >= 0.")
    if req.memory_basis not in ("visible", "nominal"):
        raise UsageError(f"--memory-basis {req.memory_basis!r}: choose visible or nominal.")
    mem, basis = acc.memory(req.memory_basis)
    if acc.unified:
        warnings.append(f"{acc.name} has unified memory shared with the CPU and OS; what the "
                        "GPU can allocate changes with host load. Treat the budget as a plan.")
    budget = Budget(mem, req.utilization, round(req.runtime_reserve_gib * GIB))
    return budget, {"id": acc.id, "name": acc.name, "memory_bytes_per_gpu": mem,
                    "memory_basis": req.memory_basis, "basis_detail": basis,
                    "utilization": req.utilization, "runtime_reserve_bytes": budget.reserve_bytes,
                    "budget_bytes_per_gpu": budget.budget_bytes}


def _placements(req, arch, values, comps, weights, warnings) -> dict:
    target = _target(req)
    if req.hardware is None:
        if req.gpus is not None or req.tp is not None:
            raise UsageError("--gpus and --tp need --hardware.")
        return {"target": target, "hardware": None, "layouts": [], "recommended": None,
                "fits": None}
    acc = find_accelerator(req.hardware)
    gpus = req.gpus or 1
    if req.tp is not None and (req.tp < 1 or gpus % req.tp):
        raise UsageError(f"--tp {req.tp} must divide --gpus {gpus}.")
    budget, hw = _budget(req, acc, warnings)
    divides = [(e.text, e.evaluate(values)) for e in arch.tp_divides]
    layouts = [layout(t, gpus, weights, comps, budget, target["required_sequences"],
                      tp_problems(t, comps, divides)) for t in tp_candidates(gpus, req.tp)]
    for lay in layouts:
        lay["replication"] = _replication(lay["tp"], comps)
    best = recommend(layouts)
    chosen = next((x for x in layouts if best and x["tp"] == best["tp"]), None)
    fits = None if weights is None else (chosen["fits"] if chosen else False)
    return {"target": target, "hardware": hw | {"gpus": gpus}, "layouts": layouts,
            "recommended": best, "fits": fits}


def _replication(tp: int, comps) -> list[str]:
    notes = []
    for c in comps:
        if c.heads is None and tp > 1:
            notes.append(f"{c.name}: replicated on every TP rank (one shared head)")
        elif c.heads is not None and tp > c.heads:
            notes.append(f"{c.name}: {c.heads} heads < TP={tp}, each rank keeps 1 head "
                         f"({tp // c.heads} copies of each)")
    return notes
