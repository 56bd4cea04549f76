"""Run under an SGLang 0.5.23 interpreter: record SGLang's own KV-pool sizing for one pinned config.

    $KVFIT_SGLANG_PYTHON tests/engine_probe/sglang_kv_probe.py DIR [--tp 1,2,8] [--kv auto,fp8_e4m3]

For each TP size and --kv-cache-dtype it prints one JSON line made by SGLang's own code
(paths under python/sglang/srt/ of the 0.5.23 wheel):
  1. ServerArgs(model_path=DIR, tp_size=TP, kv_cache_dtype=KV, skip_tokenizer_init=True
     [, context_length=L]).resolve_once() (server_args.py:259-277, the resolution pipeline
     `launch_server` runs), then runtime_context.publish: the defaults SGLang chooses for an
     H100 80GB at this TP: mem_fraction_static, page size, attention backend, chunked
     prefill size, radix cache, swa / mamba ratios;
  2. ModelConfig.from_server_args (configs/model_config.py); the checkpoint's quant config by
     model_loader/weight_utils.py:269 get_quant_config (what the loader hands the model);
     the KV dtype by mem_cache/kv_cache_dtype.py:34-110 configure_kv_cache_dtype; the layer
     split by model_runner_components/layer_setup.py:140 resolve_layer_indices and the window
     by load_model_utils.py:144 resolve_sliding_window_size (the model is not built: those
     read the config, and the model stub carries only the quant config);
  3. mem_cache/kv_cache_configurator.py KVCacheConfigurator, constructed as ModelRunner does
     (model_executor/model_runner.py:656-689), then its own _resolve_memory_pool_config
     (:3174-3190): _profile_available_bytes (:2990-3060, with _handle_max_mamba_cache
     :3229-3409 for hybrids), config_from_budget (:3192-3227, the pool configurator of
     model_executor/pool_configurator.py), resolve_max_num_reqs (:3119-3172, with
     _calculate_mamba_ratio :3062-3088) and the configurator's finalize step.
The budget: SGLang's KV budget is free memory after loading minus pre_model_load x (1 -
mem_fraction_static) (:3010-3016). The probe states pre_model_load = FREE_BEFORE_GIB and the
free memory after loading such that this budget is exactly 40 GiB or 70 GiB per GPU
(`available_bytes`, as the vLLM record's), before SGLang subtracts a multimodal reservation
or the Mamba pool. The platform is emulated as 8 x H100 (SM90) by sglang_gpu_emulation.py.
"""

from __future__ import annotations

import copy
import logging
import os
import sys
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sglang_gpu_emulation as emu  # noqa: E402

OUT, sys.stdout = sys.stdout, sys.stderr     # SGLang may print; the record goes to OUT
emu.install()
logging.disable(logging.WARNING)

GIB = 1 << 30
BUDGETS = (40 * GIB, 70 * GIB)
LENGTHS = (4096,)
FREE_BEFORE_GIB = 78.68   # stated pre-model-load free memory; the budget does not depend on it
RESOLVED = ("mem_fraction_static", "page_size", "attention_backend", "chunked_prefill_size",
            "disable_radix_cache", "swa_full_tokens_ratio", "mamba_full_memory_ratio",
            "max_running_requests", "max_mamba_cache_size", "dtype", "kv_cache_dtype",
            "context_length")


def _plain(v):
    return v if isinstance(v, (int, float, str, bool, type(None))) else str(v)


def resolve(path: str, tp: int, kv: str, length: int | None):
    """SGLang's resolved server args and model config (the slow part: done once per row)."""
    from sglang.srt.arg_groups.overrides import resolution_result
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.runtime_context import publish
    from sglang.srt.server_args import ServerArgs

    kw = {"model_path": path, "tp_size": tp, "kv_cache_dtype": kv, "skip_tokenizer_init": True}
    if length:
        kw["context_length"] = length
    sa = ServerArgs(**kw)
    sa.resolve_once()
    publish(sa, role="scheduler")
    resolved = {k: _plain(resolution_result(sa, k, None)) for k in RESOLVED}
    return sa, ModelConfig.from_server_args(sa), resolved


