"""SGLang preflight probe. Run with the serving environment's Python; prints one JSON object.

    ENGINE_PYTHON probe_sglang.py --mode registry|config|load --config-dir DIR --kv-dtype NAME
        [--kv-auto] [--index-dtype mxfp4|nvfp4] --context N --tp N

registry: sglang.__version__; sglang.srt.models.registry.ModelRegistry.get_supported_archs()
  (imports every model module, so it is slow); sglang.srt.layers.quantization
  QUANTIZATION_METHODS (else BASE_QUANTIZATION_METHODS); the --kv-cache-dtype choices of the
  server's own argument parser (ServerArgs.add_cli_args).
config: also sglang.srt.configs.model_config.ModelConfig on the config directory
  (trust_remote_code=False, context_length = the context) and ModelRegistry.resolve_model_cls.
load: also sglang.Engine(...) at the context and TP, and one generated token (CUDA only).
No SGLang flag is assumed for a 4-bit sparse-index cache (that check is unknown). Never
imports kvfit.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

# kvfit dtype -> SGLang --kv-cache-dtype spellings, first offered wins. fp8 is e4m3 (SGLang
# has no bare fp8); mxfp4 is fp4_e2m1 (not fp4_mx_block16: 16-value blocks are another format).
KV_SPELLINGS = {"bf16": ["bfloat16", "bf16"], "fp8": ["fp8_e4m3"], "fp8_e4m3": ["fp8_e4m3"],
                "fp8_e5m2": ["fp8_e5m2"], "mxfp4": ["fp4_e2m1"], "nvfp4": ["nvfp4"]}
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


def backend() -> str:
    try:
        import torch
        if torch.cuda.is_available():
            return f"cuda ({torch.cuda.get_device_name(0)})"
    except Exception:
        pass
    return "no CUDA accelerator visible"


def kv_choices() -> list:
    """--kv-cache-dtype choices from SGLang's own server argument parser."""
    from sglang.srt.server_args import ServerArgs
    parser = argparse.ArgumentParser(add_help=False)
    ServerArgs.add_cli_args(parser)
    action = next(a for a in parser._actions if "--kv-cache-dtype" in a.option_strings)
    return list(action.choices or [])


def quant_methods() -> list:
    from sglang.srt.layers import quantization as q
    names = getattr(q, "QUANTIZATION_METHODS", None) or q.BASE_QUANTIZATION_METHODS
    return list(names)


def declared_method(config: dict, hf_quant, methods: list) -> str | None:
    block = lib.quant_block(config, hf_quant)
    if block is None:
        return None
    algo = lib.modelopt_algo(block)
    if algo:
        wanted = ["modelopt_fp4"] if algo == "NVFP4" else ["modelopt_fp8", "modelopt"]
        return next((m for m in wanted if m in methods), wanted[0])
    method = str(block.get("quant_method", "")).lower().replace("_", "-")
    return next((m for m in methods if m.replace("_", "-") == method), method or None)


def registry(p) -> None:
    import sglang
    p.facts["version"] = str(getattr(sglang, "__version__", "unknown"))
    p.facts["backend"] = backend()
    v = p.facts["version"]
    config, hf_quant = lib.read_config(p.args.config_dir)
    supported = lib.locate("ModelRegistry.get_supported_archs()", lambda: set(
        importlib.import_module("sglang.srt.models.registry").ModelRegistry
        .get_supported_archs()))
    archs = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    hit = next((a for a in archs if a in supported), None)
    if hit:
        p.check("architecture", "pass", f"{hit} is in SGLang {v}'s model registry.")
    else:
        p.check("architecture", "unknown",
                f"{', '.join(archs)} is not in SGLang {v}'s model registry; SGLang may serve it "
                "with its Transformers fallback (--engine-probe config decides)." if archs
                else "config.json declares no architectures.")
    methods = lib.locate("SGLang's quantization methods", quant_methods)
    method = declared_method(config, hf_quant, methods)
    if method is None:
        p.check("quantization", "pass", "no quantization declared (unquantized weights).")
    else:
        ok = method in methods
        p.check("quantization", "pass" if ok else "fail", f"{method!r} is "
                f"{'one of' if ok else 'not among'} SGLang {v}'s quantization methods.")
    check_kv(p, lib.locate("ServerArgs --kv-cache-dtype choices", kv_choices))


