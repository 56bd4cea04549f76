"""explain-log: rerun kvfit's prediction for the run a start-up log describes, and put each
printed number beside the predicted one with the rule that produces it.

Inputs the log states (GPU total, flags, loaded weights) are used as inputs and marked so;
what kvfit predicts is predicted twice: end to end (from the GPU and the weights), and from
the engine's printed KV memory (which checks the paging rules alone).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, UsageError
from ..model.base import to_plain
from .common import GIB, MIB, Inputs
from .logparse import LogFacts, parse
from .registry import predict_inputs, resolve_version
from .rows import rows_for
from .spec import rules_for
from .state import architectures, engine_state

_SETTINGS = ("max_model_len", "max_num_batched_tokens", "max_num_seqs")
_KEEP = {"gpu_memory_utilization", "kv_cache_memory_bytes", "max_model_len", "max_num_seqs",
         "max_num_batched_tokens", "block_size", "kv_cache_dtype", "dtype", "enable_prefix_caching",
         "num_speculative_tokens", "decode_context_parallel_size", "enforce_eager",
         "mem_fraction_static", "page_size", "chunked_prefill_size", "max_running_requests",
         "max_total_tokens", "disable_radix_cache", "swa_full_tokens_ratio", "context_length",
         "attn_dp_size", "mamba_full_memory_ratio", "max_mamba_cache_size", "attention_backend",
         "limit_mm_per_prompt"}


def _metadata(model_dir: str | None, facts: LogFacts):
    if model_dir:
        from ..checkpoint.local import load_local

        return load_local(Path(model_dir))
    if facts.model and "/" in facts.model and not facts.model.startswith(("~", "/", ".")):
        from .. import hub

        return hub.resolve(hub.parse_reference(facts.model, None), offline=True)
    raise ConfigError("the log does not name a Hub model kvfit can look up"
                      + (f" ('{facts.model}')" if facts.model else "") + ", so the model's "
                      "config is missing.", hint="Pass --model-dir DIR (a folder with "
                      "config.json) or --config FILE.")


def _speculative(facts: LogFacts, user: dict) -> tuple[dict, bool]:
    """--speculative-config (the user's, else the log's) as (flags, MTP?). vLLM prints it as a
    nested dict in the non-default args; a method named 'mtp' or '<model>_mtp' runs the
    checkpoint's own MTP layers as the draft, whose KV joins the target's pool
    (vllm/config/speculative.py MTPModelTypes; engines.md section 2, multi-step MTP)."""
    spec = user.get("speculative_config", facts.flags.get("speculative_config"))
    if not isinstance(spec, dict):
        return {}, False
    out = {}
    n = spec.get("num_speculative_tokens")
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        out["num_speculative_tokens"] = n
    method = spec.get("method")
    return out, isinstance(method, str) and (method == "mtp" or method.endswith("_mtp"))


def _flags(facts: LogFacts, user: dict) -> dict:
    flags = {k: v for k, v in facts.flags.items() if k in _KEEP}
    flags |= _speculative(facts, user)[0]
    if facts.engine == "sglang" and "context_length" in flags:
        flags.setdefault("max_model_len", flags["context_length"])
    p = facts.printed
    for name in _SETTINGS:
        if name not in flags and name in p:
            flags[name] = p[name]
    if "max_model_len" not in flags and "concurrency_len" in p:
        flags["max_model_len"] = p["concurrency_len"]
    if "dcp" in p:
        flags.setdefault("decode_context_parallel_size", p["dcp"])
    if not facts.flags and "gpu_memory_utilization" in p:
        flags["gpu_memory_utilization"] = p["gpu_memory_utilization"]
    return flags | {k: v for k, v in user.items() if k != "speculative_config"}


def _total(facts: LogFacts, acc) -> tuple[int | None, str | None]:
    p = facts.printed
    if "total_gib" in p:
        return int(p["total_gib"] * GIB), "log: worker init total_memory"
    if "requested_gib" in p and "gpu_memory_utilization" in p:
        return int(p["requested_gib"] / p["gpu_memory_utilization"] * GIB), \
            "log: requested memory / utilization"
    if acc is not None and acc.cuda_total_mib:
        return acc.cuda_total_mib * MIB, f"hardware spec {acc.id}: CUDA total"
    return None, None


def _weights(facts: LogFacts, weight_gib, meta, tp: int, state, log_weights: bool = True,
             loaded=None, mtp: bool = False) -> tuple[int | None, str, bool]:
    """(bytes per rank, basis, packed). `loaded`: (QuantSummary, why) when the weights as
    loaded differ from the checkpoint's files (load-time quantization, or a stated served
    format): the config estimate with that quantization, never the files' bytes. `mtp`: the
    run drafts with the checkpoint's MTP layers, which the engine loads with the target (a
    config estimate then counts them). Predicted vLLM weights add the RoPE cache its loading
    figure counts (kvfit/engines/rope_cache.py)."""
    w, basis, packed = _rank_weights(facts, weight_gib, meta, tp, state, log_weights, loaded,
                                     mtp)
    if w is None or not packed or facts.engine != "vllm":
        return w, basis, packed
    from .rope_cache import rope_cache_bytes

    rope, why = rope_cache_bytes(state.resolution.root, state.model_bytes.bytes)
    return (w, basis, packed) if rope is None else (w + rope, f"{basis}; plus {why}", packed)


def _rank_weights(facts: LogFacts, weight_gib, meta, tp: int, state, log_weights: bool = True,
                  loaded=None, mtp: bool = False) -> tuple[int | None, str, bool]:
    from ..checkpoint.weights import Weights, config_estimate, count_weights

    if weight_gib is not None:
        w = _split(Weights(int(weight_gib * GIB), "user", "--weight-gib"), meta, state, mtp)
        return w.rank_bytes(tp), "user: --weight-gib / TP" + _kept(w), False
    if "weights_gib" in facts.printed and log_weights:
        return int(facts.printed["weights_gib"] * GIB), "log: loaded weights (an input, " \
            "not predicted)", False
    if loaded is not None:
        est, why = config_estimate(meta, state.resolution, state.model_bytes.bytes, mtp,
                                   quant=loaded[0])
        if est is not None:
            return est.rank_bytes(tp), f"config estimate, {loaded[1]}: {why}, per TP rank", \
                True
        return None, f"unknown: {loaded[1]}, but no config estimate: {why}", False
    w = count_weights(meta, None)
    if w.bytes is None:
        est, why = config_estimate(meta, state.resolution, state.model_bytes.bytes, mtp)
        if est is not None:
            # row by row: the spec's replicated rows count whole (TensorBytes.on_rank)
            return est.rank_bytes(tp), f"config estimate: {why}, per TP rank", True
        return None, "unknown: the log excerpt prints no loaded weights and the checkpoint " \
            f"has no weight files or index (pass --weight-gib); no config estimate: {why}", False
    w = _split(w, meta, state, mtp)
    return w.rank_bytes(tp), f"checkpoint: {w.detail}, / TP" + _kept(w), True


def _split(weights, meta, state, mtp: bool):
    """`weights` with the spec's replicated rows (kvfit.checkpoint.weights.with_replicated),
    counted from the config estimate, as a plan counts them."""
    from ..checkpoint.weights import config_estimate, with_replicated

    return with_replicated(weights, state.resolution.arch.parameters,
                           lambda: config_estimate(meta, state.resolution,
                                                   state.model_bytes.bytes, mtp))


def _kept(weights) -> str:
    """The basis's note on the bytes every rank holds whole (empty when none)."""
    return f" ({weights.replicated_detail})" if weights.replicated else ""


