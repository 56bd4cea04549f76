"""Weights as vLLM holds them when it quantizes an unquantized checkpoint while loading it
(`--quantization fp8` on a bf16 checkpoint), or when the served checkpoint's linear layers are
stored in a known 8-bit format that its pinned config does not declare.

What vLLM does, by version (the source read for each):
  * up to 0.19 (fixture log vllm-0.19.0-llama-3.1-8b-instruct-qfp8: `--quantization fp8` loads
    8.49 GiB where the bf16 run loads 14.99 GiB): Fp8Config(is_checkpoint_fp8_serialized=False)
    gives every LinearBase an Fp8LinearMethod; the weight is created in the model dtype and, after
    loading, replaced by ops.scaled_fp8_quant's float8_e4m3fn copy and one float32 scale per
    tensor (vllm/model_executor/layers/quantization/fp8.py, get_quant_method and
    Fp8LinearMethod.process_weights_after_loading, at commit 0071b24bf8fe8c3d1bc3516d0ff8477f07964aaf);
    FusedMoE experts get Fp8MoEMethod (fp8 too); embeddings and the LM head are not LinearBase
    and stay in the model dtype.
  * 0.33: `fp8` on an unquantized checkpoint raises "The `fp8` quantization method no longer
    supports online quantization. Please use `--quantization fp8_per_tensor`"
    (vllm 0.33.0 model_executor/layers/quantization/fp8.py:106-112); `fp8_per_tensor` is the
    online method (online/fp8.py:188 Fp8PerTensorOnlineLinearMethod, online/fp8.py:594
    Fp8PerTensorOnlineMoEMethod), fp8 weights with a per-tensor scale.

In kvfit's weight estimate the spec's shaped tensors are the linear weights (embeddings, norms
and the LM head are counted elements, kept at the model dtype), so "every linear weight stored
as fp8" is one declaration group targeting Linear (specs/quant/weight_storage.yaml `fp8`: one
byte per element and at most one float32 scale per output row).
"""

from __future__ import annotations

from ..checkpoint.quant import QuantSummary
from ..errors import ConfigError
from .spec import parse_version

# vLLM --quantization values that quantize an unquantized checkpoint's linear weights while
# loading, and the storage format they leave (specs/quant/weight_storage.yaml).
_ONLINE = {"fp8": "fp8", "fp8_per_tensor": "fp8"}
# The first vLLM release read where `fp8` refuses an unquantized checkpoint (fp8.py:106-112).
_FP8_ONLINE_REMOVED = "0.33.0"
# Formats a served checkpoint's 8-bit linear weights may be stated in (weight_storage.yaml).
SERVED_FORMATS = ("fp8", "int8")
_TITLE = {"vllm": "vLLM", "sglang": "SGLang"}


def _summary(fmt: str, method: str) -> QuantSummary:
    return QuantSummary(weight_algorithm=fmt, weight_bits=8, formats=(fmt,), method=method,
                        module_groups=((fmt, ("Linear",)),))


def load_time(engine: str, version: str | None, method: str | None,
              declared: QuantSummary | None) -> tuple[QuantSummary | None, str | None]:
    """(the quantization of the weights as loaded, why) when the run quantizes an unquantized
    checkpoint at load; (None, None) when the checkpoint's own declaration decides (or no
    method is given). ConfigError when this vLLM version refuses the method on an unquantized
    checkpoint."""
    if engine != "vllm" or not method or (declared is not None and declared.method):
        return None, None
    method = str(method).lower()
    fmt = _ONLINE.get(method)
    if fmt is None:
        return None, None
    parsed = parse_version(version) if version else None
    if method == "fp8" and parsed is not None and parsed >= parse_version(_FP8_ONLINE_REMOVED):
        raise ConfigError(
            f"vLLM {version} refuses --quantization fp8 on a checkpoint that declares no "
            "quantization: that release no longer quantizes to fp8 while loading under this "
            "name (vllm/model_executor/layers/quantization/fp8.py:106-112 in 0.33.0).",
            hint="Use --quantization fp8_per_tensor, the online fp8 method of that release.")
    return _summary(fmt, method), (f"--quantization {method}: vLLM stores every linear weight "
                                   "as fp8 while loading (embeddings and LM head stay in the "
                                   "model dtype)")