def configurator(sa, mc, pp: int = 1, layers: tuple[int, int] | None = None):
    """Publish the resolved args afresh (no override of an earlier budget survives) and build
    a KVCacheConfigurator as ModelRunner does (under --pp-size: for the PP rank owning the
    decoder layers [start, end), which the model stub carries as a built model would,
    layer_setup.py:233-237)."""
    from sglang.srt.configs.model_config import AttentionArch
    from sglang.srt.mem_cache import kv_cache_configurator as kvm
    from sglang.srt.mem_cache import kv_cache_dtype as kvd
    from sglang.srt.model_executor.model_runner_components.kv_pool_runtime import is_post_capture_kv_active
    from sglang.srt.model_executor.model_runner_components.layer_setup import resolve_layer_indices
    from sglang.srt.model_executor.model_runner_components.load_model_utils import resolve_sliding_window_size
    from sglang.srt.model_executor.model_runner_components.spec_aux_hidden_state import (
        SpecAuxHiddenStateConfig,
    )
    from sglang.srt.runtime_context import get_model, get_parallel, get_schedule, publish
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    publish(sa, role="scheduler")
    quant = None
    if mc.quantization:
        from sglang.srt.configs.load_config import LoadConfig
        from sglang.srt.model_loader.weight_utils import get_quant_config
        quant = get_quant_config(mc, LoadConfig(), {})
    model = types.SimpleNamespace(quant_config=quant)
    if layers is not None:
        model.start_layer, model.end_layer = layers
    kv_str, kv_dtype = kvd.configure_kv_cache_dtype(
        server_args_kv_cache_dtype=get_model().kv_cache_dtype, model=model, model_dtype=mc.dtype,
        is_draft_worker=False, is_dflash=False, speculative_draft_attention_backend=None)
    spec = SpeculativeAlgorithm.from_string(None)
    kvc = kvm.KVCacheConfigurator(
        device="cuda", gpu_id=0, attn_dp_size=get_parallel().attn_dp_size, pp_size=pp, pp_group=None,
        model=model, model_config=mc, server_args=sa, kv_cache_dtype=kv_dtype,
        kv_cache_dtype_str=kv_str, model_dtype=mc.dtype, page_size=get_schedule().page_size,
        sliding_window_size=resolve_sliding_window_size(model, mc), spec_algorithm=spec,
        is_draft_worker=False,
        post_capture_kv_active=is_post_capture_kv_active(
            server_args=sa, is_draft_worker=False, spec_algorithm=spec, token_to_kv_pool_allocator=None),
        spec_aux_config=SpecAuxHiddenStateConfig(), is_hybrid_swa=mc.is_hybrid_swa,
        is_hybrid_swa_compress=mc.is_hybrid_swa_compress,
        use_mla_backend=mc.attention_arch == AttentionArch.MLA,
        layer_info=resolve_layer_indices(model=model, model_config=mc, is_draft_worker=False),
        forward_stream=None, req_to_token_pool=None, token_to_kv_pool_allocator=None,
        memory_pool_config=None)
    return kvc


def cells(kvc) -> dict:
    """The pool configurator's per-token bytes (and the Mamba state per request)."""
    from sglang.srt.model_executor.pool_configurator import create_memory_pool_configurator
    pc = create_memory_pool_configurator(kvc)
    out = {"pool_configurator": type(pc).__name__, "cell_bytes": getattr(pc, "_cell_size", None)}
    if hasattr(pc, "_full_cell_bytes"):
        out |= {"full_cell_bytes": pc._full_cell_bytes(), "swa_cell_bytes": pc._swa_cell_bytes()}
    if kvc.mambaish_config is not None:
        params = kvc.mambaish_config.mamba2_cache_params
        out |= {"mamba_layers": len(params.layers), "mamba_cache_per_req": int(params.mamba_cache_per_req)}
    return out


def plan(sa, mc, avail: int) -> dict:
    from sglang.srt.runtime_context import get_schedule
    kvc = configurator(sa, mc)
    mfs = get_schedule().mem_fraction_static
    emu.set_free_gib(avail / GIB + FREE_BEFORE_GIB * (1 - mfs))
    try:
        config = kvc._resolve_memory_pool_config(FREE_BEFORE_GIB)
    except (ValueError, RuntimeError) as exc:
        return {"refused": str(exc)[:600]}
    out = {"context_len": mc.context_len, "max_total_num_tokens": config.max_total_num_tokens,
           "max_running_requests": config.max_running_requests,
           "full_max_total_num_tokens": config.full_max_total_num_tokens,
           "swa_max_total_num_tokens": config.swa_max_total_num_tokens}
    if kvc.mambaish_config is not None:
        out |= {"max_mamba_cache_size": get_schedule().max_mamba_cache_size,
                "mamba_ratio": kvc._calculate_mamba_ratio()}
    return out


def _at_context(mc, length: int):
    """The model config at a shorter context: a copy with context_len set, as
    ModelConfig.from_server_args does for --context-length (the only reader on the sizing path
    is resolve_max_num_reqs, kv_cache_configurator.py:3123; re-resolving the server args for
    it gives the same numbers and costs a whole resolution)."""
    short = copy.copy(mc)
    short.context_len = length
    return short


def probe(path: str, tp: int, kv: str) -> dict:
    row = {"dir": path, "tp": tp, "kv_cache_dtype": kv}
    try:
        sa, mc, resolved = resolve(path, tp, kv, None)
        kvc = configurator(sa, mc)
        row |= {"resolved": resolved, "derived_context_len": mc.context_len,
                "model_dtype": str(mc.dtype).removeprefix("torch."),
                "cache_dtype": str(kvc.kv_cache_dtype).removeprefix("torch."),
                "kv_cache_dtype_str": kvc.kv_cache_dtype_str,
                "attention_arch": mc.attention_arch.name, "is_hybrid_swa": bool(mc.is_hybrid_swa),
                "post_capture_kv_active": bool(kvc.post_capture_kv_active),
                "layers": kvc.layer_info.num_effective_layers, **cells(kvc), "plans": []}
    except Exception as exc:
        traceback.print_exc()
        frames = [f"{f.filename.split('site-packages/')[-1]}:{f.lineno}"
                  for f in traceback.extract_tb(exc.__traceback__) if "site-packages/sglang" in f.filename]
        return row | {"error": f"{type(exc).__name__}: {exc}"[:500], "at": frames[-3:]}
    derived = row["derived_context_len"]
    for length in sorted({L for L in LENGTHS if L < derived} | {derived}):
        for avail in BUDGETS:
            try:
                result = plan(sa, mc if length == derived else _at_context(mc, length), avail)
            except Exception as exc:
                traceback.print_exc()
                result = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            row["plans"].append({"context_len": length, "available_bytes": avail, **result})
    return row


def main() -> None:
    from recording import probe_main
    probe_main(__doc__.splitlines()[0], probe, "auto,fp8_e4m3", OUT)

if __name__ == "__main__":
    main()
