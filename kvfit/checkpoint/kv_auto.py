"""`--kv-dtype auto`: the one resolver shared by the planner and every engine model.

An engine spec may state how its `auto` reads the checkpoint (`auto_kv` in its values):

  auto_kv:
    value:
      quant_config: config_then_file   # config.json's top-level quantization_config, else
                                       # hf_quant_config.json (only when config.json has none)
      producer_quant_method: {producer: modelopt, quant_algos: [FP8, NVFP4, ...], method: modelopt}
      honour:                          # first matching entry that yields a dtype decides
        - {quant_method_prefix: modelopt, keys: [quantization.kv_cache_scheme, ...]}
        - {quant_method: compressed-tensors, keys: [kv_cache_scheme], means: fp8}
    source: "engine file:line"

A declaration the rule does not honour leaves the cache at the served model dtype (a float32
config served in 16 bits unless --dtype float32). Without an `auto_kv` rule (SGLang) the
checkpoint's KV declaration as kvfit.checkpoint.quant summarises it decides. The planner without
--engine uses the default engine's rule (vLLM at the spec's default version), so the static
bound and the engine model count the same cache.
"""

from __future__ import annotations

from .. import dtypes
from ..errors import UsageError
from ..state.fields import value_at


def _modelopt_value(value) -> str | None:
    """vLLM's get_kv_cache_quant_algo_string mapping (a scheme dict or an algorithm name), then
    MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP (vllm/utils/torch_utils.py:78-81: fp8 -> fp8_e4m3, the
    cache dtype the engine then runs with; some backends take fp8_e4m3 but not fp8)."""
    if isinstance(value, dict):
        if value.get("dynamic") is False and value.get("num_bits") == 8 \
                and value.get("type") == "float":
            return "fp8_e4m3"
        if value.get("num_bits") == 4 and value.get("type") == "float":
            return "nvfp4"
        return None
    if isinstance(value, str):
        return {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}.get(value.strip().lower())
    return None


def _quant_config(meta, how: str) -> tuple[dict | None, str]:
    qc = meta.config.get("quantization_config")
    if isinstance(qc, dict):
        return qc, "config.json: quantization_config"
    if how == "config_then_file" and isinstance(meta.quant_config, dict):
        return meta.quant_config, "hf_quant_config.json:"
    return None, ""


def declared(meta, rule: dict, warnings: list[str]) -> tuple[str | None, str]:
    """(kvfit dtype name, deciding field) of the KV declaration `rule` honours, or (None, why)."""
    qc, where = _quant_config(meta, rule.get("quant_config", "config_then_file"))
    if qc is None:
        return None, "no quantization config"
    method = str(qc.get("quant_method") or "")
    implied = rule.get("producer_quant_method")
    inner = qc.get("quantization") if isinstance(qc.get("quantization"), dict) else {}
    if implied and (value_at(qc, "producer.name") == implied["producer"] or "modelopt_quant_config"
                    in inner) and str(inner.get("quant_algo", "")).upper() in implied["quant_algos"]:
        method = implied["method"]
    for entry in rule.get("honour", []):
        prefix, exact = entry.get("quant_method_prefix"), entry.get("quant_method")
        if (prefix and not method.startswith(prefix)) or (exact and method != exact):
            continue
        for key in entry["keys"]:
            value = value_at(qc, key)
            if not value:
                continue
            name = entry.get("means") or _modelopt_value(value)
            label = f"{where} {key}" if where.endswith(":") else f"{where}.{key}"
            if name:
                return name, label
            warnings.append(f"{label} = {str(value)[:60]} is not a KV dtype the engine maps; "
                            "auto keeps the model dtype.")
            return None, f"{label} not mapped"
    return None, f"{where} (quant_method {method or 'unset'}) declares no KV dtype the engine applies"


def served(rules, meta, root, root_name, flag: str | None = None) -> dtypes.CacheDtype | None:
    """The model dtype as the engine serves it: an explicit --dtype, else the config's
    (--dtype auto runs float32 checkpoints in 16 bits where the engine spec says so)."""
    if flag and str(flag).lower() != "auto":
        name = dtypes.normalize(flag)
        if name not in ("bf16", "fp16", "fp32"):
            raise UsageError(f"--dtype {flag!r}: use auto, bfloat16, float16 or float32.")
        return dtypes.CacheDtype(name, dtypes.WIDTHS[name], f"engine flag --dtype {flag}")
    found = dtypes.model_dtype(meta.config, root, root_name)
    rule = rules.values.get("float32_model_bytes") if rules is not None else None
    if found is not None and found.name == "fp32" and rule:
        named = rules.values.get("float32_served_dtype")    # the engine's 16-bit choice
        name = dtypes.normalize(str(named["value"])) if named else "fp16"
        return dtypes.CacheDtype(name, dtypes.WIDTHS[name], f"{found.provenance}; served "
                                 f"in 16 bits as {name} ({rules.engine} --dtype auto)")
    return found