# The online methods an engine applies to a checkpoint that declares no quantization, by engine:
# (method, first version read with it or None, last version below which it quantizes or None,
# source). vLLM: fp8 quantizes while loading up to 0.32 (fixture log
# vllm-0.19.0-llama-3.1-8b-instruct-qfp8) and refuses from 0.33 (fp8.py:106-112), where
# fp8_per_tensor takes its place (0.33.0 online/fp8.py:188, :594; first read in 0.33.0's
# registry, quantization/__init__.py:15-49). SGLang: fp8 is documented as online quantization of
# a bf16 checkpoint (sgl-project/sglang docs/backend/quantization.md 'Online Quantization', at
# commit 05a6a3cfaf1cfc262b402a943b57d9268f55372a; kvfit takes vLLM's storage: fp8 weights, one
# scale per tensor).
_PLANNED = {
    "vllm": (("fp8", None, _FP8_ONLINE_REMOVED,
              "fixture log vllm-0.19.0-llama-3.1-8b-instruct-qfp8 (8.49 GiB loaded where bf16 "
              "loads 14.99); vllm fp8.py Fp8LinearMethod.process_weights_after_loading"),
             ("fp8_per_tensor", _FP8_ONLINE_REMOVED, None,
              "vllm 0.33.0 model_executor/layers/quantization/online/fp8.py:188 "
              "(Fp8PerTensorOnlineLinearMethod), :594 (Fp8PerTensorOnlineMoEMethod)")),
    "sglang": (("fp8", None, None,
                "sgl-project/sglang docs/backend/quantization.md 'Online Quantization' (commit "
                "05a6a3cfaf1cfc262b402a943b57d9268f55372a): --quantization fp8 on a bf16 "
                "checkpoint"),),
}


def planned(rules, method: str, declared: QuantSummary | None
            ) -> tuple[QuantSummary | None, str | None]:
    """The weights as loaded under the plan's --quantization METHOD: (QuantSummary, why) when
    the engine quantizes an unquantized checkpoint while loading; (None, None) when METHOD is
    the checkpoint's own declaration; (None, note) when it names another method for a
    quantized checkpoint that the engine may take over (a kernel choice such as gptq_marlin:
    the declared weights are planned, and `note` says so). ConfigError (exit 2) when the engine
    version has no such method, refuses it on this checkpoint, or kvfit does not model what it
    loads."""
    from .quant_methods import _row

    method = str(method).strip().lower()
    name = f"{_TITLE.get(rules.engine, rules.engine)} {rules.version}"
    row = _row(rules)
    if row is not None and method not in row["methods"]:
        raise ConfigError(f"{name} has no --quantization method {method!r}: the engine refuses "
                          f"it at start-up ({rules.basis('quantization_methods')}).",
                          hint=f"{name} knows: {', '.join(row['methods'])}.")
    own = (declared.method or "").lower() if declared is not None else ""
    online = [m for m, *_ in _PLANNED.get(rules.engine, ())]
    if own:
        if method == own:
            return None, None
        if method not in online:
            return None, (f"--quantization {method} on a checkpoint that declares {own}: kvfit "
                          "plans the declared weights; whether the engine takes the flag over "
                          "that declaration is decided by each method's "
                          "override_quantization_method (e.g. vLLM 0.33.0 quantization/"
                          "auto_gptq.py:213-233), which kvfit does not model.")
        raise ConfigError(
            f"--quantization {method} differs from the quantization this checkpoint declares "
            f"({own}): " + ("vLLM refuses a method that does not match the checkpoint's "
                            "(vllm/config/model.py:1456-1462 in 0.33.0)." if rules.engine ==
                            "vllm" else "kvfit plans a quantized checkpoint only under its own "
                            "method."), hint=f"Drop --quantization, or pass --quantization {own}.")
    version = parse_version(rules.version) if rules.version else None
    for m, since, until, source in _PLANNED.get(rules.engine, ()):
        if m != method:
            continue
        if since and (version is None or version < parse_version(since)):
            raise ConfigError(f"{name}: --quantization {method} is known from vLLM {since} on "
                              f"({source}); kvfit has not read it in earlier releases.",
                              hint="Use --quantization fp8 with this version.")
        if until and version is not None and version >= parse_version(until):
            return load_time(rules.engine, rules.version, method, declared)   # raises
        return _summary(_ONLINE.get(method, "fp8"), method), (
            f"--quantization {method}: {_TITLE.get(rules.engine, rules.engine)} stores every "
            "linear weight as fp8 while "
            f"loading (embeddings and LM head stay in the model dtype; {source})")
    raise ConfigError(f"--quantization {method} on a checkpoint that declares no quantization: "
                      f"kvfit does not model the weights {name} would load that way (it models "
                      f"{', '.join(online) or 'no method'} there).",
                      hint="Use a checkpoint quantized in that format, or pass --weight-gib "
                           "with the loaded size and drop --quantization.")


def served(fmt: str) -> tuple[QuantSummary, str]:
    """The served checkpoint's linear weights stored as `fmt` (8-bit, per-channel scales), for
    a pinned config that is a stand-in without the served checkpoint's declaration."""
    if fmt not in SERVED_FORMATS:
        raise ConfigError(f"served weight format {fmt!r} is not one of "
                          f"{', '.join(SERVED_FORMATS)}.")
    return _summary(fmt, f"served-{fmt}"), (f"the served checkpoint's linear weights as {fmt} "
                                            "(the pinned config is a stand-in without its "
                                            "quantization declaration)")