def explain(text: str, *, model_dir: str | None = None, engine_version: str | None = None,
            tp: int | None = None, hardware: str | None = None, weight_gib: float | None = None,
            flags: dict | None = None, overrides: dict | None = None,
            log_weights: bool = True, served_format: str | None = None) -> dict:
    """Compare a start-up log with kvfit's prediction. Returns rows and context (JSON-ready).
    log_weights=False predicts the weights too (checkpoint bytes or the config estimate)
    even when the log prints the loaded weights. served_format ('fp8', 'int8'): the served
    checkpoint stores its linear weights in that 8-bit format, which the config (a stand-in)
    does not declare."""
    facts = parse(text)
    meta = _metadata(model_dir, facts)
    version, how = resolve_version(facts.engine, engine_version or facts.version)
    if engine_version:
        how = "user: --engine-version"
    elif facts.version:
        how = "log"
    rules = rules_for(facts.engine, version)
    fl = _flags(facts, flags or {})
    tp_basis = "user" if tp else ("log" if facts.tp else "assumed")
    tp = tp or facts.tp or 1
    _check_ranks(facts, tp, tp_basis)
    context = int(fl.get("max_model_len") or 0)
    cap = _capability(hardware)
    mtp = _speculative(facts, flags or {})[1]
    state = engine_state(meta, rules, fl.get("kv_cache_dtype"), context or 1, mtp=mtp,
                         model_dtype=fl.get("dtype"), capability=cap)
    if not context:
        context = state.max_context or 1
        state = engine_state(meta, rules, fl.get("kv_cache_dtype"), context, mtp=mtp,
                             model_dtype=fl.get("dtype"), capability=cap)
    fl.setdefault("max_model_len", context)
    loaded = _loaded(facts, flags or {}, version, meta, served_format, rules)
    inp = _inputs(facts, state, meta, tp, context, hardware, weight_gib, overrides or {},
                  log_weights, loaded, mtp)
    pp = _pipeline(facts, flags or {})
    if pp > 1:
        inp = _staged(inp, facts, state, meta, pp, weight_gib, loaded, mtp)
    end_to_end = predict_inputs(facts.engine, version, fl, inp)
    from_printed = _from_printed(facts, version, fl, inp)
    notes = list(state.warnings) + facts.notes
    if tp_basis == "assumed":
        notes.append("TP is not in the log; assumed 1 (pass --tp).")
    if pp > 1:
        notes.append(f"PP={pp}: each stage is predicted on its own layers and weights and "
                     "the smallest block count binds; the memory rows put the binding stage's "
                     "prediction beside the log's lines, which are its first stage's.")
    return {"engine": facts.engine, "version": rules.version, "version_basis": how,
            "rules_range": rules.label, "model": facts.model, "architecture": state.arch_id,
            "config": meta.source, "tp": tp, "tp_basis": tp_basis, "kv_dtype": state.kv.name,
            "max_model_len": context,
            "rows": rows_for(facts, end_to_end, from_printed), "notes": notes,
            "prediction": to_plain(end_to_end)}


