"""vLLM preflight probe. Run with the serving environment's Python; prints one JSON object.

    ENGINE_PYTHON probe_vllm.py --mode registry|config|load --config-dir DIR --kv-dtype NAME
        [--kv-auto] [--index-dtype mxfp4|nvfp4] --context N --tp N

registry: vllm.__version__; ModelRegistry.get_supported_archs() (vllm/model_executor/models/
  registry.py); QUANTIZATION_METHODS (model_executor/layers/quantization/__init__.py);
  KV_CACHE_DTYPES (config/cache.py); for DeepSeek V4 with a 4-bit index cache, the
  AttentionConfig option that selects it (config/attention.py).
config: also ModelConfig on the config directory (trust_remote_code=False, no tokenizer, no
  weights, max_model_len = the context), ModelRegistry.resolve_model_cls, the TP check
  ModelConfig.verify_with_parallel_config, and CacheConfig validation of the KV spelling.
load: also LLM(...) at the context and TP, and one generated token (CUDA only).
The script never imports kvfit: its helpers are loaded from _probe_lib.py by path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# kvfit dtype -> vLLM --kv-cache-dtype spellings, first offered wins. Not mapped: int8 (vLLM's
# int8_per_token_head adds per-head scales), mxfp4 (no MXFP4 KV cache), fp32, generic fp4.
KV_SPELLINGS = {"bf16": ["bfloat16"], "fp16": ["float16"], "fp8": ["fp8"],
                "fp8_e4m3": ["fp8_e4m3"], "fp8_e5m2": ["fp8_e5m2"], "nvfp4": ["nvfp4"]}


HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if not p or Path(p).resolve() != HERE]  # no shadowing


def _load(name: str):
    """A sibling helper file, loaded by path (the kvfit package is never imported)."""
    spec = importlib.util.spec_from_file_location(f"kvfit_{name.strip('_')}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


lib = _load("_probe_lib")
_module = importlib.import_module


def backend() -> str:
    """The platform vLLM detected in this interpreter (and its device, when there is one)."""
    from vllm.platforms import current_platform as plat
    name = type(plat).__name__
    kind = getattr(plat, "device_type", "") or "no accelerator"
    device = None
    try:
        if plat.is_cuda_alike():
            device = plat.get_device_name(0)
    except Exception:
        device = None
    return f"{name} ({kind}{', ' + device if device else ''})"


def check_architecture(p, config: dict, supported) -> None:
    archs = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    hit = next((a for a in archs if a in supported), None)
    if hit:
        p.check("architecture", "pass", f"{hit} is in vLLM {p.facts['version']}'s model registry.")
    elif not archs:
        p.check("architecture", "unknown", "config.json declares no architectures; vLLM would "
                "guess one from model_type.")
    elif _transformers_has(archs[0]):
        p.check("architecture", "unknown", f"{archs[0]} is not in vLLM {p.facts['version']}'s "
                "model registry; vLLM may serve it with its generic Transformers backend "
                "(--engine-probe config decides).")
    else:
        p.check("architecture", "fail", f"vLLM {p.facts['version']}'s model registry has no "
                f"{', '.join(archs)} (and Transformers has no such class).")


def _transformers_has(arch: str) -> bool:
    try:
        import transformers
        return getattr(transformers, arch, None) is not None
    except Exception:
        return False


def declared_method(config: dict, hf_quant) -> str | None:
    """The quant_method vLLM reads (ModelOpt producers mapped as vLLM's config convertor does)."""
    block = lib.quant_block(config, hf_quant)
    if block is None:
        return None
    algo = lib.modelopt_algo(block)
    if algo in ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO"):
        return "modelopt"
    if algo in ("NVFP4", "MIXED_PRECISION"):
        return "modelopt_fp4" if algo == "NVFP4" else "modelopt_mixed"
    method = str(block.get("quant_method", "")).lower().replace("compressed_tensors",
                                                                "compressed-tensors")
    return method or None


def check_quant(p, method: str | None) -> None:
    q = lib.locate("QUANTIZATION_METHODS",
                   lambda: _module("vllm.model_executor.layers.quantization"))
    methods = lib.locate("QUANTIZATION_METHODS", lambda: list(q.QUANTIZATION_METHODS))
    deprecated = list(getattr(q, "DEPRECATED_QUANTIZATION_METHODS", []))
    from vllm.platforms import current_platform as plat
    on_platform = list(getattr(plat, "supported_quantization", None) or [])
    v = p.facts["version"]
    if method is None:
        p.check("quantization", "pass", "no quantization declared (unquantized weights).")
    elif method not in methods:
        p.check("quantization", "fail", f"vLLM {v} has no quantization method {method!r}.")
    elif on_platform and method not in on_platform:
        p.check("quantization", "fail", f"vLLM {v} supports {method!r} but not on "
                f"{p.facts['backend']} (platform methods: {', '.join(on_platform)}).")
    elif method in deprecated:
        p.check("quantization", "fail", f"vLLM {v} deprecates {method!r}; it starts only with "
                "--allow-deprecated-quantization.")
    else:
        p.check("quantization", "pass", f"{method!r} is one of vLLM {v}'s quantization methods.")


def _explicit(kv: dict) -> str:
    if kv["engine"] != "auto":
        return "."
    spelled = kv["engine_explicit"]
    return f" (explicitly: {spelled})." if spelled else " (no explicit spelling of it)."


def check_kv(p) -> None:
    choices = lib.locate("vllm.config.cache.KV_CACHE_DTYPES",
                         lambda: list(_module("vllm.config.cache").KV_CACHE_DTYPES))
    a = p.args
    kv = lib.map_kv(a.kv_dtype, a.kv_auto, KV_SPELLINGS, choices)
    p.facts["kv_cache_dtype"] = kv
    if kv["offered"]:
        p.check("kv cache dtype", "pass", f"kvfit {a.kv_dtype}{' (auto)' if a.kv_auto else ''} "
                f"is vLLM --kv-cache-dtype {kv['engine']}" + _explicit(kv))
        if kv["engine"] != "auto":
            p.facts["engine_flags"].append(f"--kv-cache-dtype {kv['engine']}")
    else:
        p.check("kv cache dtype", "fail", f"vLLM {p.facts['version']} offers no KV-cache dtype "
                f"equal to kvfit's {a.kv_dtype} (choices: {', '.join(kv['choices'])}).")


def registry(p) -> dict | None:
    import vllm
    p.facts["version"] = str(vllm.__version__)
    p.facts["backend"] = lib.locate("vllm.platforms.current_platform", backend)
    config, hf_quant = lib.read_config(p.args.config_dir)
    supported = lib.locate("ModelRegistry.get_supported_archs()", lambda: set(
        _module("vllm.model_executor.models").ModelRegistry.get_supported_archs()))
    check_architecture(p, config, supported)
    check_quant(p, declared_method(config, hf_quant))
    check_kv(p)
    if p.args.index_dtype not in lib.FOUR_BIT_INDEX:
        return None
    if lib.is_deepseek_v4(config):
        return _load("_vllm_steps").index_option(p, lib)
    lib.index_unknown(p, "the probe knows vLLM's index-cache option only for DeepSeek V4")
    return None


def body(p) -> None:
    import vllm  # noqa: F401  (missing engine -> status missing)
    if p.args.mode == "load":
        lib.refuse_without_cuda("vLLM", p.args.tp)
    index_flag = registry(p)
    if p.args.mode == "registry":
        return
    steps = _load("_vllm_steps")
    steps.parse(p, lib, index_flag)
    if p.args.mode == "load" and not p.failed():
        steps.smoke(p, lib, index_flag)


if __name__ == "__main__":
    lib.main("vllm", body)
