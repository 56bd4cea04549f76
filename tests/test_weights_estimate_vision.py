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
    # vLLM 0.19.0 printed "weights memory: 51.45GiB" for gemma-3-27b-it at TP1 on H100
    # (tests/fixtures/engine_logs/vllm-0.19.0-gemma-3-27b-it-h100-tp1.yaml): the estimate,
    # 54,864,813,280 B = 51.10 GiB, is 0.35 GiB (0.7%) below it; without the tower it was
    # 50.31 GiB, 2.2% below. The remainder is not a checkpoint tensor (most likely vLLM's
    # RoPE cos/sin caches, which the index does not hold).
    printed = 51.45 * GIB
    assert 0 < printed - est.total_bytes < 0.01 * printed
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


# Gemma 4 vision tower (both pinned configs: 27 layers, hidden 1,152, 16 heads / 16 KV heads
# x 72, MLP 4,304, patch 16, 10,240 positions, standardize, no clipped linears):
#   patch_embedder.input_proj 1,152 x (3 x 16^2 = 768)           =       884,736
#   position_embedding_table 2 x 10,240 x 1,152                  =    23,592,960
#   layer: q/k/v/o 4 x 1,152 x 1,152 = 5,308,416; q/k norms 2 x 72 = 144; four RMSNorms
#     4,608; MLP 3 x 4,304 x 1,152 = 14,874,624 -> 20,187,792; x 27 = 545,070,384
#   std_bias + std_scale 2 x 1,152                               =         2,304
#   -> 569,550,384, plus embed_vision.embedding_projection text hidden x 1,152.
GEMMA4_TOWER = 884_736 + 23_592_960 + 545_070_384 + 2_304
assert GEMMA4_TOWER == 569_550_384


def test_gemma4_26b_a4b_moe_block_and_tower():
    # text_config: vocab 262,144, hidden 2,816, 30 layers (full at 5, 11, 17, 23, 29), 16 q
    # heads; sliding layers 8 KV heads x 256, full layers global_head_dim 512 with
    # attention_k_eq_v and 2 global KV heads (no v_proj); dense MLP 2,112 on every layer plus
    # the MoE block (128 experts of 704); tied; no PLE (hidden_size_per_layer_input 0).
    #   embedding 262,144 x 2,816                                   =    738,197,504
    #   every layer: four norms 11,264 + layer_scalar 1; MLP 3 x 2,112 x 2,816 = 17,842,176;
    #     router proj 128 x 2,816 = 360,448, scale 2,816, per_expert_scale 128; experts
    #     128 x (1,408 x 2,816 + 2,816 x 704) = 761,266,176; three norms 8,448
    #     -> 779,491,457; x 30                                      = 23,384,743,710
    #   sliding attention: q, o 2 x 4,096 x 2,816 = 23,068,672; k, v 2 x 2,048 x 2,816 =
    #     11,534,336; q/k norms 512 -> 34,603,520; x 25              =    865,088,000
    #   full attention: q, o 2 x 8,192 x 2,816 = 46,137,344; k 1,024 x 2,816 = 2,883,584;
    #     q/k norms 1,024 -> 49,021,952; x 5                         =    245,109,760
    #   final norm 2,816 -> text 25,233,141,790
    #   tower 569,550,384 + embed_vision 2,816 x 1,152 = 3,244,032   =    572,794,416
    #   total 25,805,936,206 (Google's "26B"), x 2 B
    est, why = estimate_of(*load_config_dir(ARCH / "gemma4/configs/google--gemma-4-26B-A4B"))
    assert est is not None, why
    assert _vision(est, "model.vision_tower.", "model.embed_vision.") == 572_794_416
    assert param_count(est) == 25_233_141_790 + 572_794_416 == 25_805_936_206
    assert est.total_bytes == 25_805_936_206 * 2
    # k_eq_v: no v_proj on the 5 full layers; the routed experts are rows of their own.
    v_rows = [r for r in est.rows if r.module.endswith("self_attn.v_proj")]
    assert [r.instances for r in v_rows] == [25]
    assert row_of(est, "experts.{e}.gate_up_proj").instances == 30 * 128
    # NVIDIA's NVFP4 copy excludes every layer's mlp*, router* and self_attn*, the vision
    # tower and embed_vision: only the routed experts are NVFP4.
    nv, why = estimate_of(*load_config_dir(ARCH / "gemma4/configs/nvidia--Gemma-4-26B-A4B-NVFP4"))
    assert nv is not None, why
    assert row_of(nv, "experts.{e}.gate_up_proj").stored_as == "nvfp4"
    for suffix in ("mlp.gate_proj", "router.proj", "self_attn.k_proj", "mlp.gate_proj.linear",
                   "embed_vision.embedding_projection"):
        assert row_of(nv, suffix).stored_as == "model dtype", suffix


