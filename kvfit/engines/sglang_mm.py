"""SGLang's model-class rules around its memory fraction: whether it treats a model as
multimodal, whether the default prefill CUDA graph stays on (its memory is reserved inside
mem_fraction_static), the vision-tower adjustment of a multimodal model's fraction, and the
multimodal reservation taken out of the KV budget.

Every rule is data in specs/engines/sglang.yaml (with SGLang's file:line); this module is
their meaning. Worked example (Qwen3-VL-32B, H100 80GB, TP 1, recorded by SGLang 0.5.23):
the text-model fraction without the prefill graph's 58 x 8 MiB is 0.835; the tower reads as
24 layers (Qwen3-VL names its depth `depth`) x 1152, so the complexity ratio is
24 x 1152^2 / (24 x 1024^2) = 1.265625, the adjustment 1 - 0.1 x 0.265625 = 0.9734375, and
mem_fraction_static = 0.835 x 0.95 x 0.9734375 = 0.77217...; the KV budget then loses the
1,024 MiB CUDA-IPC feature pool (no embedding cache on a large Hopper GPU).
"""

from __future__ import annotations

from .common import MIB, Inputs, num


def _names(rules, name: str) -> list:
    rule = rules.values.get(name)
    return list(rule["value"]) if rule else []


def _top(inp: Inputs) -> dict:
    return inp.model_config if isinstance(inp.model_config, dict) else {}


def multimodal(rules, inp: Inputs) -> bool:
    """Whether SGLang serves this model as multimodal (configs/model_config.py:690-717, 809-827):
    its class is listed, or it has a language sub-config; never a text-only-by-default class."""
    archs = inp.architectures
    if archs and archs[0] in _names(rules, "multimodal_text_only_architectures"):
        return False
    if any(a in _names(rules, "multimodal_architectures") for a in archs):
        return True
    llava = bool(archs) and archs[0].startswith("Llava") and archs[0].endswith("ForCausalLM")
    top = _top(inp)
    return not llava and any(isinstance(top.get(k), dict)
                             for k in _names(rules, "multimodal_subconfig_keys"))


def _kda(inp: Inputs) -> bool:
    """configs/model_config.py:230-252 uses_kda_attention: KDA layers in the (text) config."""
    for cfg in (_top(inp), inp.config or {}, _top(inp).get("text_config") or {}):
        if not isinstance(cfg, dict):
            continue
        linear = cfg.get("linear_attn_config")
        if isinstance(linear, dict) and linear.get("kda_layers"):
            return True
        types = cfg.get("layer_types") or []
        if ("linear_attention" in types and cfg.get("linear_num_heads") is not None
                and cfg.get("linear_head_dim") is not None):
            return True
    return False


def prefill_graph(rules, inp: Inputs, pp: int = 1) -> tuple[bool, str]:
    """(on, why): whether SGLang keeps its default (breakable) prefill CUDA graph, whose memory
    mem_fraction_static reserves (arg_groups/cuda_graph_hook.py:136-237)."""
    archs = inp.architectures
    if pp > 1 and "prefill_graph_pp_off" in rules.values:
        return False, rules.basis("prefill_graph_pp_off") + f" (--pp-size {pp})"
    if any(a in _names(rules, "prefill_graph_off_architectures") for a in archs):
        return False, rules.basis("prefill_graph_off_architectures")
    if _kda(inp) and not any(a in _names(rules, "kda_prefill_graph_architectures") for a in archs):
        return False, rules.basis("kda_prefill_graph_architectures")
    if multimodal(rules, inp) and not any(
            a in _names(rules, "multimodal_prefill_graph_architectures") for a in archs):
        return False, rules.basis("multimodal_prefill_graph_architectures")
    return True, "the default breakable prefill CUDA graph"


def _tower(rules, inp: Inputs, vision: dict) -> tuple[float, float]:
    """(layers, hidden size) of the vision tower as SGLang's config class exposes them."""
    rows = _names(rules, "vlm_vision_fields")
    row = next((r for r in rows if any(a in r["architectures"] for a in inp.architectures)),
               None) or next((r for r in rows if not r["architectures"]), {})

    def read(key_name: str, baseline: str) -> float:
        value = vision.get(row[key_name]) if row.get(key_name) else None
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return value if ok else rules[baseline]
    return read("layers_key", "vlm_baseline_layers"), read("hidden_key", "vlm_baseline_hidden")


def vlm_factor(rules, inp: Inputs):
    """The factor SGLang multiplies a multimodal model's default fraction by
    (arg_groups/memory_hook.py:417-462), or None when it does not apply."""
    vision = _top(inp).get("vision_config")
    if "vlm_fraction_factor" not in rules.values or not isinstance(vision, dict) \
            or not multimodal(rules, inp):
        return None
    layers, hidden = _tower(rules, inp, vision)
    base = rules["vlm_baseline_layers"] * rules["vlm_baseline_hidden"] ** 2
    ratio = layers * hidden ** 2 / base
    adjust = max(rules["vlm_factor_min"], min(rules["vlm_factor_max"],
                                              1.0 - rules["vlm_sensitivity"] * (ratio - 1.0)))
    value = rules["vlm_fraction_factor"] * adjust
    return num(value, rules.basis("vlm_fraction_factor") + f" (vision tower {layers:g} layers x "
               f"{hidden:g} hidden: complexity {ratio:.4g} x the baseline, adjustment "
               f"{adjust:.6g}; {rules.basis('vlm_vision_fields')})", tower_layers=layers,
               tower_hidden=hidden)


def mm_reservation(rules, inp: Inputs, gpu_mib: int):
    """Bytes SGLang takes out of the KV budget for a multimodal model's post-sizing caches
    (mem_cache/kv_cache_configurator.py:202-219, 3034-3038)."""
    if "vlm_cache_mib" not in rules.values or not multimodal(rules, inp):
        return num(0, "not a multimodal model in SGLang: nothing reserved")
    major = int(str(inp.capability).split(".")[0]) if inp.capability else None
    ipc = (_top(inp).get("model_type") in _names(rules, "mm_feature_transport_model_types")
           and major == 9 and gpu_mib >= rules["mm_feature_transport_min_gib"] * 1024)
    mib = rules["mm_feature_cache_mib"] if ipc else rules["vlm_cache_mib"]
    why = (f"CUDA-IPC feature pool {mib:g} MiB and no embedding cache "
           f"({rules.basis('mm_feature_transport_model_types')}; {rules.basis('mm_feature_cache_mib')})"
           if ipc else f"embedding cache {mib:g} MiB ({rules.basis('vlm_cache_mib')})")
    return num(int(mib * MIB), why, mib=mib)
