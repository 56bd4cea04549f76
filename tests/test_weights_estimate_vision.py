"""Config-shape weight estimates of the vision towers and projectors that multimodal checkpoints
store next to their text decoder (gemma3 SigLIP, llama4, qwen3_vl with deepstack mergers).

Expected totals are derived by hand from the pinned configs (derivations in comments), or are
the `metadata.total_size` of a pinned safetensors index (medgemma-27b-it: exact).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"
GIB = 1024 ** 3


def _vision(est, *prefixes: str) -> int:
    return sum(r.instances * r.elements for r in est.rows if r.module.startswith(prefixes))


# Gemma 3 SigLIP tower (medgemma-27b-it and gemma-3-27b-it vision_config: hidden 1,152, MLP
# 4,304, 27 layers, patch 14, image 896, 3 channels, no head) and projector into 5,376:
#   patch_embedding 1,152 x 3 x 14 x 14 + 1,152             =       678,528
#   position_embedding (896 / 14)^2 = 4,096 x 1,152          =     4,718,592
#   layer: 2 LayerNorms 4 x 1,152 = 4,608; q/k/v/out 4 x (1,152^2 + 1,152) = 5,313,024;
#     fc1 4,304 x 1,152 + 4,304 = 4,962,512; fc2 1,152 x 4,304 + 1,152 = 4,959,360
#     -> 15,239,504; x 27                                     =   411,466,608
#   post_layernorm 2 x 1,152                                  =         2,304
#   projector: mm_soft_emb_norm 1,152 + mm_input_projection_weight 1,152 x 5,376
#                                                             =     6,194,304
#   vision total                                              =   423,060,336
GEMMA3_VISION = 678_528 + 4_718_592 + 411_466_608 + 2_304 + 6_194_304
assert GEMMA3_VISION == 423_060_336


def test_medgemma_matches_its_pinned_index_exactly():
    # Text decoder (text_config: vocab 262,208, hidden 5,376, 62 layers, 32 q / 16 KV heads
    # x 128, MLP 21,504, tied): embedding 262,208 x 5,376 = 1,409,630,208; per layer q/o
    # 2 x 4,096 x 5,376 = 44,040,192, k/v 2 x 2,048 x 5,376 = 22,020,096, MLP 3 x 21,504 x
    # 5,376 = 346,816,512, q/k norms 256, four layer norms 21,504 -> 412,898,560; x 62 =
    # 25,599,710,720; final norm 5,376 -> 27,009,346,304. Plus the tower: 27,432,406,640
    # parameters x 2 B (bf16) = 54,864,813,280 B, the index's total_size.
    folder = ARCH / "gemma3/configs/google--medgemma-27b-it"
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    est, why = estimate_of(*load_config_dir(folder))
    assert est is not None, why
    assert _vision(est, "vision_tower.", "multi_modal_projector.") == GEMMA3_VISION
    assert param_count(est) == 27_009_346_304 + GEMMA3_VISION == 27_432_406_640
    assert est.total_bytes == index["metadata"]["total_size"] == 54_864_813_280
    # Every vision row names a tensor (or, for the merged q/k/v bias row, tensors) the index
    # stores, with the layer number in place of {r}.
    stored = {re.sub(r"\.(weight|bias)$", "", k) for k in index["weight_map"]}
    for r in est.rows:
        if r.module.startswith(("vision_tower.", "multi_modal_projector.")):
            path = re.sub(r"\.(bias|qkv_bias)$", "", r.module.replace("{r}", "0"))
            assert path in stored or path + ".q_proj" in stored, r.module


def test_gemma_3_27b_it_has_the_same_tower_and_gemma_3_1b_none():
    # gemma-3-27b-it's vision_config omits num_channels (SigLIP default 3): same shapes.
    est, _ = estimate_of(*load_config_dir(ARCH / "gemma3/configs/google--gemma-3-27b-it"))
    assert est.total_bytes == 54_864_813_280
    # gemma-3-1b-it (Gemma3ForCausalLM, text only): no vision rows.
    small, why = estimate_of(*load_config_dir(ARCH / "gemma3/configs/google--gemma-3-1b-it"))
    assert small is not None, why
    assert _vision(small, "vision_tower.", "multi_modal_projector.") == 0
    # A wrapper that does not say whether it has a tower, or has a pooling head, is refused.
    cfg, _ = load_config_dir(ARCH / "gemma3/configs/google--medgemma-27b-it")
    no_layers = json.loads(json.dumps(cfg))
    del no_layers["vision_config"]["num_hidden_layers"]
    refused, why = estimate_of(no_layers)
    assert refused is None and "mm_tokens_per_image" in why
    head = json.loads(json.dumps(cfg))
    head["vision_config"]["vision_use_head"] = True
    refused, why = estimate_of(head)
    assert refused is None and "vision_use_head" in why


# Llama 4 vision encoder (Scout and Maverick vision_config: hidden 1,408, MLP 5,632, 34
# layers, patch 14, image 336, 3 channels, pixel shuffle 0.5, projector 4,096 -> 4,096,
# output 4,096) and projector into the text hidden 5,120:
#   patch_embedding.linear 1,408 x (3 x 14 x 14 = 588)       =       827,904
#   class_embedding 1,408; positional_embedding_vlm ((336 / 14)^2 + 1 = 577) x 1,408 =
#     812,416; layernorm_pre/post 4 x 1,408 = 5,632           =       819,456
#   layer: q/k/v/o 4 x (1,408^2 + 1,408) = 7,935,488; fc1 5,632 x 1,408 + 5,632 =
#     7,935,488; fc2 1,408 x 5,632 + 1,408 = 7,931,264; two LayerNorms 5,632
#     -> 23,807,872; x 34                                     =   809,467,648
#   vision_adapter fc1 4,096 x 5,632 + fc2 4,096 x 4,096      =    39,845,888
#   multi_modal_projector.linear_1 5,120 x 4,096              =    20,971,520
#   vision total                                              =   871,932,416
LLAMA4_VISION = 827_904 + 819_456 + 809_467_648 + 39_845_888 + 20_971_520
assert LLAMA4_VISION == 871_932_416


def test_llama4_scout_counts_its_vision_encoder():
    # Text decoder 107,769,861,120 parameters (derived in test_weights_estimate_moe_families)
    # + the tower = 108,641,793,536 (Meta's "109B total parameters"), x 2 B.
    est, why = estimate_of(*load_config_dir(
        ARCH / "llama4/configs/meta-llama--Llama-4-Scout-17B-16E-Instruct"))
    assert est is not None, why
    assert _vision(est, "vision_model.", "multi_modal_projector.") == LLAMA4_VISION
    assert param_count(est) == 107_769_861_120 + LLAMA4_VISION == 108_641_793_536
    assert est.total_bytes == 108_641_793_536 * 2
    # The curated Maverick config has no vision_config: the text decoder alone.
    mav, _ = estimate_of(*load_config_dir(
        ARCH / "llama4/configs/meta-llama--Llama-4-Maverick-17B-128E-Instruct"))
    assert _vision(mav, "vision_model.", "multi_modal_projector.") == 0


def test_llama4_fp8_dynamic_keeps_the_ignored_vision_linears_at_bf16():
    # RedHatAI's FP8-dynamic Scout lists every vision linear and multi_modal_projector.linear_1
    # in `ignore`; Meta's FP8 Maverick ignores nothing, so its tower is FP8 (1 B per element
    # plus a 4-byte scale per output row).
    est, why = estimate_of(*load_config_dir(
        ARCH / "llama4/configs/RedHatAI--Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"))
    assert est is not None, why
    for suffix in ("patch_embedding.linear", "layers.{r}.self_attn.q_proj", "layers.{r}.mlp.fc1",
                   "vision_adapter.mlp.fc2", "multi_modal_projector.linear_1"):
        assert row_of(est, suffix).stored_as == "model dtype", suffix
    mav, _ = estimate_of(*load_config_dir(
        ARCH / "llama4/configs/meta-llama--Llama-4-Maverick-17B-128E-Instruct-FP8"))
    fc1 = row_of(mav, "layers.{r}.mlp.fc1")
    assert fc1.stored_as == "fp8" and fc1.bytes == 34 * (5632 * 1408 + 5632 * 4)


# Qwen3-VL vision tower (both pinned configs: depth 27, hidden 1,152, MLP 4,304, 3 channels,
# patch 16, temporal patch 2, 2,304 positions, merge 2, deepstack at layers 8, 16, 24):
#   patch_embed, pos_embed, 27 blocks, merger norm and fc1 (as Qwen3.5's tower, derived in
#   tests/test_weights_estimate_hybrid_families.py)                 =   437,132,016
#   merger fc2 into the decoder width: out x 4,608 + out
#   each deepstack merger: norm over 4,608 with bias 9,216; fc1 4,608^2 + 4,608 =
#     21,238,272; fc2 out x 4,608 + out
QWEN3_VL_FIXED = 437_132_016


def _qwen3_vl_tower(out: int) -> int:
    fc2 = out * 4608 + out
    return QWEN3_VL_FIXED + fc2 + 3 * (9_216 + 21_238_272 + fc2)


def test_qwen3_vl_32b_dense_with_deepstack_mergers():
    # Text (text_config: vocab 151,936, hidden 5,120, 64 layers, 64 q / 8 KV heads x 128, MLP
    # 25,600; wrapper tie_word_embeddings false):
    #   embedding + lm_head 2 x 151,936 x 5,120                     =  1,555,824,640
    #   layer: q, o 2 x 8,192 x 5,120 = 83,886,080; k, v 2 x 1,024 x 5,120 = 10,485,760;
    #     q/k norms 256; layer norms 10,240; MLP 3 x 25,600 x 5,120 = 393,216,000
    #     -> 487,598,336; x 64                                       = 31,206,293,504
    #   final norm 5,120 -> 32,762,123,264
    # Tower: 437,132,016 + fc2 23,598,080 + 3 x 44,845,568 = 595,266,800.
    # Total 33,357,390,064 (Qwen's "32B"; 33.4B), x 2 B.
    est, why = estimate_of(*load_config_dir(ARCH / "qwen3_vl/configs/Qwen--Qwen3-VL-32B-Instruct"))
    assert est is not None, why
    assert _vision(est, "model.visual.") == _qwen3_vl_tower(5120) == 595_266_800
    assert param_count(est) == 32_762_123_264 + 595_266_800 == 33_357_390_064
    assert est.total_bytes == 33_357_390_064 * 2
    assert row_of(est, "deepstack_merger_list.{r}.linear_fc1").instances == 3


def test_qwen3_vl_30b_a3b_routed_experts():
    # Text (vocab 151,936, hidden 2,048, 48 layers, 32 q / 4 KV heads x 128, 128 experts of
    # 768 on every layer, untied):
    #   embedding + lm_head 2 x 151,936 x 2,048                     =    622,329,856
    #   layer: q, o 2 x 4,096 x 2,048 = 16,777,216; k, v 2 x 512 x 2,048 = 2,097,152; norms
    #     256 + 4,096; router 128 x 2,048 = 262,144; experts 128 x 3 x 768 x 2,048 =
    #     603,979,776 -> 623,120,640; x 48                           = 29,909,790,720
    #   final norm 2,048 -> 30,532,122,624
    # Tower: 437,132,016 + fc2 9,439,232 + 3 x 30,686,720 = 538,631,408.
    # Total 31,070,754,032 (Qwen's "30B-A3B"; 31.1B), x 2 B.
    est, why = estimate_of(*load_config_dir(ARCH / "qwen3_vl/configs/Qwen--Qwen3-VL-30B-A3B-Instruct"))
    assert est is not None, why
    assert _vision(est, "model.visual.") == _qwen3_vl_tower(2048) == 538_631_408
    assert param_count(est) == 30_532_122_624 + 538_631_408 == 31_070_754_032
    experts = row_of(est, "mlp.experts.{e}.up_proj")
    assert experts.instances == 48 * 128 and experts.elements == 768 * 2048
    assert not any(r.module.endswith("mlp.gate_proj") for r in est.rows)
    # A text_config whose tie_word_embeddings disagrees with the wrapper is refused.
    cfg, _ = load_config_dir(ARCH / "qwen3_vl/configs/Qwen--Qwen3-VL-30B-A3B-Instruct")
    bad = json.loads(json.dumps(cfg))
    bad["text_config"]["tie_word_embeddings"] = True
    refused, why = estimate_of(bad)
    assert refused is None and "tie_word_embeddings" in why
