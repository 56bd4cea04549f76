"""Whether an engine version starts with a checkpoint's quantization method (rule
`quantization_methods`, by version range): the engine refuses an unregistered method at start-up,
so kvfit refuses it too instead of sizing a pool the engine never builds.

Example: Llama-3.1-405B-Instruct-FP8 declares quant_method fbgemm_fp8; SGLang 0.5.23 has no such
method (layers/quantization/__init__.py:63-104) and raises 'Unknown quantization method'
(configs/model_config.py:2151-2156); vLLM 0.33 has it but refuses it as deprecated unless
--allow-deprecated-quantization (config/model.py:1472-1486).
"""

from __future__ import annotations

from ..errors import ConfigError
from .spec import in_range, parse_version


def _row(rules) -> dict | None:
    """The rule row read for this engine version, or None (not checked)."""
    rule = rules.values.get("quantization_methods")
    if not rule:
        return None
    version = parse_version(rules.version)
    if version is None:
        return None
    return next((r for r in rule["value"] if in_range(version, r["versions"])), None)


def _renamed(row: dict, method: str, qc: dict) -> str:
    """The method after the engine's renames (gptq -> gptq_marlin when Marlin takes it)."""
    for r in row.get("rewrites", ()):
        if r["from"] == method and all(_holds(qc.get(k), allowed)
                                       for k, allowed in r.get("when", {}).items()):
            return r["to"]
    return method


def _holds(value, allowed: list) -> bool:
    """value is one of `allowed` (true is not 1: a boolean matches only a boolean)."""
    return any(value == a and isinstance(value, bool) == isinstance(a, bool) for a in allowed)


def check(rules, quant: dict | None, config: dict | None, flags: dict) -> None:
    """Raise ConfigError (exit 2) naming the method when this engine version refuses the
    checkpoint's quantization method; return quietly when it starts or the version is not
    modelled. quant: kvfit's quantization summary; config: config.json (its
    quantization_config holds what the renames read)."""
    from ..checkpoint.quant import _config_qc

    method = (quant or {}).get("method")
    row = _row(rules)
    if not method or row is None:
        return
    qc = _config_qc(config)[0] if isinstance(config, dict) else None
    method = _renamed(row, str(method).lower(), qc or {})
    name = f"{rules.engine} {rules.version}"
    source = rules.basis("quantization_methods")
    if method not in row["methods"]:
        raise ConfigError(
            f"{name} has no quantization method {method!r}, which this checkpoint declares "
            f"(quant_method): the engine refuses it at start-up ({source}).",
            hint=f"{name} knows: {', '.join(row['methods'])}. Use a checkpoint in one of "
                 "these formats or an engine version that has this one.")
    flag = row.get("deprecated_flag")
    if method in row.get("deprecated", ()) and not flags.get(flag):
        spelled = rules.commands.get("flags", {}).get(flag, "--" + flag.replace("_", "-"))
        raise ConfigError(
            f"{name} refuses the deprecated quantization method {method!r}, which this "
            f"checkpoint declares (quant_method), unless {spelled} is given ({source}).",
            hint=f"Pass {spelled} to plan it as the engine would then start it.")
