"""kvfit.checkpoint.quant: one test per quantization family, each expectation derived by reading the
pinned fixture named in the test (tests/fixtures/quant/<org>--<name>/, provenance in the
SOURCES.yaml beside it), plus malformed-input, provenance and data-file tests."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kvfit.checkpoint.metadata import Metadata
from kvfit.checkpoint.quant import KV_CACHE_DTYPES, WEIGHT_ALGORITHMS, QuantSummary, summarize
from kvfit.errors import ConfigError, KvfitError

FIXTURES = Path(__file__).parent / "fixtures" / "quant"
MODEL_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "synthetic")


def fixture(name: str) -> Metadata:
    """Metadata for a pinned fixture directory: config.json (+ hf_quant_config.json)."""
    folder = FIXTURES / name
    hf = folder / "hf_quant_config.json"
    return Metadata(source=name, origin="local",
                    config=json.loads((folder / "config.json").read_text()),
                    quant_config=json.loads(hf.read_text()) if hf.is_file() else None)


def synthetic(name: str) -> Metadata:
    config = json.loads((FIXTURES / "synthetic" / name).read_text())
    return Metadata(source=name, origin="local", config=config)


def inline(qc=None, hf=None, **config) -> Metadata:
    """A minimal hand-made config for edge cases that no real checkpoint shows."""
    config = {"model_type": "llama", "num_hidden_layers": 2, **config}
    if qc is not None:
        config["quantization_config"] = qc
    return Metadata(source="inline", origin="local", config=config, quant_config=hf)


# --- unquantized ---------------------------------------------------------------------------

def test_unquantized_config_declares_nothing():
    s = summarize(inline())
    assert (s.weight_algorithm, s.weight_bits, s.mixed, s.scope) == (None, None, False, None)
    assert (s.kv_cache, s.kv_cache_source, s.sources, s.warnings) == (None, None, (), ())
    assert s.runtime_floor_gib is None


# --- fp8 (quant_method "fp8") ---------------------------------------------------------------

def test_fp8_block_qwen3_32b():
    # quantization_config: quant_method fp8, weight_block_size [128, 128], no
    # modules_to_not_convert -> fp8-block, 8 bits, block (128, 128), nothing excluded.
    s = summarize(fixture("Qwen--Qwen3-32B-FP8"))
    assert (s.weight_algorithm, s.weight_bits, s.block_size) == ("fp8-block", 8, (128, 128))
    assert (s.group_size, s.excluded_modules, s.mixed) == (None, 0, False)
    assert s.scope == "all linear layers"
    assert (s.method, s.kv_cache, s.kv_cache_source) == ("fp8", None, None)
    assert s.sources == ("config.json: quantization_config",)


def test_fp8_block_with_unconverted_modules_minimax_m25():
    # modules_to_not_convert = ["gate", "e_score_correction_bias", "lm_head"]: 3 plain names
    # -> excluded_modules 3 and mixed (those stay at the model dtype).
    s = summarize(fixture("MiniMaxAI--MiniMax-M2.5"))
    assert (s.weight_algorithm, s.block_size, s.excluded_modules) == ("fp8-block", (128, 128), 3)
    assert s.mixed is True
    assert s.scope == "all linear layers except 3 excluded modules"


# --- fbgemm_fp8 -----------------------------------------------------------------------------

def test_fbgemm_fp8_llama_31_405b():
    # quant_method fbgemm_fp8; modules_to_not_convert lists 10 modules (the MLP and attention
    # projections of layers 0 and 125) -> excluded_modules 10, 8-bit.
    s = summarize(fixture("meta-llama--Llama-3.1-405B-Instruct-FP8"))
    assert (s.weight_algorithm, s.weight_bits, s.excluded_modules) == ("fbgemm-fp8", 8, 10)
    assert s.mixed is True and s.block_size is None
    assert s.scope == "all linear layers except 10 excluded modules"


# --- bitsandbytes ---------------------------------------------------------------------------

def test_bitsandbytes_8bit_jeevanchaps_llama31_8b():
    # load_in_8bit true, load_in_4bit false, llm_int8_skip_modules null -> 8-bit, 0 excluded.
    s = summarize(fixture("jeevanchaps--Meta-Llama3.1-8B-Instruct-assessment"))
    assert (s.weight_algorithm, s.weight_bits, s.excluded_modules) == ("bitsandbytes-8bit", 8, 0)
    assert (s.mixed, s.scope, s.method) == (False, "all linear layers", "bitsandbytes")


def test_bitsandbytes_4bit_inline():
    s = summarize(inline({"quant_method": "bitsandbytes", "load_in_4bit": True,
                          "load_in_8bit": False, "llm_int8_skip_modules": ["lm_head"]}))
    assert (s.weight_algorithm, s.weight_bits, s.excluded_modules) == ("bitsandbytes-4bit", 4, 1)


# --- mxfp4 (GPT-OSS) and runtime floors -----------------------------------------------------

def test_mxfp4_gpt_oss_20b_gets_16_gib_floor():
    # quant_method mxfp4, model_type gpt_oss, num_hidden_layers 24 -> the 20B MXFP4 rule in
    # specs/quant/runtime_floors.yaml: 16 GiB. modules_to_not_convert has 4 entries, two of
    # them globs ("model.layers.*.self_attn", ...) -> "4 excluded module patterns".
    s = summarize(fixture("openai--gpt-oss-20b"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("mxfp4", 4, None)
    assert s.scope == "all linear layers except 4 excluded module patterns"
    assert s.runtime_floor_gib == 16
    assert "gpt_oss_20b_mxfp4" in s.runtime_floor_basis
    assert "num_hidden_layers=24" in s.runtime_floor_basis
    assert "specs/quant/runtime_floors.yaml" in s.sources
    # weight and KV precision are separate: gpt-oss declares no KV quantization
    assert (s.kv_cache, s.kv_cache_source) == (None, None)


def test_mxfp4_gpt_oss_120b_gets_60_gib_floor():
    # Same declaration, num_hidden_layers 36 -> the 120B MXFP4 rule: 60 GiB.
    s = summarize(fixture("openai--gpt-oss-120b"))
    assert (s.weight_algorithm, s.runtime_floor_gib) == ("mxfp4", 60)
    assert "gpt_oss_120b_mxfp4" in s.runtime_floor_basis


def test_gpt_oss_20b_without_quantization_gets_48_gib_floor():
    # The 20B config with its quantization_config removed stands in for a BF16 re-save:
    # no weight quantization + 24 layers -> the 20B BF16 rule: 48 GiB.
    meta = fixture("openai--gpt-oss-20b")
    config = {k: v for k, v in meta.config.items() if k != "quantization_config"}
    s = summarize(Metadata(source="bf16", origin="local", config=config))
    assert (s.weight_algorithm, s.runtime_floor_gib) == (None, 48)
    assert "gpt_oss_20b_bf16" in s.runtime_floor_basis


def test_gpt_oss_unknown_layer_count_gets_no_floor():
    meta = fixture("openai--gpt-oss-20b")
    s = summarize(Metadata(source="x", origin="local",
                           config={**meta.config, "num_hidden_layers": 30}))
    assert s.weight_algorithm == "mxfp4"
    assert (s.runtime_floor_gib, s.runtime_floor_basis) == (None, None)


def test_floor_rules_need_exact_types():
    # num_hidden_layers "24" (a string) must not match the integer 24 in the rule.
    meta = fixture("openai--gpt-oss-20b")
    s = summarize(Metadata(source="x", origin="local",
                           config={**meta.config, "num_hidden_layers": "24"}))
    assert s.runtime_floor_gib is None


# --- compressed-tensors ---------------------------------------------------------------------

def test_compressed_tensors_fp8_channel_llama4_scout():
    # One group: weights 8-bit float, strategy "channel", targets ["Linear"]; top format
    # float-quantized; `ignore` has 449 entries (vision tower, routers, lm_head), no globs.
    s = summarize(fixture("RedHatAI--Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"))
    assert (s.weight_algorithm, s.weight_bits, s.block_size) == ("fp8", 8, None)
    assert (s.method, s.declared) == ("compressed-tensors", "float-quantized")
    assert s.excluded_modules == 449
    assert s.scope == "all linear layers except 449 excluded modules"
    # kv_cache_scheme is present and null: an explicit "no KV quantization"
    assert (s.kv_cache, s.kv_cache_source) == (None,
                                               "config.json: quantization_config.kv_cache_scheme")


def test_compressed_tensors_int4_pack_kimi_k25_in_text_config():
    # The quantization_config sits in text_config: format pack-quantized, weights 4-bit int,
    # group_size 32; ignore = lm_head + 3 "re:" patterns -> 4 excluded module patterns.
    s = summarize(fixture("moonshotai--Kimi-K2.5"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("int4-pack", 4, 32)
    assert s.sources == ("config.json: text_config.quantization_config",)
    assert s.scope == "all linear layers except 4 excluded module patterns"


def test_compressed_tensors_mxfp4_kimi_k3():
    # text_config quantization: group format mxfp4-pack-quantized, 4-bit float, group 32;
    # ignore holds 6 "re:" patterns.
    s = summarize(fixture("moonshotai--Kimi-K3"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("mxfp4", 4, 32)
    assert (s.excluded_modules, s.declared) == (6, "mxfp4-pack-quantized")


def test_compressed_tensors_mixed_redhat_deepseek_v4_flash():
    # group_0: 8-bit float, block_structure [128, 128] on the attention regex;
    # group_1: nvfp4-pack-quantized 4-bit float, group 16, on the FFN regex; ignore [].
    s = summarize(fixture("RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8"))
    assert (s.weight_algorithm, s.weight_bits) == ("mixed-precision", None)
    assert s.formats == ("fp8-block", "nvfp4")
    assert (s.group_size, s.block_size, s.excluded_modules) == (16, (128, 128), 0)
    assert s.mixed is True
    assert s.scope == ("fp8-block on re:.*attn.*(fused_wqa_wkv|wq_b|wo_a|wo_b)$; "
                       "nvfp4 on re:.*ffn.*(gate|up|down)_proj$")


def test_compressed_tensors_fp8_block_with_fp8_kv_laguna():
    # (fixture fidelity UNVERIFIED, see its SOURCES.yaml; used for its kv_cache_scheme shape)
    # weights 8-bit float, strategy block [128, 128]; ignore has 7 entries (6 "re:");
    # kv_cache_scheme {num_bits: 8, type: float, strategy: tensor} -> fp8.
    s = summarize(fixture("poolside--Laguna-XS.2-FP8"))
    assert (s.weight_algorithm, s.block_size, s.excluded_modules) == ("fp8-block", (128, 128), 7)
    assert (s.kv_cache, s.kv_cache_source) == ("fp8",
                                               "config.json: quantization_config.kv_cache_scheme")


# --- ModelOpt (hf_quant_config.json, or config.json quant_method "modelopt") ----------------

def test_modelopt_nvfp4_qwen3_32b():
    # hf_quant_config: quant_algo NVFP4, group_size 16, kv_cache_quant_algo FP8,
    # exclude_modules ["lm_head"] -> nvfp4/4 bits/group 16, 1 excluded, mixed, kv fp8.
    s = summarize(fixture("nvidia--Qwen3-32B-NVFP4"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("nvfp4", 4, 16)
    assert (s.excluded_modules, s.mixed) == (1, True)
    assert s.scope == "all linear layers except 1 excluded module"
    assert (s.kv_cache, s.kv_cache_source) == (
        "fp8", "hf_quant_config.json: quantization.kv_cache_quant_algo")
    assert (s.method, s.declared) == ("modelopt", "NVFP4")


def test_modelopt_fp8_llama31_70b():
    # quant_algo FP8, kv FP8, exclude_modules ["lm_head"]; no group size declared.
    s = summarize(fixture("nvidia--Llama-3.1-70B-Instruct-FP8"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("fp8", 8, None)
    assert s.kv_cache == "fp8"
    assert s.excluded_modules == 1


def test_modelopt_nvfp4_without_kv_quantization_deepseek_v3_0324():
    # kv_cache_quant_algo is null -> kv_cache None, but the source records the explicit
    # declaration; exclude_modules has 245 entries, some globs ("model.layers.21.self_attn*").
    s = summarize(fixture("nvidia--DeepSeek-V3-0324-NVFP4"))
    assert (s.weight_algorithm, s.excluded_modules) == ("nvfp4", 245)
    assert (s.kv_cache, s.kv_cache_source) == (
        None, "hf_quant_config.json: quantization.kv_cache_quant_algo")
    assert s.scope == "all linear layers except 245 excluded module patterns"


def test_modelopt_mixed_precision_qwen36_35b():
    # quant_algo MIXED_PRECISION; quantized_layers has 291 entries: 130 FP8 (linear_attn
    # projections) and 161 W4A16_NVFP4 with group_size 16 (experts, shared experts,
    # lm_head); exclude_modules ["mtp.layers.0*", "mtp*"] -> 2 patterns; kv FP8.
    s = summarize(fixture("nvidia--Qwen3.6-35B-A3B-NVFP4"))
    assert (s.weight_algorithm, s.weight_bits, s.mixed) == ("mixed-precision", None, True)
    assert s.formats == ("fp8", "nvfp4")
    assert (s.group_size, s.excluded_modules, s.kv_cache) == (16, 2, "fp8")
    assert s.scope == "fp8 on 130 modules; nvfp4 on 161 modules; 2 excluded module patterns"
    assert s.declared == "MIXED_PRECISION"
    # config.json's quantization_config (quant_method modelopt) agrees -> no warning
    assert s.warnings == ()
    assert s.sources == ("config.json: quantization_config", "hf_quant_config.json: quantization")


def test_modelopt_routed_experts_only_deepseek_v4_flash():
    # hf_quant_config: MIXED_PRECISION whose 43 quantized_layers are all
    # "layers.<i>.ffn.experts" NVFP4 group 16; exclude_modules has 4 globs; kv null.
    # config.json instead says quant_method "fp8" with weight_block_size [128, 128]:
    # the two files disagree, hf_quant_config.json is followed and the clash is a warning.
    s = summarize(fixture("nvidia--DeepSeek-V4-Flash-NVFP4"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("nvfp4", 4, 16)
    assert s.scope == "routed experts only (43 modules); 4 excluded module patterns"
    assert (s.mixed, s.excluded_modules, s.kv_cache) == (True, 4, None)
    assert len(s.warnings) == 1
    assert "fp8-block" in s.warnings[0] and "nvfp4" in s.warnings[0]


def test_modelopt_in_config_only_kimi_k25_nvfp4():
    # No hf_quant_config.json; config.json quant_method "modelopt", quant_algo NVFP4, `ignore`
    # has 64 entries, config_groups.group_0.weights.group_size 16, and kv_cache_scheme
    # {num_bits: 8, type: float} -> fp8 from config.json.
    s = summarize(fixture("nvidia--Kimi-K2.5-NVFP4"))
    assert (s.weight_algorithm, s.group_size, s.excluded_modules) == ("nvfp4", 16, 64)
    assert (s.kv_cache, s.kv_cache_source) == (
        "fp8", "config.json: quantization_config.kv_cache_scheme")


def test_modelopt_config_without_quant_method_qwen3_32b_fp8_static():
    # config.json quantization_config has quant_algo FP8 and kv_cache_scheme "FP8" (a string)
    # but no quant_method; hf_quant_config.json says FP8 / kv FP8 / exclude ["lm_head"].
    s = summarize(fixture("Qwen--Qwen3-32B-FP8-Static-PerTensor"))
    assert (s.weight_algorithm, s.kv_cache, s.excluded_modules) == ("fp8", "fp8", 1)
    assert s.kv_cache_source == "hf_quant_config.json: quantization.kv_cache_quant_algo"
    assert len(s.warnings) == 1 and "no quant_method" in s.warnings[0]


def test_modelopt_kv_only_declaration():
    s = summarize(inline(hf={"quantization": {"quant_algo": None, "kv_cache_quant_algo": "FP8"}}))
    assert (s.weight_algorithm, s.kv_cache, s.method) == (None, "fp8", "modelopt")


@pytest.mark.parametrize("spelling, expected", [
    ("FP8", "fp8"), ("fp8_e4m3", "fp8_e4m3"), ("FP8_E5M2", "fp8_e5m2"), ("INT8", "int8"),
    ("NVFP4", "nvfp4"), ("NVFP4_AFFINE", "nvfp4"), ("FP8_K_NVFP4_V", "fp8_k_nvfp4_v"),
    ("none", None), ("NONE", None), (None, None)])
def test_kv_cache_quant_algo_spellings(spelling, expected):
    s = summarize(inline(hf={"quantization": {"quant_algo": "FP8",
                                              "kv_cache_quant_algo": spelling}}))
    assert s.kv_cache == expected
    assert s.kv_cache_source == "hf_quant_config.json: quantization.kv_cache_quant_algo"


def test_kv_declarations_that_disagree_warn_and_first_non_null_wins():
    s = summarize(inline({"quant_method": "modelopt", "quant_algo": "FP8",
                          "kv_cache_scheme": {"num_bits": 8, "type": "float"}},
                         hf={"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": None}}))
    assert (s.kv_cache, s.kv_cache_source) == (
        "fp8", "config.json: quantization_config.kv_cache_scheme")
    assert any("disagree" in w for w in s.warnings)


# --- AWQ / GPTQ (synthetic: the corpus has no AWQ or GPTQ checkpoint) ------------------------

def test_awq_synthetic():
    # bits 4, group_size 128, modules_to_not_convert ["mlp.gate"].
    s = summarize(synthetic("synthetic--awq.json"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("awq", 4, 128)
    assert (s.excluded_modules, s.scope) == (1, "all linear layers except 1 excluded module")


def test_gptq_synthetic():
    # bits 4, group_size 128, nothing excluded.
    s = summarize(synthetic("synthetic--gptq.json"))
    assert (s.weight_algorithm, s.weight_bits, s.group_size, s.mixed) == ("gptq", 4, 128, False)


def test_gptq_per_channel_has_no_group_size():
    s = summarize(inline({"quant_method": "gptq", "bits": 8, "group_size": -1}))
    assert (s.weight_algorithm, s.weight_bits, s.group_size) == ("gptq", 8, None)


# --- malformed input ------------------------------------------------------------------------

@pytest.mark.parametrize("meta, field", [
    (inline([{"quant_method": "fp8"}]), "config.json: quantization_config"),
    (inline({"quant_method": 8}), "config.json: quantization_config.quant_method"),
    (inline(hf={"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": 7}}),
     "hf_quant_config.json: quantization.kv_cache_quant_algo"),
    (inline(hf={"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP16"}}),
     "hf_quant_config.json: quantization.kv_cache_quant_algo"),
    (inline({"quant_method": "compressed-tensors", "config_groups": {},
             "kv_cache_scheme": {"num_bits": 16, "type": "float"}}),
     "config.json: quantization_config.kv_cache_scheme"),
    (inline({"quant_method": "compressed-tensors", "config_groups": {},
             "kv_cache_scheme": [8]}), "config.json: quantization_config.kv_cache_scheme"),
    (inline(hf=["FP8"]), "hf_quant_config.json"),
    (inline(hf={"producer": {"name": "modelopt"}}), "hf_quant_config.json: quantization"),
    (inline(hf={"quantization": {"quant_algo": "NVFP4", "exclude_modules": "lm_head"}}),
     "hf_quant_config.json: quantization.exclude_modules"),
    (inline(hf={"quantization": {"quant_algo": "NVFP4", "group_size": True}}),
     "hf_quant_config.json: quantization.group_size"),
    (inline(hf={"quantization": {"quant_algo": "MIXED_PRECISION"}}),
     "hf_quant_config.json: quantization.quantized_layers"),
    (inline(hf={"quantization": {"quant_algo": "MIXED_PRECISION",
                                 "quantized_layers": {"a.b": "FP8"}}}),
     "hf_quant_config.json: quantization.quantized_layers.a.b"),
    (inline({"quant_method": "fp8", "weight_block_size": [128, "128"]}),
     "config.json: quantization_config.weight_block_size"),
    (inline({"quant_method": "compressed-tensors", "config_groups": [1]}),
     "config.json: quantization_config.config_groups"),
    (inline({"quant_method": "compressed-tensors",
             "config_groups": {"g": {"weights": {"num_bits": "8", "type": "float"}}}}),
     "config.json: quantization_config.config_groups.g.weights.num_bits"),
    (inline({"quant_method": "bitsandbytes", "load_in_8bit": "yes"}),
     "config.json: quantization_config.load_in_8bit"),
])
def test_malformed_declarations_raise_config_error_naming_the_field(meta, field):
    with pytest.raises(ConfigError) as info:
        summarize(meta)
    assert info.value.fields == (field,)
    assert field in info.value.message and "\n" not in info.value.render()


def test_unknown_quant_method_is_summarised_as_unknown_with_warning():
    s = summarize(inline({"quant_method": "hqq", "nbits": 4}))
    assert (s.weight_algorithm, s.weight_bits, s.method) == ("unknown", None, "hqq")
    assert len(s.warnings) == 1 and "'hqq'" in s.warnings[0]


def test_unknown_modelopt_algorithm_is_unknown_with_warning():
    s = summarize(inline(hf={"quantization": {"quant_algo": "W2A2_FUTURE"}}))
    assert s.weight_algorithm == "unknown"
    assert "W2A2_FUTURE" in s.warnings[0]


def test_bitsandbytes_without_a_width_is_unknown_with_warning():
    s = summarize(inline({"quant_method": "bitsandbytes", "load_in_8bit": True,
                          "load_in_4bit": True}))
    assert s.weight_algorithm == "unknown" and "load_in_4bit" in s.warnings[0]


def _paths(node, prefix=()):
    """Every (path, value) inside a JSON document, dict keys and the first list item."""
    items = node.items() if isinstance(node, dict) else enumerate(node[:1])
    for key, value in items:
        yield prefix + (key,), value
        if isinstance(value, dict | list) and value:
            yield from _paths(value, prefix + (key,))


JUNK = [7, 1.5, True, "x", None, [], [1], {}, {"num_bits": "8"}]


@pytest.mark.parametrize("name", ["nvidia--DeepSeek-V4-Flash-NVFP4", "moonshotai--Kimi-K2.5",
                                  "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8",
                                  "poolside--Laguna-XS.2-FP8", "openai--gpt-oss-20b",
                                  "jeevanchaps--Meta-Llama3.1-8B-Instruct-assessment",
                                  "Qwen--Qwen3-32B-FP8-Static-PerTensor", "synthetic--awq.json"])
def test_any_junk_value_gives_a_summary_or_config_error(name):
    # Replace every value inside the declarations by each junk value in turn: summarize
    # must answer or raise ConfigError, never KeyError/TypeError/AttributeError.
    base = synthetic(name) if name.startswith("synthetic") else fixture(name)
    docs = {"config": base.config, "quant_config": base.quant_config}
    answered = rejected = 0
    for doc_name, doc in docs.items():
        for path, _ in list(_paths(doc or {})):
            if doc_name == "config" and not set(path) & {
                    "quantization_config", "text_config", "model_type", "num_hidden_layers"}:
                continue
            for junk in JUNK:
                mutated = copy.deepcopy(docs)
                holder = mutated[doc_name]
                for key in path[:-1]:
                    holder = holder[key]
                holder[path[-1]] = junk
                try:
                    summarize(Metadata(source=name, origin="local", config=mutated["config"],
                                       quant_config=mutated["quant_config"]))
                    answered += 1
                except ConfigError:
                    rejected += 1
    assert answered > 0 and rejected > 0


# --- output shape and vocabulary ------------------------------------------------------------

def test_to_json_has_stable_keys_and_sorted_lists():
    out = summarize(fixture("nvidia--Qwen3.6-35B-A3B-NVFP4")).to_json()
    # every field but the estimate-only module lists, in declaration order
    assert list(out) == [f for f in QuantSummary.__dataclass_fields__
                         if f not in ("module_groups", "excluded_names")]
    assert out["sources"] == sorted(out["sources"]) and out["formats"] == ["fp8", "nvfp4"]
    assert json.loads(json.dumps(out)) == out
    assert summarize(fixture("Qwen--Qwen3-32B-FP8")).to_json()["block_size"] == [128, 128]


def test_every_fixture_summary_stays_inside_the_vocabulary():
    metas = [fixture(p.name) for p in MODEL_DIRS]
    metas += [synthetic(p.name) for p in (FIXTURES / "synthetic").glob("*.json")]
    for meta in metas:
        s = summarize(meta)
        assert s.weight_algorithm in WEIGHT_ALGORITHMS, meta.source
        assert s.kv_cache is None or s.kv_cache in KV_CACHE_DTYPES, meta.source
        assert set(s.formats) <= WEIGHT_ALGORITHMS - {"mixed-precision"}, meta.source
    assert len(metas) == 20


# --- provenance and data files --------------------------------------------------------------

def test_fixture_files_match_their_sources_yaml():
    yaml = YAML(typ="safe", pure=True)
    checked = 0
    for folder in MODEL_DIRS:
        listed = yaml.load((folder / "SOURCES.yaml").read_text())["files"]
        present = {p.name for p in folder.iterdir() if p.name != "SOURCES.yaml"}
        assert set(listed) == present, folder.name
        for name, entry in listed.items():
            data = (folder / name).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], (folder.name, name)
            assert len(data) == entry["bytes"] and len(entry["commit"]) == 40
            assert entry["repo"].startswith("https://github.com/")
            checked += 1
    assert checked == 24


def test_synthetic_fixtures_are_declared_synthetic():
    listed = YAML(typ="safe", pure=True).load(
        (FIXTURES / "synthetic" / "SOURCES.yaml").read_text())["files"]
    present = {p.name for p in (FIXTURES / "synthetic").glob("*.json")}
    assert set(listed) == present and all(e["synthetic"] is True for e in listed.values())
    assert all(name.startswith("synthetic--") for name in present)


def test_runtime_floors_yaml_is_well_formed_and_sourced():
    from kvfit.checkpoint import quant_floors
    path = quant_floors._data_path()
    assert path.name == "runtime_floors.yaml" and path.parent.name == "quant"
    data = YAML(typ="safe", pure=True).load(path.read_text())
    assert any("cookbook.openai.com" in s for s in data["sources"])
    assert {r["id"]: r["floor_gib"] for r in data["floors"]} == {
        "gpt_oss_20b_mxfp4": 16, "gpt_oss_20b_bf16": 48, "gpt_oss_120b_mxfp4": 60}
    for rule in data["floors"]:
        assert set(rule["match"]) <= {"model_type", "num_hidden_layers", "quant_method",
                                      "quantized"}


def test_data_path_follows_the_data_root(tmp_path, monkeypatch):
    from kvfit.checkpoint import quant_floors
    assert quant_floors._data_path() == quant_floors.data_root() / "specs" / "quant" / \
        "runtime_floors.yaml"
    monkeypatch.setattr(quant_floors, "data_root", lambda: tmp_path)
    with pytest.raises(KvfitError, match="runtime_floors.yaml is missing"):
        quant_floors._data_path()

def test_unknown_per_layer_algorithm_warns_once():
    layers = {f"model.layers.{i}.mlp": {"quant_algo": "W2A2_FUTURE"} for i in range(50)}
    s = summarize(inline(hf={"quantization": {"quant_algo": "MIXED_PRECISION",
                                              "quantized_layers": layers}}))
    assert s.weight_algorithm == "unknown" and len(s.warnings) == 1
    assert s.scope == "unknown on 50 modules"
