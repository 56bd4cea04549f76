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


def served(fmt: str) -> tuple[QuantSummary, str]:
    """The served checkpoint's linear weights stored as `fmt` (8-bit, per-channel scales), for
    a pinned config that is a stand-in without the served checkpoint's declaration."""
    if fmt not in SERVED_FORMATS:
        raise ConfigError(f"served weight format {fmt!r} is not one of "
                          f"{', '.join(SERVED_FORMATS)}.")
    return _summary(fmt, f"served-{fmt}"), (f"the served checkpoint's linear weights as {fmt} "
                                            "(the pinned config is a stand-in without its "
                                            "quantization declaration)")