def _explicit(kv: dict) -> str:
    if kv["engine"] != "auto":
        return "."
    spelled = kv["engine_explicit"]
    return f" (explicitly: {spelled})." if spelled else " (no explicit spelling of it)."


def check_kv(p, choices: list) -> None:
    a, v = p.args, p.facts["version"]
    kv = lib.map_kv(a.kv_dtype, a.kv_auto, KV_SPELLINGS, choices)
    p.facts["kv_cache_dtype"] = kv
    if kv["offered"]:
        p.check("kv cache dtype", "pass", f"kvfit {a.kv_dtype}{' (auto)' if a.kv_auto else ''} "
                f"is SGLang --kv-cache-dtype {kv['engine']}" + _explicit(kv))
        if kv["engine"] != "auto":
            p.facts["engine_flags"].append(f"--kv-cache-dtype {kv['engine']}")
    else:
        p.check("kv cache dtype", "fail", f"SGLang {v} offers no KV-cache dtype equal to "
                f"kvfit's {a.kv_dtype} (choices: {', '.join(kv['choices'])}).")
    if a.index_dtype in lib.FOUR_BIT_INDEX:
        lib.index_unknown(p, "kvfit assumes no SGLang flag for it")


def parse(p) -> None:
    """Config mode: SGLang's ModelConfig parses the config; the registry resolves the class."""
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.models.registry import ModelRegistry
    try:
        mc = ModelConfig(model_path=p.args.config_dir, trust_remote_code=False,
                         context_length=p.args.context)
    except Exception as exc:
        p.check("engine config", "fail", f"SGLang's ModelConfig refused the config: "
                f"{lib.reason(exc)}")
        return
    p.check("engine config", "pass", f"SGLang's ModelConfig parsed it (context_length "
            f"{getattr(mc, 'context_len', p.args.context):,}).")
    found = lib.resolve_implementation(
        p, "SGLang", lambda: ModelRegistry.resolve_model_cls(mc.hf_config.architectures))
    if found is not None:
        p.check("architecture", "pass", f"SGLang serves it through {found[2]}.")


def smoke(p) -> None:
    """Load mode: start sglang.Engine at the context and TP and generate one token."""
    import sglang
    a = p.args
    kv = (p.facts["kv_cache_dtype"] or {}).get("engine") or "auto"
    kwargs = {"model_path": a.model or a.config_dir, "tp_size": a.tp,
              "context_length": a.context, "kv_cache_dtype": kv, "trust_remote_code": False}
    if a.revision:
        kwargs["revision"] = a.revision
    try:
        engine = sglang.Engine(**kwargs)
        try:
            engine.generate("Hello", {"max_new_tokens": 1, "temperature": 0.0})
        finally:
            engine.shutdown()
    except Exception as exc:
        p.smoke = ("smoke-fail", f"SGLang failed to start or generate: {lib.reason(exc)}")
        return
    p.smoke = ("smoke-pass", f"SGLang started {kwargs['model_path']} at TP {a.tp} and "
               f"context_length {a.context:,} and generated one token.")


def body(p) -> None:
    import sglang  # noqa: F401  (missing engine -> status missing)
    if p.args.mode == "load":
        lib.refuse_without_cuda("SGLang", p.args.tp)
    registry(p)
    if p.args.mode != "registry":
        parse(p)
    if p.args.mode == "load" and not p.failed():
        smoke(p)


if __name__ == "__main__":
    lib.main("sglang", body)
