"""The engine's own flags on a kvfit argparse parser (plan and explain-log).

Flags keep the engine's spelling; dests are the engine's argument names, so a parsed
namespace maps straight onto the `flags` dict of kvfit.engines.predict.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError

S = argparse.SUPPRESS
# (flag, type, engine, help). Types: int, float, str, or "bool" (store_true). engine: the engine
# whose flag this is ("vllm", "sglang", or "both"); an engine-only flag without --engine
# selects that engine (kvfit.planner.spellings).
_FLAGS = [
    ("--kv-cache-memory-bytes", int, "vllm", "vLLM: KV cache bytes per GPU; skips utilization "
     "sizing, so the pool (blocks, tokens, concurrency) is predicted even without weight bytes"),
    ("--max-num-seqs", int, "vllm", "vLLM: running requests cap (default 1024 on large GPUs)"),
    ("--max-num-batched-tokens", int, "vllm", "vLLM: tokens per scheduler step (default 8192); "
     "sets the sliding-window admission reserve"),
    ("--block-size", int, "vllm", "vLLM: tokens per KV block (default 16; MLA 64; hybrids "
     "align it)"),
    ("--dtype", str, "both", "vLLM/SGLang: model dtype as served (auto, bfloat16, float16, "
     "float32); with --kv-cache-dtype auto the KV cache follows it"),
    ("--enable-prefix-caching", "bool", "vllm", "vLLM: prefix caching on (default on)"),
    ("--no-enable-prefix-caching", "bool", "vllm", "vLLM: prefix caching off (1 recurrent block "
     "per group instead of the align-mode count)"),
    ("--num-speculative-tokens", int, "both", "speculative tokens per step of the checkpoint's "
     "MTP draft (implies --mtp: the draft layers' KV joins the pool and the launch command "
     "runs it; recurrent state slots)"),
    ("--decode-context-parallel-size", int, "vllm", "vLLM: decode context parallel size"),
    ("--enforce-eager", "bool", "vllm", "vLLM: no CUDA graphs"),
    ("--moe-backend", str, "vllm", "vLLM: MoE kernel backend (default auto); an explicit "
     "non-Triton backend pads FP8 expert shards instead of refining their block scales"),
    ("--quantization", str, "both", "vLLM/SGLang: the run's --quantization METHOD; fp8 (vLLM "
     "0.33: fp8_per_tensor) on an unquantized checkpoint stores its linear weights as fp8 "
     "while loading, which the plan's weights then count; a method the engine version lacks, "
     "or fp8 on a checkpoint that declares another method, exits 2"),
    ("--allow-deprecated-quantization", "bool", "vllm", "vLLM: start a checkpoint whose "
     "quantization method this version deprecates (0.33: fbgemm_fp8, fp_quant); refused "
     "without it"),
    ("--mem-fraction-static", float, "sglang", "SGLang: static memory fraction of free memory "
     "before loading (default: converted from --utilization when given, else the version's "
     "heuristic)"),
    ("--page-size", int, "sglang", "SGLang: tokens per KV page (default 1)"),
    ("--attention-backend", str, "sglang", "SGLang: attention backend (flashmla, trtllm_mha, "
     "fa4, ...; some force a page size)"),
    ("--chunked-prefill-size", int, "sglang", "SGLang: prefill chunk tokens (default by GPU "
     "memory)"),
    ("--max-running-requests", int, "sglang", "SGLang: running requests cap"),
    ("--max-total-tokens", int, "sglang", "SGLang: cap on KV pool tokens"),
    ("--disable-radix-cache", "bool", "sglang", "SGLang: no radix cache (1 recurrent slot per "
     "request)"),
    ("--swa-full-tokens-ratio", float, "sglang", "SGLang: SWA pool tokens / full pool tokens "
     "(0.8)"),
    ("--mamba-full-memory-ratio", float, "sglang", "SGLang: recurrent pool share r; gets r/(1+r) "
     "(0.9)"),
    ("--max-mamba-cache-size", int, "sglang", "SGLang: recurrent state slots"),
    ("--activation-peak-gib", float, "vllm", "override the activation-peak estimate (GiB per "
     "GPU)"),
    ("--cuda-graph-gib", float, "vllm", "override the CUDA-graph estimate (GiB per GPU)"),
    ("--non-torch-gib", float, "vllm", "override the non-torch (communicator) estimate (GiB per "
     "GPU)"),
    ("--free-before-load-gib", float, "both", "free memory per GPU the engine sees before it "
     "loads weights (GiB; a shared GPU or unified memory), instead of the total minus the "
     "CUDA-context estimate; at most the GPU's total"),
]
# The engines' spellings of kvfit's own knobs (plan parser only): (flag, type, engine, knob,
# help). Each sets the same request field as kvfit's flag; two spellings with different values
# exit 2 naming both (kvfit.planner.spellings).
ALIASES = [
    ("--gpu-memory-utilization", float, "vllm", "utilization", "vLLM's spelling of "
     "--utilization (fraction of each GPU's memory for the engine)"),
    ("--kv-cache-dtype", str, "both", "kv_dtype", "the engines' spelling of --kv-dtype (vLLM: "
     "auto, bfloat16, fp8, fp8_e4m3, nvfp4, fp8_ds_mla, ...; SGLang: auto, bf16, fp8_e4m3, "
     "fp8_e5m2, nvfp4)"),
    ("--max-model-len", int, "both", "context", "vLLM's spelling of --context"),
    ("--context-length", int, "sglang", "context", "SGLang's spelling of --context"),
    ("--tensor-parallel-size", int, "vllm", "tp", "vLLM's spelling of --tp (with "
     "--enable-expert-parallel: the attention TP of each DP rank)"),
    ("--tp-size", int, "sglang", "tp", "SGLang's spelling of --tp"),
    ("--pipeline-parallel-size", int, "vllm", "pp", "vLLM's spelling of --pp"),
    ("--data-parallel-size", int, "vllm", "dp", "vLLM: DP replicas (with "
     "--enable-expert-parallel: DP ranks of one expert-parallel group)"),
    ("--dp-size", int, "sglang", "dp", "SGLang: DP replicas (with --enable-dp-attention: "
     "attention-DP groups)"),
    ("--enable-expert-parallel", "bool", "vllm", "parallelism", "vLLM: expert parallelism "
     "(= --parallelism vllm-dp-ep)"),
    ("--enable-dp-attention", "bool", "sglang", "parallelism", "SGLang: attention DP (= "
     "--parallelism sglang-dpa, with --dp-size groups)"),
    ("--attn-dp-size", int, "sglang", "attention_dp", "SGLang: attention data-parallel size "
     "(= --parallelism sglang-dpa with this many attention groups)"),
    ("--hf-overrides", str, "vllm", "rope_scaling", "vLLM: config overrides as JSON; kvfit "
     "reads its rope_scaling only (= --rope-scaling), other keys exit 2"),
    ("--json-model-override-args", str, "sglang", "rope_scaling", "SGLang: config overrides "
     "as JSON; kvfit reads its rope_scaling only (= --rope-scaling), other keys exit 2"),
    ("--ep-size", int, "sglang", "ep", "SGLang: expert-parallel size (kvfit spreads experts "
     "over the whole model group, so it must equal --tp)"),
]
# Alias flags explain-log keeps as plain engine flags (a log's own settings).
LOG_FLAGS = ("--gpu-memory-utilization", "--kv-cache-dtype", "--max-model-len", "--attn-dp-size")
_OVERRIDES = {"activation_peak_gib": "activation", "cuda_graph_gib": "cudagraph",
              "non_torch_gib": "non_torch", "free_before_load_gib": "free_before_load"}


def engine_args(parser: argparse.ArgumentParser, with_engine: bool = True) -> None:
    """Add --engine, --print-command and the engines' own flags to `parser`."""
    g = parser.add_argument_group("engine prediction (--engine vllm|sglang[@VERSION])")
    if with_engine:
        g.add_argument("--engine", default=S, metavar="ENGINE[@VERSION]",
                       help="predict what vllm or sglang allocates (version: requested, else "
                       "installed, else the newest range kvfit knows)")
        g.add_argument("--engine-strict", action="store_true", default=S,
                       help="refuse an engine version newer than every range kvfit has rules "
                       "for (default: plan it with the newest rules, labelled extrapolated)")
        from .known import names
        g.add_argument("--print-command", default=S, choices=list(names()),
                       help="print the launch command for the recommended layout")
    rows = [(n, k, t) for n, k, _, t in _FLAGS]
    rows += [(n, k, t) for n, k, _, _, t in ALIASES if with_engine or n in LOG_FLAGS]
    for name, kind, text in rows:
        if kind == "bool":
            g.add_argument(name, action="store_true", default=S, help=text)
        else:
            from ..numbers import any_real, any_whole
            convert = {int: any_whole, float: any_real}.get(kind)
            g.add_argument(name, type=convert(name) if convert else kind, default=S, help=text)


