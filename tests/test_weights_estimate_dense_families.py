"""Config-shape weight estimates for the dense decoder specs (gemma, phi3, phi3small, granite,
cohere2, starcoder2, olmo2, chatglm, mimo, nemotron-nas).

No pinned safetensors index exists for these checkpoints, so every expected total is a
parameter count derived by hand from the pinned config (derivations in comments), compared
with the size the model's name or card states, and x 2 B for bf16.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"


def _est(family: str, name: str):
    est, why = estimate_of(*load_config_dir(ARCH / family / "configs" / name))
    assert est is not None, why
    assert family in why
    return est


def test_gemma_7b_ties_its_head():
    # gemma-7b: vocab 256,000, hidden 3,072, 28 layers, 16 q / 16 KV heads x 256 (4,096 wide,
    # not hidden), MLP 24,576, tied (no lm_head stored).
    #   embedding 256,000 x 3,072                                   =    786,432,000
    #   layer: q, k, v 3 x 4,096 x 3,072 = 37,748,736; o 3,072 x 4,096 = 12,582,912; MLP
    #     3 x 24,576 x 3,072 = 226,492,416; norms 2 x 3,072 -> 276,830,208; x 28
    #                                                                =  7,751,245,824
    #   final norm 3,072; total 8,537,680,896 (Google's "8.54B")
    est = _est("gemma", "google--gemma-7b")
    assert param_count(est) == 8_537_680_896
    assert est.total_bytes == 8_537_680_896 * 2
    assert not any(r.module == "lm_head" for r in est.rows)


def test_phi3_mini_fused_projections_and_their_tp_split():
    # Phi-3-mini-128k: vocab 32,064, hidden 3,072, 32 layers, 32 q / 32 KV heads x 96, MLP
    # 8,192, untied.
    #   embedding + lm_head 2 x 32,064 x 3,072                      =    197,001,216
    #   layer: qkv_proj 9,216 x 3,072 = 28,311,552; o 3,072^2 = 9,437,184; gate_up 16,384 x
    #     3,072 = 50,331,648; down 3,072 x 8,192 = 25,165,824; norms 6,144 -> 113,252,352;
    #     x 32                                                       =  3,624,075,264
    #   final norm 3,072; total 3,821,079,552 (Microsoft's "3.8B")
    est = _est("phi3", "microsoft--Phi-3-mini-128k-instruct")
    assert param_count(est) == 3_821_079_552
    assert est.total_bytes == 3_821_079_552 * 2
    # TP4: the norms (32 x 6,144 + 3,072 = 199,680 values) stay whole; the rest splits 4 ways
    # (the 32 KV heads of the fused qkv_proj divide by 4 too).
    replicated = 199_680 * 2
    assert est.rank_bytes(4) == (est.total_bytes - replicated) // 4 + replicated
    # The fused qkv_proj is two rows under its one name: the query rows (3,072 x 3,072,
    # split over TP) and the key/value rows (6,144 x 3,072, split by KV heads).
    qkv = [r for r in est.rows if r.module.endswith("self_attn.qkv_proj")]
    assert [(r.elements, r.split) for r in qkv] == [(3072 * 3072, "tp"), (6144 * 3072, "heads")]


def test_phi3_small_biases_layernorms_and_tied_head():
    # Phi-3-small-8k: vocab 100,352, hidden 4,096, 32 layers, 32 q / 8 KV heads x 128,
    # ff_intermediate_size 14,336, biases everywhere, LayerNorms, tied.
    #   embedding 100,352 x 4,096                                   =    411,041,792
    #   layer: query_key_value 6,144 x 4,096 + 6,144 = 25,171,968; dense 4,096^2 + 4,096 =
    #     16,781,312; up_proj 28,672 x 4,096 + 28,672 = 117,469,184; down_proj 4,096 x
    #     14,336 + 4,096 = 58,724,352; two LayerNorms 4 x 4,096 = 16,384 -> 218,163,200;
    #     x 32                                                       =  6,981,222,400
    #   final_layernorm 8,192; total 7,392,272,384 (Microsoft's "7B", 7.39B)
    est = _est("phi3small", "microsoft--Phi-3-small-8k-instruct")
    assert param_count(est) == 7_392_272_384
    assert est.total_bytes == 7_392_272_384 * 2
    cfg, _ = load_config_dir(ARCH / "phi3small/configs/microsoft--Phi-3-small-8k-instruct")
    refused, why = estimate_of(cfg | {"ff_dim_multiplier": 2.5})
    assert refused is None and "ff_dim_multiplier" in why


def test_granite_3_3_8b():
    # granite-3.3-8b-instruct: vocab 49,159, hidden 4,096, 40 layers, 32 q / 8 KV heads x 128,
    # MLP 12,800, no biases, tied.
    #   embedding 49,159 x 4,096                                    =    201,355,264
    #   layer: q, o 2 x 4,096^2 = 33,554,432; k, v 2 x 1,024 x 4,096 = 8,388,608; MLP
    #     3 x 12,800 x 4,096 = 157,286,400; norms 8,192 -> 199,237,632; x 40
    #                                                                =  7,969,505,280
    #   final norm 4,096; total 8,170,864,640 (IBM's "8B", 8.17B)
    est = _est("granite", "ibm-granite--granite-3.3-8b-instruct")
    assert param_count(est) == 8_170_864_640
    assert est.total_bytes == 8_170_864_640 * 2


def test_command_a_parallel_block_one_norm_per_layer():
    # c4ai-command-a-03-2025: vocab 256,000, hidden 12,288, 64 layers, 96 q / 8 KV heads x 128,
    # MLP 36,864, one LayerNorm (weight only) per layer, tied.
    #   embedding 256,000 x 12,288                                  =  3,145,728,000
    #   layer: q, o 2 x 12,288^2 = 301,989,888; k, v 2 x 1,024 x 12,288 = 25,165,824; MLP
    #     3 x 36,864 x 12,288 = 1,358,954,496; norm 12,288 -> 1,686,122,496; x 64
    #                                                                = 107,911,839,744
    #   final norm 12,288; total 111,057,580,032 (Cohere's "111B")
    est = _est("cohere2", "CohereLabs--c4ai-command-a-03-2025")
    assert param_count(est) == 111_057_580_032
    assert est.total_bytes == 111_057_580_032 * 2


def test_starcoder2_3b_biases_and_layernorms():
    # starcoder2-3b: vocab 49,152, hidden 3,072, 30 layers, 24 q / 2 KV heads x 128, MLP
    # 12,288 (c_fc, c_proj), use_bias, LayerNorms with bias, tied.
    #   embedding 49,152 x 3,072                                    =    150,994,944
    #   layer: q 3,072^2 + 3,072 = 9,440,256; k, v 2 x (256 x 3,072) + 512 = 1,573,376; o
    #     3,072^2 + 3,072 = 9,440,256; c_fc 12,288 x 3,072 + 12,288 = 37,761,024; c_proj
    #     3,072 x 12,288 + 3,072 = 37,751,808; two LayerNorms 12,288 -> 95,979,008; x 30
    #                                                                =  2,879,370,240
    #   final LayerNorm 6,144; total 3,030,371,328 (BigCode's "3B", 3.03B)
    est = _est("starcoder2", "bigcode--starcoder2-3b")
    assert param_count(est) == 3_030_371_328
    assert est.total_bytes == 3_030_371_328 * 2
    # TP4: k/v weights and biases (2 KV heads) split over min(4, 2) ranks; replicated are
    # the LayerNorms (30 x 12,288 + 6,144 = 374,784 values) and the o_proj / c_proj biases
    # (30 x 2 x 3,072 = 184,320).
    kv = 30 * (2 * 256 * 3072 + 512) * 2
    replicated = (374_784 + 184_320) * 2
    assert est.rank_bytes(4) == (est.total_bytes - kv - replicated) // 4 + kv // 2 + replicated


def test_olmo2_class_defaults():
    # The synthetic class-defaults config (hidden 4,096, 32 layers, 32 heads) takes
    # Olmo2Config's vocab 50,304, MLP 11,008, KV heads = heads, untied.
    #   embedding + lm_head 2 x 50,304 x 4,096                      =    412,090,368
    #   layer: q/k/v/o 4 x 4,096^2 = 67,108,864; q_norm, k_norm 2 x 4,096; post-attention
    #     and post-feedforward norms 2 x 4,096; MLP 3 x 11,008 x 4,096 = 135,266,304
    #     -> 202,391,552; x 32                                      =  6,476,529,664
    #   final norm 4,096; total 6,888,624,128
    # (OLMo-2-1124-7B's vocab 100,352 gives 7,298,617,344, AllenAI's "7B" / 7.30B.)
    est = _est("olmo2", "synthetic--olmo2-class-defaults")
    assert param_count(est) == 6_888_624_128
    assert row_of(est, "self_attn.q_norm").elements == 4096
    cfg, _ = load_config_dir(ARCH / "olmo2/configs/synthetic--olmo2-class-defaults")
    seven, _ = estimate_of(cfg | {"vocab_size": 100352})
    assert param_count(seven) == 7_298_617_344


def test_glm_4_9b_multi_query_groups_and_its_output_layer():
    # glm-4-9b: padded vocab 151,552, hidden 4,096, 40 layers, 32 q heads / 2 multi-query
    # groups x 128, ffn 13,696, qkv bias only, RMSNorm, untied output_layer.
    #   word_embeddings + output_layer 2 x 151,552 x 4,096          =  1,241,513,984
    #   rotary inv_freq 128 / 4                                     =             32
    #   layer: query_key_value 4,608 x 4,096 + 4,608 = 18,878,976; dense 4,096^2 =
    #     16,777,216; dense_h_to_4h 27,392 x 4,096 = 112,197,632; dense_4h_to_h 4,096 x
    #     13,696 = 56,098,816; norms 8,192 -> 203,960,832; x 40      =  8,158,433,280
    #   final_layernorm 4,096; total 9,399,951,392 (THUDM's "9B", 9.40B)
    est = _est("chatglm", "THUDM--glm-4-9b")
    assert param_count(est) == 9_399_951_392
    assert est.total_bytes == 9_399_951_392 * 2
    # TP2: everything splits 2 ways but the norms and inv_freq (40 x 8,192 + 4,096 + 32).
    replicated = (40 * 8192 + 4096 + 32) * 2
    assert est.rank_bytes(2) == (est.total_bytes - replicated) // 2 + replicated


def test_mimo_7b_leaves_its_mtp_layer_out():
    # MiMo-7B-Base: vocab 151,680, hidden 4,096, 36 layers, 32 q / 8 KV heads x 128, MLP
    # 11,008, q/k/v biases (Qwen2), untied.
    #   embedding + lm_head 2 x 151,680 x 4,096                     =  1,242,562,560
    #   layer: q, o 2 x 4,096^2 = 33,554,432; k, v 2 x 1,024 x 4,096 = 8,388,608; biases
    #     6,144; MLP 3 x 11,008 x 4,096 = 135,266,304; norms 8,192 -> 177,223,680; x 36
    #                                                                =  6,380,052,480
    #   final norm 4,096; total 7,622,619,136
    # The checkpoint also stores one MTP layer (177,223,680 + token/hidden/final norms
    # 12,288 + input_proj 4,096 x 8,192 = 33,554,432 -> 210,790,400; with it 7,833,409,536,
    # Xiaomi's "7.8B"), which vLLM's MiMoForCausalLM skips: counted only with `mtp`.
    est = _est("mimo", "XiaomiMiMo--MiMo-7B-Base")
    assert param_count(est) == 7_622_619_136
    assert est.total_bytes == 7_622_619_136 * 2
    assert not any("mtp_layers" in r.module for r in est.rows)


def test_nemotron_super_49b_per_layer_blocks():
    # Llama-3.3-Nemotron-Super-49B-v1: vocab 128,256, hidden 8,192, 80 layers, 64 q heads x
    # 128; block_configs: 49 attention layers (8 KV heads), 31 without attention; FFN widths
    # int(2 x mult x 8,192 / 3) up to a multiple of 256: 5.25 -> 28,672 (49 layers), 2.625 ->
    # 14,336 (6), 1.3125 -> 7,168 (10), 1.0 -> 5,461 -> 5,632 (8), 0.5 -> 2,730 -> 2,816 (6),
    # 3.28125 -> 17,920 (1); untied.
    #   embedding + lm_head 2 x 128,256 x 8,192                     =  2,101,346,304
    #   attention: q, o 2 x 8,192^2 = 134,217,728; k, v 2 x 1,024 x 8,192 = 16,777,216;
    #     input_layernorm 8,192 -> 151,003,136; x 49                 =  7,399,153,664
    #   MLPs 3 x 8,192 x (49 x 28,672 + 6 x 14,336 + 10 x 7,168 + 8 x 5,632 + 6 x 2,816
    #     + 17,920 = 1,642,496)                                      = 40,365,981,696
    #   post_attention_layernorm 80 x 8,192 + final norm 8,192      =        663,552
    #   total 49,867,145,216 (NVIDIA's "49B", 49.9B)
    est = _est("nemotron-nas", "nvidia--Llama-3_3-Nemotron-Super-49B-v1")
    assert 49 * 28672 + 6 * 14336 + 10 * 7168 + 8 * 5632 + 6 * 2816 + 17920 == 1_642_496
    assert param_count(est) == 49_867_145_216
    assert est.total_bytes == 49_867_145_216 * 2
    assert row_of(est, "self_attn.q_proj").instances == 49
    # An FFN multiplier the spec has no width set for is refused, not guessed.
    cfg, _ = load_config_dir(ARCH / "nemotron-nas/configs/nvidia--Llama-3_3-Nemotron-Super-49B-v1")
    odd = json.loads(json.dumps(cfg))
    odd["block_configs"][3]["ffn"]["ffn_mult"] = 2.0
    refused, why = estimate_of(odd)
    assert refused is None and "ffn_mult" in why
