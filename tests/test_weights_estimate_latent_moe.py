"""Config-shape weight estimates for kimi_k25, glm4_moe_lite, minicpm3, phimoe and qwen2_moe.

No safetensors index of these checkpoints is pinned: every expected total is derived by hand
from the pinned config (derivations in comments) and compared with the published parameter
count where one exists. nvfp4 = half a byte per element + one FP8 scale per 16 + 8 B;
int4-pack = half a byte + a 16-bit scale per 32 + 8 B (specs/quant/weight_storage.yaml).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"


def _load(spec: str, name: str):
    return load_config_dir(ARCH / spec / "configs" / name)


def test_kimi_k25_text_decoder_int4_and_nvfp4():
    # Pinned moonshotai/Kimi-K2.5 text_config: the Kimi-K2 shapes (hidden 7,168, 61 layers,
    # first_k_dense_replace 1, 64 heads, 384 experts of 2,048 + 1 shared, vocab 163,840) with
    # compressed-tensors int4 (group 32) on the routed experts; test_weights_estimate_mla_
    # families.py derives 594,205,904,896 B for exactly this text model (routed experts
    # 570,761,441,280 + bf16 23,444,371,456 + float32 bias 92,160). Here under the wrapper's
    # language_model. names, which the declaration's regexes match the same way. Plus the
    # bf16 MoonViT tower and projector, 471,143,920 values x 2 B = 942,287,840 B (derived in
    # tests/test_weights_estimate_vision_moe.py): 595,148,192,736 B.
    est, why = estimate_of(*_load("kimi_k25", "moonshotai--Kimi-K2.5"))
    assert est is not None, why
    assert est.total_bytes == 594_205_904_896 + 942_287_840 == 595_148_192_736
    assert all(r.module.startswith(("language_model.model.", "language_model.lm_head",
                                    "vision_tower.", "mm_projector.")) for r in est.rows)
    assert row_of(est, "mlp.experts.{e}.gate_proj").stored_as == "int4-pack"
    # nvidia/Kimi-K2.5-NVFP4: NVFP4 on every linear except each layer's self_attn*, the
    # lm_head, vision tower and projector - so the shared experts and the dense layer-0 MLP
    # are NVFP4 too.
    #   embed + lm_head + norm (2 x 163,840 x 7,168 + 7,168) x 2 B  =    4,697,634,816
    #   layer norms 61 x 2 x 7,168 x 2 B                            =        1,748,992
    #   attention bf16 101,124,096 values x 2 B x 61                =   12,337,139,712
    #   dense MLP 3 x (18,432 x 7,168 / 2 + 18,432 x 448 + 8) = 222,953,496
    #   MoE layer: (384 + 1) x 3 x (2,048 x 7,168 / 2 + 2,048 x 448 + 8 = 8,257,544) +
    #     router 384 x 7,168 x 2 + bias 384 x 4 = 9,542,969,880; x 60 = 572,578,192,800
    #   text decoder total                                          =  589,837,669,816
    #   + the tower and projector (excluded from NVFP4: bf16)       =      942,287,840
    nv, why = estimate_of(*_load("kimi_k25", "nvidia--Kimi-K2.5-NVFP4"))
    assert nv is not None, why
    assert nv.total_bytes == 589_837_669_816 + 942_287_840
    assert row_of(nv, "self_attn.kv_b_proj").stored_as == "model dtype"
    assert row_of(nv, "shared_experts.down_proj").stored_as == "nvfp4"


def test_glm47_flash_matches_30b():
    # Pinned CURATED zai-org/GLM-4.7-Flash: hidden 2,048, 47 layers (first_k_dense_replace
    # 1), 20 heads, q_lora 768, kv_lora 512, qk 192 + 64, v 256, MLP 10,240, 64 experts of
    # 1,536 + 1 shared, vocab 154,880, untied, bf16.
    #   embed + lm_head 2 x 154,880 x 2,048                          =      634,388,480
    #   attention: q_a 768 x 2,048 = 1,572,864, q_a norm 768, q_b 5,120 x 768 = 3,932,160,
    #     kv_a 576 x 2,048 = 1,179,648, kv_a norm 512, kv_b 8,960 x 512 = 4,587,520, o 2,048
    #     x 5,120 = 10,485,760 -> 21,759,232; x 47                   =    1,022,683,904
    #   dense MLP 3 x 10,240 x 2,048                                 =       62,914,560
    #   MoE: 65 x 3 x 1,536 x 2,048 = 613,416,960, router 131,072, bias 64 -> 613,548,096;
    #     x 46                                                       =   28,223,212,416
    #   norms 47 x 2 x 2,048 + 2,048                                 =          194,560
    #   total 29,943,393,920 ("30B-A3B"; the MTP layer is left out); bytes x 2 plus 2 B for
    #   each float32 bias value (46 x 64): 59,886,787,840 + 5,888 = 59,886,793,728.
    est, why = estimate_of(*_load("glm4_moe_lite", "zai-org--GLM-4.7-Flash"))
    assert est is not None, why
    assert param_count(est) == 29_943_393_920
    assert est.total_bytes == 59_886_793_728
    assert row_of(est, "e_score_correction_bias").stored_as == "4 B"


def test_minicpm3_4b_is_tied_by_default():
    # Pinned openbmb/MiniCPM3-4B: hidden 2,560, 62 layers, 40 heads, q_lora 768, kv_lora 256,
    # qk 64 + 32, v_head_dim absent (-> qk_nope 64), MLP 6,400, vocab 73,448, no
    # tie_word_embeddings key (MiniCPM3Config default True: no lm_head).
    #   embedding 73,448 x 2,560                                     =      188,026,880
    #   per layer: q_a 768 x 2,560 = 1,966,080, q_a norm 768, q_b 3,840 x 768 = 2,949,120,
    #     kv_a 288 x 2,560 = 737,280, kv_a norm 256, kv_b 5,120 x 256 = 1,310,720, o 2,560 x
    #     2,560 = 6,553,600, MLP 3 x 6,400 x 2,560 = 49,152,000, norms 5,120 -> 62,674,944;
    #     x 62                                                       =    3,885,846,528
    #   final norm 2,560 -> 4,073,875,968 parameters ("4B"); x 2 B = 8,147,751,936.
    cfg, hf = _load("minicpm3", "openbmb--MiniCPM3-4B")
    est, why = estimate_of(cfg, hf)
    assert est is not None, why
    assert param_count(est) == 4_073_875_968
    assert est.total_bytes == 8_147_751_936
    untied, _ = estimate_of(cfg | {"tie_word_embeddings": False})
    assert untied.total_bytes - est.total_bytes == 188_026_880 * 2


def test_phi35_moe_matches_42b():
    # Pinned microsoft/Phi-3.5-MoE-instruct: hidden 4,096, 32 layers, 32 q / 8 KV heads x
    # 128, attention and lm_head biases, LayerNorms with bias, 16 experts of 6,400, vocab
    # 32,064, untied, bf16.
    #   embedding 32,064 x 4,096 = 131,334,144; lm_head the same + bias 32,064
    #   per layer: q and o 2 x (16,777,216 + 4,096), k and v 2 x (4,194,304 + 1,024) =
    #     41,953,280; norms 2 x 2 x 4,096 = 16,384; router 16 x 4,096 = 65,536; experts
    #     16 x 3 x 6,400 x 4,096 = 1,258,291,200 -> 1,300,326,400; x 32 = 41,610,444,800
    #   final norm 8,192 -> 41,873,153,344 parameters (Microsoft's "42B"); x 2 B.
    est, why = estimate_of(*_load("phimoe", "microsoft--Phi-3.5-MoE-instruct"))
    assert est is not None, why
    assert param_count(est) == 41_873_153_344
    assert est.total_bytes == 41_873_153_344 * 2


def test_qwen2_moe_needs_its_sizes_declared():
    # The only qwen2_moe config in tests/ is SYNTHETIC (no real Qwen2-MoE config is pinned)
    # and declares no vocabulary or MoE widths: the estimate names what is missing.
    cfg = json.loads((ARCH / "qwen2_moe" / "configs" / "synthetic--qwen2-moe-small"
                      / "config.json").read_text())
    est, why = estimate_of(cfg)
    assert est is None and "vocab_size" in why
    # With widths added by hand (still synthetic): hidden 2,048, 24 layers, 16 q / 16 KV heads
    # x 128, 60 experts of 1,408, shared expert 5,632, vocab 151,936, untied.
    #   embed + lm_head 2 x 151,936 x 2,048                          =      622,329,856
    #   per layer: q, k, v 3 x (4,194,304 + 2,048 bias), o 4,194,304 = 16,783,360; norms
    #     4,096; router 60 x 2,048 = 122,880; experts 60 x 3 x 1,408 x 2,048 = 519,045,120;
    #     shared 3 x 5,632 x 2,048 = 34,603,008, its gate 2,048 -> 570,560,512; x 24
    #                                                                =   13,693,452,288
    #   final norm 2,048 -> 14,315,784,192 parameters.
    sized = cfg | {"vocab_size": 151_936, "moe_intermediate_size": 1_408,
                   "shared_expert_intermediate_size": 5_632}
    est, why = estimate_of(sized)
    assert est is not None, why
    assert param_count(est) == 14_315_784_192
    refused, why = estimate_of(sized | {"mlp_only_layers": [0]})
    assert refused is None and "mlp_only_layers" in why


def test_mimo_v2_flash_fp8_matches_309b():
    # Pinned XiaomiMiMo/MiMo-V2-Flash: hidden 4,096, 48 layers (hybrid_layer_pattern: 9 full,
    # 39 sliding; moe_layer_freq: layer 0 dense, 47 MoE), full 64 q / 4 KV heads, sliding 64 q
    # / 8 KV heads, K head_dim 192, V 128, SWA attention sinks, 256 experts of 2,048, dense
    # MLP 16,384, vocab 152,576, untied; fp8 [128, 128] blocks (float32 scales).
    # fp8(r, c) = r x c + ceil(r/128) x ceil(c/128) x 4.
    #   embed + lm_head + norm (2 x 152,576 x 4,096 + 4,096) x 2 B   =    2,499,813,376
    #   layer norms 48 x 2 x 4,096 x 2 B                             =          786,432
    #   full layer: q fp8(12,288, 4,096) 50,343,936 + k fp8(768, 4,096) 3,146,496 + v
    #     fp8(512, 4,096) 2,097,664 + o fp8(4,096, 8,192) 33,562,624 = 89,150,720; x 9
    #                                                                =      802,356,480
    #   sliding layer: q 50,343,936 + k fp8(1,536, 4,096) 6,292,992 + v fp8(1,024, 4,096)
    #     4,195,328 + o 33,562,624 + sinks 64 x 2 = 94,395,008; x 39 =    3,681,405,312
    #   dense MLP 3 x fp8(16,384, 4,096) = 3 x 67,125,248             =      201,375,744
    #   MoE layer: float32 router 256 x 4,096 x 4 + bias 256 x 4 = 4,195,328; experts 256 x 3
    #     x fp8(2,048, 4,096) = 256 x 3 x 8,390,656 = 6,444,023,808 -> 6,448,219,136; x 47
    #                                                                =  303,066,299,392
    #   total                                                        =  310,252,036,736 B
    # (308,778,780,864 parameters: Xiaomi's "309B total"; the MTP modules are left out).
    est, why = estimate_of(*_load("mimo_v2_flash", "XiaomiMiMo--MiMo-V2-Flash"))
    assert est is not None, why
    assert param_count(est) == 308_778_780_864
    assert est.total_bytes == 310_252_036_736
    assert row_of(est, "attention_sink_bias").instances == 39
    assert row_of(est, "mlp.gate").stored_as == "4 B"