def pop_engine_args(ns: dict) -> dict:
    """Remove the engine options from a parsed namespace dict.

    Returns {"engine", "version", "flags", "overrides", "print_command"}; flags use the
    engine's argument names (max_model_len, ...), overrides are GiB.
    """
    engine, version = (None, None)
    if ns.get("engine"):
        from .spec import parse_engine
        engine, version = parse_engine(ns.pop("engine"))
    out = {"engine": engine, "version": version, "print_command": ns.pop("print_command", None),
           "flags": {}, "overrides": {}}
    for name in [f[0] for f in _FLAGS] + list(LOG_FLAGS):
        dest = name[2:].replace("-", "_")
        if dest not in ns:
            continue
        value = ns.pop(dest)
        if dest == "free_before_load_gib":
            from .budget import positive_gib
            positive_gib(name, value)
        if dest in _OVERRIDES:
            out["overrides"][_OVERRIDES[dest]] = value
        elif dest == "no_enable_prefix_caching":
            out["flags"]["enable_prefix_caching"] = False
        else:
            out["flags"][dest] = value
    return out


def _mode(flag: str) -> str:
    """The --parallelism name of the engine mode `flag` selects (kvfit.engines.base.DpaProfile)."""
    from .registry import engines
    return next(e.dpa.name for e in engines() if e.dpa and e.dpa.selected_by == flag)


