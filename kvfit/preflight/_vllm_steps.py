"""The vLLM probe's config and load steps (loaded by probe_vllm.py by path; never imports kvfit).

parse: vLLM's own ModelConfig reads the config directory (no tokenizer, no weights, remote code
  off) at max_model_len = the planned context, resolves the implementation class, checks the
  TP size and validates the KV-cache spelling with CacheConfig.
smoke: LLM(...) at the context and TP, and one generated token (only after the CUDA check).
index_option: the --attention-config option for DeepSeek V4's 4-bit index cache (all modes).
"""

from __future__ import annotations

import json


def _model_config(p, lib):
    from vllm.config import ModelConfig
    try:
        mc = ModelConfig(model=p.args.config_dir, tokenizer=None, skip_tokenizer_init=True,
                         trust_remote_code=False, max_model_len=p.args.context)
    except Exception as exc:
        p.check("engine config", "fail", f"vLLM's ModelConfig refused the config: "
                f"{lib.reason(exc)}")
        return None
    p.check("engine config", "pass", f"vLLM's ModelConfig parsed it: architecture "
            f"{mc.architecture}, quantization {mc.quantization or 'none'}, dtype "
            f"{str(mc.dtype).replace('torch.', '')}, max_model_len {mc.max_model_len:,}.")
    return mc


def _implementation(p, lib, mc) -> None:
    from vllm.model_executor.models import ModelRegistry
    found = lib.resolve_implementation(
        p, "vLLM", lambda: ModelRegistry.resolve_model_cls(mc.architectures, mc))
    if found is None:
        return
    cls, arch, impl = found
    arch_check = next((c for c in p.checks if c["name"] == "architecture"), None)
    if arch_check and arch_check["status"] != "pass":
        how = "its generic Transformers backend" if "Transformers" in cls.__name__ else arch
        p.check("architecture", "pass", f"vLLM serves it through {how} ({impl}).")


def _tensor_parallel(p, lib, mc) -> None:
    from vllm.config import ParallelConfig
    tp = p.args.tp
    try:
        mc.verify_with_parallel_config(ParallelConfig(tensor_parallel_size=tp))
    except Exception as exc:
        p.check("tensor parallel", "fail", f"vLLM refuses TP {tp}: {lib.reason(exc)}")
        return
    p.check("tensor parallel", "pass", f"vLLM accepts --tensor-parallel-size {tp}.")


def _cache_dtype(p, lib, index_flag) -> None:
    """CacheConfig (and AttentionConfig) validate the spellings the probe chose."""
    from vllm.config import AttentionConfig, CacheConfig
    spelling = (p.facts["kv_cache_dtype"] or {}).get("engine")
    parts = []
    try:
        if spelling is not None:
            CacheConfig(cache_dtype=spelling)
            parts.append(f"CacheConfig(cache_dtype={spelling!r})")
        if index_flag:
            AttentionConfig(**index_flag)
            parts.append(f"AttentionConfig({index_flag})")
    except Exception as exc:
        p.check("cache config", "fail", f"vLLM refuses the cache options: {lib.reason(exc)}")
        return
    if parts:
        p.check("cache config", "pass", " and ".join(parts) + ": accepted by vLLM.")


def _dsa_allowed() -> tuple | None:
    """Index-cache dtypes vLLM's DeepSeek sparse indexer accepts (v1/attention/backends/mla/
    indexer.py DSA_INDEXER_KV_DTYPES), or None when this version keeps no such list."""
    try:
        from vllm.v1.attention.backends.mla.indexer import DSA_INDEXER_KV_DTYPES
        return tuple(DSA_INDEXER_KV_DTYPES)
    except Exception:
        return None


def index_option(p, lib) -> dict | None:
    """DeepSeek V4's 4-bit sparse-index cache: the --attention-config option of this vLLM
    (use_fp4_indexer_cache where it exists, else indexer_kv_dtype). Returns the option."""
    from vllm.config import attention
    fields = lib.locate("AttentionConfig", lambda: attention.AttentionConfig.__dataclass_fields__)
    want, v = p.args.index_dtype, p.facts["version"]
    info = {"requested": want, "option": None, "value": None, "choices": []}
    p.facts["index_cache"] = info
    if "use_fp4_indexer_cache" in fields and want == "mxfp4":
        info.update(option="use_fp4_indexer_cache", value=True)
    elif "indexer_kv_dtype" in fields:
        from typing import get_args
        info["choices"] = [str(c) for c in get_args(getattr(attention, "IndexerKVDType", None))]
        if want in info["choices"]:
            info.update(option="indexer_kv_dtype", value=want)
    if info["option"] is None:
        p.check("index cache dtype", "fail", f"vLLM {v} has no --attention-config option for a "
                f"{want} DeepSeek V4 index cache.")
        return None
    flag = {info["option"]: info["value"]}
    allowed = _dsa_allowed() if info["option"] == "indexer_kv_dtype" else None
    if allowed is not None and want not in allowed:
        p.check("index cache dtype", "fail", f"vLLM {v}'s DeepSeek sparse indexer accepts "
                f"indexer_kv_dtype {', '.join(allowed)}, not {want}.")
        return flag
    p.facts["engine_flags"].append(f"--attention-config '{json.dumps(flag)}'")
    p.check("index cache dtype", "pass", f"{want} index cache: vLLM {v} --attention-config "
            f"'{json.dumps(flag)}' (kernel support is exercised only by --engine-probe load).")
    return flag


def parse(p, lib, index_flag) -> None:
    """Config mode: the engine parses the config and resolves its implementation."""
    mc = _model_config(p, lib)
    if mc is None:
        return
    _implementation(p, lib, mc)
    _tensor_parallel(p, lib, mc)
    _cache_dtype(p, lib, index_flag)


def smoke(p, lib, index_flag) -> None:
    """Load mode: start vLLM at the context and TP and generate one token."""
    from vllm import LLM, SamplingParams
    a = p.args
    spelling = (p.facts["kv_cache_dtype"] or {}).get("engine") or "auto"
    kwargs = {"model": a.model or a.config_dir, "tensor_parallel_size": a.tp,
              "max_model_len": a.context, "kv_cache_dtype": spelling, "trust_remote_code": False}
    if a.revision:
        kwargs["revision"] = a.revision
    if index_flag:
        kwargs["attention_config"] = index_flag
    try:
        llm = LLM(**kwargs)
        out = llm.generate(["Hello"], SamplingParams(max_tokens=1, temperature=0.0))
        tokens = len(out[0].outputs[0].token_ids)
    except Exception as exc:
        p.smoke = ("smoke-fail", f"vLLM failed to start or generate: {lib.reason(exc)}")
        return
    p.smoke = ("smoke-pass", f"vLLM started {kwargs['model']} at TP {a.tp} and max_model_len "
               f"{a.context:,} and generated {tokens} token(s).")