def test_gemma4_31b_dense():
    # text_config: vocab 262,144, hidden 5,376, 60 layers (10 full), 32 q heads; sliding 16
    # KV heads x 256, full 4 global KV heads x 512 with k_eq_v; MLP 21,504; tied; no MoE.
    #   embedding 262,144 x 5,376                                   =  1,409,286,144
    #   every layer: norms 21,504 + 1; MLP 3 x 21,504 x 5,376 = 346,816,512 -> 346,838,017;
    #     x 60                                                       = 20,810,281,020
    #   sliding: q, o 2 x 8,192 x 5,376 = 88,080,384; k, v 2 x 4,096 x 5,376 = 44,040,192;
    #     norms 512 -> 132,121,088; x 50                             =  6,606,054,400
    #   full: q, o 2 x 16,384 x 5,376 = 176,160,768; k 2,048 x 5,376 = 11,010,048; norms
    #     1,024 -> 187,171,840; x 10                                 =  1,871,718,400
    #   final norm 5,376 -> text 30,697,345,340
    #   tower 569,550,384 + embed_vision 5,376 x 1,152 = 6,193,152   =    575,743,536
    #   total 31,273,088,876 (Google's "31B")
    est, why = estimate_of(*load_config_dir(ARCH / "gemma4/configs/nvidia--Gemma-4-31B-IT-NVFP4"))
    assert est is not None, why
    assert param_count(est) == 30_697_345_340 + 575_743_536 == 31_273_088_876
    assert not any(".experts." in r.module or ".router." in r.module for r in est.rows)
    # The NVFP4 `ignore` list keeps attention, the tower and lm_head at bf16; MLPs are NVFP4.
    assert row_of(est, "mlp.down_proj").stored_as == "nvfp4"
    assert row_of(est, "self_attn.o_proj").stored_as == "model dtype"


def test_gemma4_kv_shared_tail_and_per_layer_embeddings():
    # Synthetic 12-layer text config (full at 5 and 11; layers 8-11 share KV; no k_eq_v) with
    # the Gemma4TextConfig class defaults for the rest: hidden 2,304, MLP 9,216, vocab
    # 262,144, hidden_size_per_layer_input 256, tied.
    cfg = json.loads((ARCH / "gemma4/configs/synthetic/synthetic--gemma4-kv-shared-tail.json").read_text())
    est, why = estimate_of(cfg)
    assert est is not None, why
    counts = {}
    for r in est.rows:
        key = r.module.rsplit(".", 1)[-1]
        counts[key] = counts.get(key, 0) + r.instances
    # q_proj on all 12 layers; k_proj / v_proj / k_norm only on the 8 that own a cache
    assert counts["q_proj"] == 12 and counts["k_proj"] == counts["v_proj"] == 8
    # PLE: embed_tokens_per_layer 262,144 x (12 x 256 = 3,072), projection 3,072 x 2,304
    assert row_of(est, "embed_tokens_per_layer").elements == 262_144 * 3_072
    assert row_of(est, "per_layer_input_gate").instances == 12
    # use_double_wide_mlp doubles the MLP of the 4 KV-shared layers only:
    # 4 x 3 x 9,216 x 2,304 more parameters.
    wide, _ = estimate_of(cfg | {"use_double_wide_mlp": True})
    assert param_count(wide) - param_count(est) == 4 * 3 * 9216 * 2304