def layout_aliases(a: dict, put) -> None:
    """TP / DP / attention-DP / EP spellings -> tp, dp, attention_dp, parallelism, each given
    to put(knob, spelling, value) (kvfit.planner.spellings collects and checks them)."""
    ep = a.get("enable_expert_parallel")
    dpa = a.get("enable_dp_attention") or "attn_dp_size" in a
    if ep and dpa:
        raise UsageError("--enable-expert-parallel (vLLM) and SGLang attention-DP flags were "
                         "both given.", hint="Use one engine's layout flags.")
    if ep:
        put("parallelism", "--enable-expert-parallel", _mode("--enable-expert-parallel"))
        t, d = a.get("tensor_parallel_size"), a.get("data_parallel_size")
        if d is not None:
            put("attention_dp", "--data-parallel-size", d)
        if t is not None and d is not None:
            put("tp", "--tensor-parallel-size x --data-parallel-size", t * d)
        elif t is not None:
            put("attention_tp", "--tensor-parallel-size", t)
    else:
        if "tensor_parallel_size" in a:
            put("tp", "--tensor-parallel-size", a["tensor_parallel_size"])
        if "data_parallel_size" in a:
            put("dp", "--data-parallel-size", a["data_parallel_size"])
    if "tp_size" in a:
        put("tp", "--tp-size", a["tp_size"])
    if "pipeline_parallel_size" in a:
        put("pp", "--pipeline-parallel-size", a["pipeline_parallel_size"])
    if dpa:
        put("parallelism", "--enable-dp-attention" if a.get("enable_dp_attention")
            else "--attn-dp-size", _mode("--enable-dp-attention"))
        if "attn_dp_size" in a:
            put("attention_dp", "--attn-dp-size", a["attn_dp_size"])
    if "dp_size" in a:     # with --enable-dp-attention, --dp-size counts attention groups
        if a.get("enable_dp_attention"):
            put("attention_dp", "--dp-size (with --enable-dp-attention)", a["dp_size"])
        else:
            put("dp", "--dp-size", a["dp_size"])
    if "ep_size" in a:
        put("tp", "--ep-size", a["ep_size"])