def _pipeline(facts: LogFacts, user: dict) -> int:
    """The run's pipeline-parallel size: the user's --pipeline-parallel-size, else the log's
    non-default args (1 when neither states it)."""
    pp = user.get("pipeline_parallel_size", user.get("pp",
                                                     facts.flags.get("pipeline_parallel_size")))
    if pp is None:
        return 1
    if isinstance(pp, bool) or not isinstance(pp, int) or pp < 1:
        raise UsageError(f"pipeline_parallel_size {pp!r} must be a whole number >= 1.")
    return pp


def _staged(inp: Inputs, facts: LogFacts, state, meta, pp: int, weight_gib, loaded,
            mtp: bool) -> Inputs:
    """The inputs of a PP run: each stage's layers' state and weights, split as the engine
    splits them (kvfit/engines/pp_split.py, the planner's own split). A log prints one
    stage's loaded weights, so the stages' weights come from the whole model's (--weight-gib,
    the checkpoint, or the config estimate), with the embedding on the first stage and the LM
    head on the last. The spec rows every TP rank holds whole are not carried (exact at TP=1,
    as the fixture PP runs are)."""
    from dataclasses import replace

    from ..checkpoint.weights import Weights, rank_share
    from .common import StageInputs
    from .pp_split import edge_weights, stages

    if facts.engine != "vllm":
        raise UsageError("explain-log reads pipeline-parallel runs of vLLM only.")
    whole, basis, _ = _weights(facts, weight_gib, meta, 1, state, False, loaded, mtp)
    n = state.resolution.n_layers
    split = stages(inp.components, n, pp, Weights(whole, "explain-log", basis),
                   edge_weights(state.resolution.root, state.model_bytes.bytes))
    rows = [StageInputs(components=st.components, weights_bytes_per_rank=None if
                        st.weights_bytes is None else rank_share(st.weights_bytes,
                                                                 st.replicated_bytes, inp.tp),
                        last=st.last, layers=(st.start, st.end)) for st in split]
    return replace(inp, stages=rows, weights_bytes_per_rank=rows[0].weights_bytes_per_rank,
                   weights_basis=f"{basis}; PP={pp}: split over the stages as the engine "
                   "splits the layers (embedding on the first, LM head on the last); the "
                   "log prints one stage's weights", weights_packed=False)


