"""GGUF metadata -> HF-style config, checked against real pairs (ollama's expected GGUF
key/values for a checkpoint vs that checkpoint's config.json) and synthetic edge cases."""

from __future__ import annotations

import json

import pytest
from hubserver.repos import FIXTURES

from kvfit.errors import ConfigError, UnsupportedArchitecture
from kvfit.hub.gguf_config import key_map, synthesize_config
from kvfit.hub.gguf_header import GgufHeader

ORACLES = FIXTURES / "gguf-metadata"
GEOMETRY = ("num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
            "num_key_value_heads", "max_position_embeddings")


def _ollama_fields(name: str) -> dict:
    """The scalar GGUF key/values of an ollama expectation file, typed back from strings."""
    raw = json.loads((ORACLES / name).read_text())
    fields = {}
    for key, value in raw.items():
        if key.startswith(("blk.", "tokenizer.")) or key.endswith(".weight"):
            continue
        try:
            fields[key] = int(value)
        except ValueError:
            fields[key] = float(value) if value[0].isdigit() else value
    return fields


def _header(fields: dict) -> GgufHeader:
    return GgufHeader(fields, {}, {}, 0)


@pytest.mark.parametrize(("ollama", "hf_config", "model_type"), [
    ("gemma-2-2b-it.json", "google--gemma-2-2b-it.config.json", "gemma2"),
    ("Mixtral-8x7B-Instruct-v0.1.json", "mistralai--Mixtral-8x7B-Instruct-v0.1.config.json",
     "mixtral"),
    ("Qwen2.5-0.5B-Instruct.json", "Qwen--Qwen2.5-0.5B.config.json", "qwen2"),
])
def test_synthesised_config_matches_the_checkpoint_config(ollama, hf_config, model_type):
    config, notes = synthesize_config(_header(_ollama_fields(ollama)))
    expected = json.loads((ORACLES / hf_config).read_text())
    assert config["model_type"] == model_type == expected["model_type"]
    assert config["architectures"] == expected["architectures"]
    for field in GEOMETRY:
        assert config[field] == expected[field], field
    assert config.get("head_dim") == expected.get("head_dim")
    assert notes[0].startswith("config synthesised from GGUF metadata")


def test_mixtral_experts_and_plain_mistral():
    mixtral, _ = synthesize_config(_header(_ollama_fields("Mixtral-8x7B-Instruct-v0.1.json")))
    assert (mixtral["num_local_experts"], mixtral["num_experts_per_tok"]) == (8, 2)
    mistral, _ = synthesize_config(_header(_ollama_fields("Mistral-7B-Instruct-v0.2.json")))
    assert mistral["model_type"] == "llama" and "num_local_experts" not in mistral
    assert mistral["num_key_value_heads"] == 8 and mistral["max_position_embeddings"] == 32768


def _gpt_oss(**extra) -> dict:
    return {"general.architecture": "gpt-oss", "gpt-oss.block_count": 6,
            "gpt-oss.embedding_length": 2880, "gpt-oss.attention.head_count": 64,
            "gpt-oss.attention.head_count_kv": 8, "gpt-oss.attention.key_length": 64,
            "gpt-oss.context_length": 131072, "gpt-oss.attention.sliding_window": 128,
            "gpt-oss.expert_count": 32, "gpt-oss.expert_used_count": 4, **extra}


def test_gpt_oss_layer_pattern_is_implied_when_not_declared():
    config, notes = synthesize_config(_header(_gpt_oss()))
    assert config["model_type"] == "gpt_oss" and config["sliding_window"] == 128
    assert config["layer_types"] == ["sliding_attention", "full_attention"] * 3
    assert config["num_local_experts"] == 32 and config["num_experts_per_tok"] == 4
    assert any("implied: llama.cpp's default period 2 for gpt-oss" in n for n in notes)


def test_declared_pattern_period_and_per_layer_array():
    by_period, notes = synthesize_config(_header(
        _gpt_oss(**{"gpt-oss.attention.sliding_window_pattern": 3})))
    assert by_period["layer_types"] == ["sliding_attention"] * 2 + ["full_attention"] \
        + ["sliding_attention"] * 2 + ["full_attention"]
    assert any("period 3 declared" in n for n in notes)
    flags = [True, True, False, False, True, False]
    by_layer, _ = synthesize_config(_header(
        _gpt_oss(**{"gpt-oss.attention.sliding_window_pattern": flags})))
    assert by_layer["layer_types"] == ["sliding_attention" if f else "full_attention"
                                       for f in flags]
    with pytest.raises(ConfigError, match="has 2 entries for 6 layers"):
        synthesize_config(_header(_gpt_oss(**{"gpt-oss.attention.sliding_window_pattern":
                                               [True, False]})))


def test_gemma3_period_six_and_text_model_type():
    fields = {"general.architecture": "gemma3", "gemma3.block_count": 12,
              "gemma3.embedding_length": 1152, "gemma3.attention.head_count": 4,
              "gemma3.attention.head_count_kv": 1, "gemma3.attention.sliding_window": 512}
    config, _ = synthesize_config(_header(fields))
    assert config["model_type"] == "gemma3_text"
    assert [i for i, t in enumerate(config["layer_types"]) if t == "full_attention"] == [5, 11]


def test_no_sliding_window_means_no_layer_types():
    config, _ = synthesize_config(_header(_ollama_fields("gemma-2-2b-it.json")))
    assert "layer_types" not in config and "sliding_window" not in config


def test_unknown_architecture_names_general_architecture():
    with pytest.raises(UnsupportedArchitecture, match="general.architecture = 'rwkv7'"):
        synthesize_config(_header({"general.architecture": "rwkv7"}))
    with pytest.raises(UnsupportedArchitecture, match="general.architecture = None"):
        synthesize_config(_header({}))


def test_missing_required_keys():
    with pytest.raises(ConfigError, match="qwen3.block_count, qwen3.embedding_length"):
        synthesize_config(_header({"general.architecture": "qwen3",
                                   "qwen3.attention.head_count": 4}))


def test_key_map_covers_the_issue_architectures():
    assert set(key_map()["architectures"]) >= {"llama", "qwen2", "qwen3", "qwen3moe", "gemma2",
                                               "gemma3", "gpt-oss"}
