"""Synthesise an HF-style config dict from GGUF metadata, driven by gguf_keys.yaml."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError, UnsupportedArchitecture
from .gguf_header import GgufHeader

_ARCH_KEY = "general.architecture"


@cache
def key_map() -> dict[str, Any]:
    """gguf_keys.yaml, parsed once (ruamel.yaml, safe loader)."""
    from ruamel.yaml import YAML

    text = (Path(__file__).resolve().parent / "gguf_keys.yaml").read_text(encoding="utf-8")
    return YAML(typ="safe", pure=True).load(text)


def synthesize_config(header: GgufHeader) -> tuple[dict[str, Any], list[str]]:
    """(config dict, notes) for a GGUF header; UnsupportedArchitecture for unknown archs."""
    arch = header.fields.get(_ARCH_KEY)
    table = key_map()["architectures"]
    if not isinstance(arch, str) or arch not in table:
        known = ", ".join(sorted(table))
        raise UnsupportedArchitecture(f"the GGUF declares general.architecture = {arch!r}, which "
                                      f"kvfit cannot map to a config (known: {known}).")
    entry = table[arch]
    mapping = {**key_map()["common"], **entry.get("fields", {})}
    config: dict[str, Any] = {}
    used = []
    for field, template in mapping.items():
        key = template.format(arch=arch)
        if key in header.fields:
            config[field] = _scalar(header.fields[key], key)
            used.append(f"{field}<-{key}")
    _check_required(config, arch)
    _check_layer_count(config["num_hidden_layers"], arch)
    identity = entry.get("with_experts") if config.get("num_local_experts") else None
    config["model_type"] = (identity or entry)["model_type"]
    config["architectures"] = list((identity or entry)["architectures"])
    config.setdefault("vocab_size", _vocab_size(header))
    notes = [f"config synthesised from GGUF metadata (general.architecture={arch}): "
             + ", ".join(used)]
    notes += _layer_pattern(config, header.fields, arch, entry.get("sliding_period"))
    return {k: v for k, v in config.items() if v is not None}, notes


def _scalar(value: Any, key: str) -> Any:
    """A per-layer array whose entries are all equal becomes one value; else ConfigError."""
    if not isinstance(value, list):
        return value
    if value and all(v == value[0] for v in value):
        return value[0]
    raise ConfigError(f"GGUF key {key} varies per layer ({value[:8]}...), which kvfit does not "
                      "model for GGUF files.")


def _check_required(config: dict[str, Any], arch: str) -> None:
    """The fields every architecture needs must be present."""
    missing = [f for f in key_map()["required"] if f not in config]
    if missing:
        keys = ", ".join(key_map()["common"][f].format(arch=arch) for f in missing)
        raise ConfigError(f"the GGUF lacks required metadata: {keys}.")


def _check_layer_count(layers: Any, arch: str) -> None:
    """block_count bounds every per-layer list kvfit builds: a whole number, 1..MAX_LAYERS."""
    from ..state.layers import MAX_LAYERS

    if isinstance(layers, bool) or not isinstance(layers, int) or not 0 < layers <= MAX_LAYERS:
        raise ConfigError(f"the GGUF declares {arch}.block_count = {layers!r}; kvfit expects a "
                          f"whole number of layers from 1 to {MAX_LAYERS:,}.",
                          fields=(f"{arch}.block_count",))


def _vocab_size(header: GgufHeader) -> int | None:
    """Vocabulary size from the tokenizer token list, when the arch key is absent."""
    key = "tokenizer.ggml.tokens"
    if key in header.array_lengths:
        return header.array_lengths[key]
    tokens = header.fields.get(key)
    return len(tokens) if isinstance(tokens, list) else None


def _layer_pattern(config: dict[str, Any], fields: dict[str, Any], arch: str,
                   default_period: int | None) -> list[str]:
    """Add layer_types for sliding-window models; notes say whether declared or implied."""
    if not config.get("sliding_window"):
        return []
    layers = int(config["num_hidden_layers"])
    declared = fields.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(declared, list):
        if len(declared) != layers:
            raise ConfigError(f"{arch}.attention.sliding_window_pattern has {len(declared)} "
                              f"entries for {layers} layers.")
        flags = [bool(v) for v in declared]
        how = f"declared per layer by {arch}.attention.sliding_window_pattern"
    else:
        period = declared if isinstance(declared, int) else default_period
        if period is None:
            return [f"the GGUF declares sliding_window={config['sliding_window']} but no layer "
                    "pattern; layer_types left unset"]
        flags = [period == 0 or i % period < period - 1 for i in range(layers)]
        how = (f"period {period} declared by {arch}.attention.sliding_window_pattern"
               if isinstance(declared, int) else
               f"implied: llama.cpp's default period {period} for {arch}, not declared in the file")
    config["layer_types"] = ["sliding_attention" if f else "full_attention" for f in flags]
    return [f"layer_types from the sliding-window pattern ({how})"]
