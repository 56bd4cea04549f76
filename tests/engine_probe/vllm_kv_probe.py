"""Run under a vLLM interpreter: record vLLM's own KV-cache plan for one pinned config.

    $KVFIT_VLLM_PYTHON tests/engine_probe/vllm_kv_probe.py DIR [--tp 1,2,8] [--kv auto,fp8]

For each TP size and --kv-cache-dtype it prints one JSON line made by vLLM's own code:
  1. EngineArgs(model=DIR, tensor_parallel_size=TP, kv_cache_dtype=KV, skip_tokenizer_init)
     .create_engine_config(UsageContext.OPENAI_API_SERVER): the `vllm serve` defaults
     (batch tiers for an 80 GB GPU, prefix caching, async scheduling);
     with `--kernel_config.enable_jit_warmup=False` (config/vllm.py:1782: no CuTe DSL kernel
     is registered for start-up compilation; no KV spec reads it) and the worker's workspace
     manager on the meta device (gpu_worker.py:554-564, before the model runner);
  2. the model class built on the meta device (initialize_model, model_loader/utils.py:74),
     then Platform.update_block_size_for_backend (platforms/interface.py:750, the call the
     executor makes after load_model: uniproc_executor.py:75);
  3. GPUModelRunner.get_kv_cache_spec (gpu_model_runner.py:7081) on that model;
  4. for each available-memory budget and max_model_len: get_global_kv_cache_groups,
     resolve_kv_cache_layout, get_kv_cache_configs, generate_scheduler_kv_cache_config, the
     engine-core block-size rule and get_kv_cache_capacity (v1/engine/core.py:284-352,
     kv_cache_utils.py:1120):
     groups, block size, num_blocks, "GPU KV cache size" tokens, "Maximum concurrency", or
     the refusal vLLM raises.
The platform is emulated as 8 x H100 (SM90) by vllm_gpu_emulation.py (see there for how).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import sys
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

import vllm_gpu_emulation as emu  # noqa: E402

OUT, sys.stdout = sys.stdout, sys.stderr     # vLLM logs to stdout; the record goes to OUT

emu.install()
import torch  # noqa: E402

GIB = 1 << 30
BUDGETS = (40 * GIB, 70 * GIB)
LENGTHS = (4096, 8192, 32768)


def _plain(value):
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value):
        return spec_fields(value)
    return value if isinstance(value, (int, float, str, bool, type(None))) else repr(value)


def spec_fields(spec) -> dict:
    out = {"type": type(spec).__name__}
    for f in dataclasses.fields(spec):
        out[f.name] = _plain(getattr(spec, f.name))
    try:
        out["page_size_bytes"] = int(spec.page_size_bytes)
    except Exception as exc:  # a spec type without a page (none known)
        out["page_size_bytes"] = f"{type(exc).__name__}"
    return out


def layer_specs(vc) -> dict:
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner
    runner = types.SimpleNamespace(vllm_config=vc, shared_kv_cache_layers={})
    return GPUModelRunner.get_kv_cache_spec(runner)


def summarize(specs: dict) -> list[dict]:
    """Identical layer specs collapsed: the spec's fields and how many layers carry it."""
    rows: dict[str, dict] = {}
    for name, spec in specs.items():
        fields = spec_fields(spec)
        key = json.dumps(fields, sort_keys=True)
        row = rows.setdefault(key, {"layers": 0, "first_layer": name, **fields})
        row["layers"] += 1
    return list(rows.values())


def backends(vc) -> dict:
    from vllm.config import get_layers_from_vllm_config
    from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
    out: dict[str, int] = {}
    for layer in get_layers_from_vllm_config(vc, AttentionLayerBase).values():
        try:
            name = layer.get_attn_backend().get_name()
        except Exception as exc:
            name = f"? {type(exc).__name__}"
        key = f"{type(layer).__name__}:{name}"
        out[key] = out.get(key, 0) + 1
    return out