def _check_ranks(facts: LogFacts, tp: int, basis: str) -> None:
    """Refuse a TP the log's own rank names contradict (a prediction at the wrong TP puts the
    whole model on one rank: negative KV memory), and refuse to assume TP=1 for a vLLM log
    written by its worker processes (Worker_TP<n>: a tensor-parallel run)."""
    named = facts.max_rank
    if named is None:
        return
    if basis == "assumed" and facts.engine == "vllm":
        raise UsageError(f"the log's lines come from vLLM's worker processes (up to "
                         f"Worker_TP{named}), so the run was tensor-parallel, but the log does "
                         "not state its size; kvfit will not guess it.",
                         hint="Pass --tp N (the run's --tensor-parallel-size).")
    if named >= tp:
        where = {"user": "--tp", "log": "the log's arguments", "assumed": "assumed"}[basis]
        raise UsageError(f"the log names tensor-parallel rank {named}, beyond TP={tp} "
                         f"({where}); kvfit will not predict at a TP the log contradicts.",
                         hint="Pass --tp N with the run's tensor-parallel size.")


def _loaded(facts: LogFacts, user: dict, version: str | None, meta, served_format, rules):
    """(QuantSummary, why) for weights loaded in another format than the checkpoint's files
    hold, or None: a stated served format, else the run's --quantization when vLLM quantizes
    an unquantized checkpoint while loading (kvfit/engines/load_quant.py). A --quantization
    the user passes is checked as the plan checks it (exit 2 for a method the engine version
    lacks or refuses here); the log's own is read as the engine took it."""
    from ..checkpoint.quant import summarize
    from .load_quant import load_time, planned, served

    if served_format:
        return served(served_format)
    if user.get("quantization") is not None:
        summary, why = planned(rules, user["quantization"], summarize(meta))
        return (summary, why) if summary is not None else None
    method = facts.flags.get("quantization")
    summary, why = load_time(facts.engine, version, method, summarize(meta))
    return (summary, why) if summary is not None else None


def _inputs(facts, state, meta, tp, context, hardware, weight_gib, overrides,
            log_weights: bool = True, loaded=None, mtp: bool = False) -> Inputs:
    from ..hardware.presets import find_accelerator

    acc = find_accelerator(hardware) if hardware else None
    total, basis = _total(facts, acc)
    if acc is not None:
        visible = acc.memory("visible")[0]
    elif total is not None:
        visible = total + int(rules_for(facts.engine, None).est("torch_total_offset_mib") * MIB)
    else:
        visible = 0
    w, w_basis, packed = _weights(facts, weight_gib, meta, tp, state, log_weights, loaded, mtp)
    p = facts.printed
    free = None
    if "avail_after_load_gib" in p and "weights_gib" in p:
        free = int((p["avail_after_load_gib"] + p["weights_gib"]) * GIB)
    graphs = ((p["graphs_piecewise"], p["graphs_full"])
              if "graphs_full" in p and "graphs_piecewise" in p else None)   # a log cut short
    return Inputs(state.components, tp, context, w, visible, weights_basis=w_basis,
                  weights_packed=packed, total_bytes=total, total_basis=basis,
                  free_before_load_bytes=free, quant=state.quant, vocab=state.vocab,
                  overrides=overrides, graph_counts=graphs, max_context=state.max_context,
                  device=acc.id if acc is not None else None,
                  capability=acc.compute_capability if acc is not None else None,
                  kv_bytes=float(state.kv.bytes), kv_name=state.kv.name,
                  head_size=state.head_size, config=state.resolution.root,
                  architectures=architectures(meta.config), model_config=meta.config)


def _capability(hardware: str | None) -> str | None:
    """The named GPU's compute capability (None without --hardware)."""
    from ..hardware.presets import find_accelerator
    return find_accelerator(hardware).compute_capability if hardware else None


def _from_printed(facts, version, flags, inp):
    """The vLLM prediction with the printed available memory as --kv-cache-memory-bytes."""
    avail = facts.printed.get("available_gib")
    if facts.engine != "vllm" or avail is None:
        return None
    return predict_inputs("vllm", version, flags | {"kv_cache_memory_bytes": int(avail * GIB)},
                          inp)
