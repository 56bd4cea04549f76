"""Run under an SGLang 0.5.23 interpreter: record SGLang's own pipeline-parallel sizing.

    $KVFIT_SGLANG_PYTHON tests/engine_probe/sglang_pp_probe.py > tests/engine_probe/sglang-0.5.23-pp.jsonl

For each (pinned config, TP, --pp-size) in CASES, one JSON line made by SGLang's own code:
ServerArgs(model_path, tp_size, pp_size).resolve_once() (the defaults it chooses on the
emulated H100 80GB: mem_fraction_static, the prefill CUDA-graph backend), the layer range of
every PP rank by sglang/srt/distributed/utils.py:110-150 get_pp_indices, and per rank the
KVCacheConfigurator of sglang_kv_probe.configurator built for that rank's layers (the model
stub carries start_layer / end_layer as a built model does, layer_setup.py:233-237): its cell
bytes and, for a stated 40 GiB budget at context 4096, its own max_total_num_tokens before the
cross-rank minimum (kv_cache_configurator.py:3107-3115: each rank's all_reduce runs over one
process here, so it returns the rank's own value; SGLang's answer is the minimum of the rows).
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sglang_kv_probe as kv  # noqa: E402  (installs the GPU emulation)

CASES = [("tests/architectures/llama/configs/meta-llama--Llama-3.1-8B", 1, 2),
         ("tests/architectures/llama/configs/meta-llama--Llama-3.1-8B", 4, 2),
         ("tests/architectures/llama/configs/meta-llama--Llama-3.1-8B", 1, 3),
         ("tests/architectures/deepseek_v3/configs/deepseek-ai--DeepSeek-V3", 8, 2),
         ("tests/architectures/qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking", 2, 2)]
HEADER = {"recorded": "SGLang 0.5.23 (PyPI wheel, --no-deps) with torch 2.13 CPU, platform emulated "
                      "as 8 x H100 80GB SM90 by sglang_gpu_emulation.py, by "
                      "tests/engine_probe/sglang_pp_probe.py: per (config, TP, PP) the resolved "
                      "mem_fraction_static and prefill CUDA-graph backend, every PP rank's layers "
                      "(get_pp_indices), cell bytes and own max_total_num_tokens for a 40 GiB budget "
                      "at context 4096 (before the cross-rank minimum).",
          "available_bytes": 40 << 30, "context_len": 4096, "free_before_gib": kv.FREE_BEFORE_GIB}


def row(path: str, tp: int, pp: int) -> dict:
    import torch
    from sglang.srt.arg_groups.overrides import resolution_result
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.distributed.utils import get_pp_indices
    from sglang.srt.runtime_context import get_schedule, publish
    from sglang.srt.server_args import ServerArgs

    sa = ServerArgs(model_path=path, tp_size=tp, pp_size=pp, kv_cache_dtype="auto",
                    skip_tokenizer_init=True)
    sa.resolve_once()
    publish(sa, role="scheduler")
    mc = ModelConfig.from_server_args(sa)
    graphs = resolution_result(sa, "cuda_graph_config", None)
    out = {"dir": path, "tp": tp, "pp": pp,
           "mem_fraction_static": resolution_result(sa, "mem_fraction_static", None),
           "prefill_graph_backend": str(graphs.prefill.backend.value
                                        if hasattr(graphs.prefill.backend, "value")
                                        else graphs.prefill.backend),
           "num_hidden_layers": mc.num_hidden_layers, "ranks": []}
    torch.distributed.all_reduce = lambda tensor, **_: None    # one process: its own value
    for rank in range(pp):
        layers = get_pp_indices(mc.num_hidden_layers, rank, pp)
        kvc = kv.configurator(sa, mc, pp, layers)
        cell = kv.cells(kvc)
        mfs = get_schedule().mem_fraction_static
        kv.emu.set_free_gib(HEADER["available_bytes"] / kv.GIB + kv.FREE_BEFORE_GIB * (1 - mfs))
        short = kv._at_context(mc, HEADER["context_len"])
        kvc = kv.configurator(sa, short, pp, layers)
        config = kvc._resolve_memory_pool_config(kv.FREE_BEFORE_GIB)
        out["ranks"].append({"rank": rank, "layers": list(layers), **cell,
                             "max_total_num_tokens": config.max_total_num_tokens,
                             "max_running_requests": config.max_running_requests,
                             **({"max_mamba_cache_size": get_schedule().max_mamba_cache_size}
                                if kvc.mambaish_config is not None else {})})
    return out


def main() -> None:
    print(json.dumps(HEADER), file=kv.OUT)
    for case in CASES:
        try:
            print(json.dumps(row(*case)), file=kv.OUT)
        except Exception as exc:      # a case SGLang cannot size here is recorded as such
            print(json.dumps({"dir": case[0], "tp": case[1], "pp": case[2],
                              "error": f"{type(exc).__name__}: {exc}"[:400]}), file=kv.OUT)


if __name__ == "__main__":
    main()