def plan(vc, specs: dict, avail: int) -> dict:
    """vLLM's engine-core KV planning for one worker with `avail` bytes (core.py:292-352)."""
    from vllm.v1.attention.backends.utils import resolve_kv_cache_layout
    from vllm.v1.core.kv_cache_planning import get_global_kv_cache_groups, get_kv_cache_configs
    from vllm.v1.core.kv_cache_utils import generate_scheduler_kv_cache_config, get_kv_cache_capacity
    from vllm.v1.worker.worker_base import WorkerBase
    layouts = WorkerBase.get_supported_kv_cache_layouts(types.SimpleNamespace(vllm_config=vc))
    resolve_kv_cache_layout(vc, [layouts], list(specs.values()))
    groups = get_global_kv_cache_groups(vc, [specs])
    vc.adjust_dcp_kv_cache_interleave_size(groups)
    try:
        configs = get_kv_cache_configs(vc, [specs], [avail], groups)
    except ValueError as exc:
        return {"refused": str(exc)[:600]}
    sched = generate_scheduler_kv_cache_config(configs)
    kv_groups = sched.kv_cache_groups
    participating = [g.kv_cache_spec.block_size for g in kv_groups if g.kv_cache_spec.prefix_cacheable]
    block = min(participating or [g.kv_cache_spec.block_size for g in kv_groups])
    tokens, conc = get_kv_cache_capacity(vc, sched)
    worker = configs[0]
    return {"num_blocks": sched.num_blocks, "block_size": block, "kv_cache_tokens": tokens,
            "max_concurrency": conc,
            "worker_groups": [{"type": type(g.kv_cache_spec).__name__, "layers": len(g.layer_names),
                               "block_size": g.kv_cache_spec.block_size,
                               "page_size_bytes": int(g.kv_cache_spec.page_size_bytes)}
                              for g in worker.kv_cache_groups],
            "groups": [{"type": type(g.kv_cache_spec).__name__, "layers": len(g.layer_names),
                        "block_size": g.kv_cache_spec.block_size,
                        "page_size_bytes": int(g.kv_cache_spec.page_size_bytes),
                        "blocks_per_request": -(-g.kv_cache_spec.max_memory_usage_bytes(vc)
                                                // g.kv_cache_spec.page_size_bytes)}
                       for g in kv_groups]}


def build_model(path: str, tp: int, kv: str):
    """(vllm config, model) as vLLM builds them for this rank, on the meta device."""
    from vllm.config import set_current_vllm_config
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.usage.usage_lib import UsageContext
    from vllm.utils.torch_utils import set_default_torch_dtype

    args = EngineArgs(model=path, tensor_parallel_size=tp, kv_cache_dtype=kv,
                      skip_tokenizer_init=True, trust_remote_code=False)
    vc = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
    # `--kernel_config.enable_jit_warmup=False` (config/vllm.py:1782): layers then do not
    # register CuTe DSL kernels for start-up compilation (deepseek_v4/attention.py:380-470),
    # which need the GPU image's kernel libraries; no KV spec reads it.
    vc.kernel_config.enable_jit_warmup = False
    emu.set_tensor_parallel(tp)
    from vllm.v1.worker.workspace import init_workspace_manager, is_workspace_manager_initialized
    if not is_workspace_manager_initialized():    # the worker sets it up before the model
        init_workspace_manager(torch.device("meta"))    # (gpu_worker.py:554-564); sparse MLA
        # layers reserve their scratch in it at build (flashmla_sparse.py:832), no KV
    with set_current_vllm_config(vc), set_default_torch_dtype(vc.model_config.dtype), \
            torch.device("meta"):
        with emu.building():
            model = initialize_model(vllm_config=vc)
    return vc, model


def build(path: str, tp: int, kv: str):
    """The vllm config after the model is built and the backend's block size applied."""
    from vllm.config import set_current_vllm_config
    from vllm.platforms import current_platform

    vc, _ = build_model(path, tp, kv)
    with set_current_vllm_config(vc):
        current_platform.update_block_size_for_backend(vc)
    return vc


def probe(path: str, tp: int, kv: str) -> dict:
    row = {"dir": path, "tp": tp, "kv_cache_dtype": kv}
    try:
        vc = build(path, tp, kv)
    except Exception as exc:
        traceback.print_exc()
        frames = [f"{f.filename.split('site-packages/')[-1]}:{f.lineno}"
                  for f in traceback.extract_tb(exc.__traceback__) if "site-packages/vllm" in f.filename]
        return row | {"error": f"{type(exc).__name__}: {exc}"[:500], "at": frames[-3:]}
    derived = vc.model_config.max_model_len
    row |= {"model_dtype": _plain(vc.model_config.dtype), "cache_dtype": vc.cache_config.cache_dtype,
            "derived_max_model_len": derived, "block_size": vc.cache_config.block_size,
            "max_num_batched_tokens": vc.scheduler_config.max_num_batched_tokens,
            "max_num_seqs": vc.scheduler_config.max_num_seqs,
            "prefix_caching": vc.cache_config.enable_prefix_caching,
            "mamba_cache_mode": getattr(vc.cache_config, "mamba_cache_mode", None),
            "backends": backends(vc), "plans": []}
    from vllm.config import set_current_vllm_config
    for length in sorted({L for L in LENGTHS if L <= derived} | {derived}):
        vc.model_config.max_model_len = length
        vc.scheduler_config.max_model_len = length
        with set_current_vllm_config(vc):
            specs = layer_specs(vc)
            if "specs" not in row:
                row["specs"] = summarize(specs)
            for avail in BUDGETS:
                try:
                    result = plan(vc, specs, avail)
                except Exception as exc:
                    result = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                row["plans"].append({"max_model_len": length, "available_bytes": avail, **result})
    return row


def main() -> None:
    from recording import probe_main
    probe_main(__doc__.splitlines()[0], probe, "auto,fp8", OUT)

if __name__ == "__main__":
    main()
