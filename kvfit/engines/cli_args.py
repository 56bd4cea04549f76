"""The engine's own flags on a kvfit argparse parser (plan and explain-log).

Flags keep the engine's spelling; dests are the engine's argument names, so a parsed
namespace maps straight onto the `flags` dict of kvfit.engines.predict.
"""

from __future__ import annotations

import argparse

S = argparse.SUPPRESS
# (flag, type, help). Types: int, float, str, or "bool" (store_true).
_FLAGS = [
    ("--gpu-memory-utilization", float, "vLLM: fraction of GPU memory for the engine "
     "(default by version: 0.9, 0.92 from 0.33)"),
    ("--kv-cache-memory-bytes", int, "vLLM: KV cache bytes per GPU; skips utilization sizing"),
    ("--max-model-len", int, "vLLM/SGLang: tokens per request the engine admits (default: "
     "--context)"),
    ("--max-num-seqs", int, "vLLM: running requests cap (default 1024 on large GPUs)"),
    ("--max-num-batched-tokens", int, "vLLM: tokens per scheduler step (default 8192); sets "
     "the sliding-window admission reserve"),
    ("--block-size", int, "vLLM: tokens per KV block (default 16; MLA 64; hybrids align it)"),
    ("--kv-cache-dtype", str, "the engine's KV dtype spelling (vLLM: auto, bfloat16, fp8, "
     "fp8_e4m3, nvfp4, fp8_ds_mla, ...; SGLang: auto, bf16, fp8_e4m3, fp8_e5m2, nvfp4)"),
    ("--dtype", str, "vLLM/SGLang: model dtype as served (auto, bfloat16, float16, float32); "
     "with --kv-cache-dtype auto the KV cache follows it"),
    ("--enable-prefix-caching", "bool", "vLLM: prefix caching on (default on)"),
    ("--no-enable-prefix-caching", "bool", "vLLM: prefix caching off (1 recurrent block per "
     "group instead of the align-mode count)"),
    ("--num-speculative-tokens", int, "speculative tokens per step (recurrent state slots)"),
    ("--decode-context-parallel-size", int, "vLLM: decode context parallel size"),
    ("--enforce-eager", "bool", "vLLM: no CUDA graphs"),
    ("--mem-fraction-static", float, "SGLang: static memory fraction of free memory before "
     "loading (default: the version's heuristic)"),
    ("--page-size", int, "SGLang: tokens per KV page (default 1)"),
    ("--attention-backend", str, "SGLang: attention backend (flashmla, trtllm_mha, fa4, ...; "
     "some force a page size)"),
    ("--chunked-prefill-size", int, "SGLang: prefill chunk tokens (default by GPU memory)"),
    ("--attn-dp-size", int, "SGLang: attention data-parallel size (each group owns a pool)"),
    ("--max-running-requests", int, "SGLang: running requests cap"),
    ("--max-total-tokens", int, "SGLang: cap on KV pool tokens"),
    ("--disable-radix-cache", "bool", "SGLang: no radix cache (1 recurrent slot per request)"),
    ("--swa-full-tokens-ratio", float, "SGLang: SWA pool tokens / full pool tokens (0.8)"),
    ("--mamba-full-memory-ratio", float, "SGLang: recurrent pool share r; gets r/(1+r) (0.9)"),
    ("--max-mamba-cache-size", int, "SGLang: recurrent state slots"),
    ("--activation-peak-gib", float, "override the activation-peak estimate (GiB per GPU)"),
    ("--cuda-graph-gib", float, "override the CUDA-graph estimate (GiB per GPU)"),
    ("--non-torch-gib", float, "override the non-torch (communicator) estimate (GiB per GPU)"),
]
_OVERRIDES = {"activation_peak_gib": "activation", "cuda_graph_gib": "cudagraph",
              "non_torch_gib": "non_torch"}


def engine_args(parser: argparse.ArgumentParser, with_engine: bool = True) -> None:
    """Add --engine, --print-command and the engines' own flags to `parser`."""
    g = parser.add_argument_group("engine prediction (--engine vllm|sglang[@VERSION])")
    if with_engine:
        g.add_argument("--engine", default=S, metavar="ENGINE[@VERSION]",
                       help="predict what vllm or sglang allocates (version: requested, else "
                       "installed, else the newest range kvfit knows)")
        g.add_argument("--print-command", default=S, choices=["vllm", "sglang"],
                       help="print the launch command for the recommended layout")
    for name, kind, text in _FLAGS:
        if kind == "bool":
            g.add_argument(name, action="store_true", default=S, help=text)
        else:
            g.add_argument(name, type=kind, default=S, help=text)


def pop_engine_args(ns: dict) -> dict:
    """Remove the engine options from a parsed namespace dict.

    Returns {"engine", "version", "flags", "overrides", "print_command"}; flags use the
    engine's argument names (max_model_len, ...), overrides are GiB.
    """
    from .spec import parse_engine

    engine, version = (None, None)
    if ns.get("engine"):
        engine, version = parse_engine(ns.pop("engine"))
    out = {"engine": engine, "version": version, "print_command": ns.pop("print_command", None),
           "flags": {}, "overrides": {}}
    for name, _, _ in _FLAGS:
        dest = name[2:].replace("-", "_")
        if dest not in ns:
            continue
        value = ns.pop(dest)
        if dest in _OVERRIDES:
            out["overrides"][_OVERRIDES[dest]] = value
        elif dest == "no_enable_prefix_caching":
            out["flags"]["enable_prefix_caching"] = False
        else:
            out["flags"][dest] = value
    return out