def dsa_model(rules, architectures, root: dict) -> bool:
    """Whether the engine treats the model as DeepSeek-family sparse attention (rule
    dsa_architectures: config.json's first class listed, and index_topk set)."""
    rule = rules.values.get("dsa_architectures") if rules is not None else None
    return bool(rule and architectures and architectures[0] in rule["value"]
                and isinstance(root, dict) and root.get("index_topk") is not None)


def by_gpu(rules, meta, root, capability: str | None,
           warnings: list[str]) -> dtypes.CacheDtype | None:
    """The KV dtype an engine sets for a sparse-attention (DSA) model by GPU generation,
    whatever the checkpoint declares (rule dsa_architectures), or None."""
    archs = meta.config.get("architectures") if isinstance(meta.config, dict) else None
    if not dsa_model(rules, archs if isinstance(archs, list) else (), root):
        return None
    sink = bool(root.get(rules["dsa_auto_kv_sink_key"]))
    major = int(str(capability).split(".")[0]) if capability else None
    fp8 = major is not None and major >= rules["dsa_auto_kv_fp8_from_major"] and not sink
    if major is None and not sink:
        warnings.append(f"{rules.engine} sets a DSA model's KV cache under --kv-cache-dtype auto by "
                        f"GPU: bfloat16 below SM{rules['dsa_auto_kv_fp8_from_major']}0, fp8_e4m3 "
                        "from it; no GPU is named (--hardware), so bfloat16 is assumed.")
    name = "fp8_e4m3" if fp8 else "bf16"
    why = (f"SM{major}x" if major is not None else "GPU unknown") + (
        "; learnable attention sinks" if sink else "")
    source = rules.values["dsa_auto_kv_fp8_from_major"]["source"]
    return dtypes.CacheDtype(name, dtypes.WIDTHS[name],
                             f"engine rule {source} ({rules.engine} auto for a DSA model: {why})")


def by_architecture(rules, meta) -> dtypes.CacheDtype | None:
    """The KV dtype an engine sets under auto for an architecture class whatever the checkpoint
    declares (rule auto_kv_by_architecture: config.json's first class), or None."""
    rule = rules.values.get("auto_kv_by_architecture") if rules is not None else None
    archs = meta.config.get("architectures") if isinstance(meta.config, dict) else None
    if not rule or not isinstance(archs, list) or not archs:
        return None
    row = next((r for r in rule["value"] if r["architecture"] == archs[0]), None)
    if row is None:
        return None
    name = row["dtype"]
    return dtypes.CacheDtype(name, dtypes.WIDTHS[name], f"engine rule {rule['source']} "
                             f"({rules.engine} auto for {archs[0]})")


def resolve(rules, meta, root, root_name, quant: dict | None, warnings: list[str],
            flag: str | None = None, capability: str | None = None) -> dtypes.CacheDtype:
    """The KV CacheDtype `auto` means for this checkpoint under `rules` (an engine's rules);
    capability: the GPU's compute capability, for rules that depend on it (None: unknown)."""
    fixed = by_architecture(rules, meta)
    if fixed is not None:
        return fixed
    gpu = by_gpu(rules, meta, root, capability, warnings)
    if gpu is not None:
        return gpu
    rule = rules.values.get("auto_kv") if rules is not None else None
    if rule:
        name, source = declared(meta, rule["value"], warnings)
        if name:
            return dtypes.CacheDtype(name, dtypes.WIDTHS[name], f"checkpoint: {source} "
                                     f"({rules.engine} auto applies it)")
        other = (quant or {}).get("kv_cache")
        if other:
            warnings.append(f"The checkpoint declares KV cache dtype {other} in "
                            f"{(quant or {}).get('kv_cache_source')}, which {rules.engine} "
                            "--kv-cache-dtype auto does not apply (rule auto_kv, "
                            f"specs/engines/{rules.engine}.yaml); "
                            "the cache stays at the model dtype. Pass --kv-dtype fp8 to use it.")
    else:
        name, source = (quant or {}).get("kv_cache"), (quant or {}).get("kv_cache_source")
        if name:
            norm = dtypes.normalize(name)
            if norm is None:
                raise UsageError(f"the checkpoint declares KV cache dtype {name!r}, which kvfit "
                                 "does not know; pass --kv-dtype explicitly.")
            return dtypes.CacheDtype(norm, dtypes.WIDTHS[norm], f"checkpoint: {source}")
    found = served(rules, meta, root, root_name, flag)
    if found:
        return found
    warnings.append("The config declares no torch_dtype/dtype; the cache is assumed bf16.")
    return dtypes.CacheDtype("bf16", dtypes.WIDTHS["bf16"], "assumption: no dtype declared, bf16")
