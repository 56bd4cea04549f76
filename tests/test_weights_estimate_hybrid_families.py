"""Config-shape weight estimates for the hybrid Gated DeltaNet specs (qwen3_next, qwen3_5).

Every expected total is derived by hand from a pinned config (derivations in comments). No
pinned safetensors index exists for these checkpoints, so the checks are parameter counts
(compared with the size in the model's name) and bf16 bytes. The multi-token-prediction
module (mtp.*) is loaded only by the draft model and left out of every estimate.
"""

from __future__ import annotations

from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"


_load, _estimate, _params, _row = load_config_dir, estimate_of, param_count, row_of


def test_qwen3_next_80b_matches_80b():
    # Pinned Qwen3-Next-80B-A3B-Thinking: hidden 2,048, 48 layers (interval 4: 12 full + 36
    # GDN), 16 q / 2 KV heads x 256, GDN 16 key / 32 value heads x 128 (key_dim 2,048,
    # value_dim 4,096), conv 4, 512 experts of 512 + a shared expert of 512, vocab 151,936,
    # untied, bf16.
    #   embedding + lm_head 2 x 151,936 x 2,048                      =    622,329,856
    #   full attention: gated q 8,192 x 2,048 = 16,777,216; k, v 2 x 512 x 2,048 =
    #     2,097,152; o 2,048 x 4,096 = 8,388,608; q/k norms 512 -> 27,263,488; x 12
    #                                                                =    327,161,856
    #   GDN: in_proj_qkvz 12,288 x 2,048 = 25,165,824; in_proj_ba 64 x 2,048 = 131,072;
    #     conv1d 8,192 x 4 = 32,768; dt_bias + A_log 64; norm 128; out_proj 2,048 x 4,096
    #     = 8,388,608 -> 33,718,464; x 36                            =  1,213,864,704
    #   MoE: 512 x 3 x 512 x 2,048 = 1,610,612,736; router 512 x 2,048 = 1,048,576; shared
    #     expert 3 x 512 x 2,048 = 3,145,728; shared_expert_gate 2,048 -> 1,614,809,088;
    #     x 48                                                       = 77,510,836,224
    #   layer norms 48 x 2 x 2,048 + final norm 2,048                =        198,656
    #   total                                                        = 79,674,391,296
    est, why = _estimate(*_load(ARCH / "qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking"))
    assert est is not None, why
    assert _params(est) == 79_674_391_296
    assert est.total_bytes == 79_674_391_296 * 2
    assert "qwen3_next" in why
    # TP=4: k/v (2 KV heads) split over min(4, 2) ranks; replicated are the norms (48 x
    # 4,096 + 12 x 512 + 36 x 128 + 2,048 values), the routers (48 x 1,048,576) and the
    # shared-expert gates (48 x 2,048): 50,639,360 values = 101,278,720 B.
    kv = 2 * 12 * 512 * 2048 * 2
    replicated = (48 * 4096 + 12 * 512 + 36 * 128 + 2048 + 48 * 1_048_576 + 48 * 2048) * 2
    assert replicated == 101_278_720
    assert est.rank_bytes(4) == (est.total_bytes - kv - replicated) // 4 + kv // 2 + replicated
    refused, why = _estimate(_load(ARCH / "qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking")[0]
                             | {"mlp_only_layers": [0]})
    assert refused is None and "mlp_only_layers" in why


# The Qwen3.5 vision tower (every pinned config: depth 27, hidden 1,152, MLP 4,304, 3
# channels, patch 16, temporal patch 2, 2,304 positions, merge 2, no deepstack):
#   patch_embed Conv3d 1,152 x 3 x 2 x 16 x 16 = 1,769,472 + bias 1,152 = 1,770,624
#   pos_embed 2,304 x 1,152                                             = 2,654,208
#   block: norm1/norm2 with biases 4 x 1,152 = 4,608; qkv 3,456 x 1,152 + 3,456 =
#     3,984,768; proj 1,152 x 1,152 + 1,152 = 1,328,256; fc1 4,304 x 1,152 + 4,304 =
#     4,962,512; fc2 1,152 x 4,304 + 1,152 = 4,959,360 -> 15,239,504; x 27 = 411,466,608
#   merger: norm with bias 2,304; fc1 4,608 x 4,608 + 4,608 = 21,238,272
#   -> 437,132,016, plus the merger's fc2 into the decoder width: out x 4,608 + out.
VISION_FIXED = 437_132_016
assert VISION_FIXED == 1_770_624 + 2_654_208 + 411_466_608 + 2_304 + 21_238_272


def test_qwen3_5_35b_a3b_moe_with_its_vision_tower():
    # Pinned Qwen3.5-35B-A3B text_config: hidden 2,048, 40 layers (10 full + 30 GDN), 16 q /
    # 2 KV heads x 256 (gated), GDN 16 key / 32 value heads x 128, conv 4, 256 experts of
    # 512 + shared 512, vocab 248,320; the wrapper's tie_word_embeddings false.
    #   embedding + lm_head 2 x 248,320 x 2,048                      =  1,017,118,720
    #   full attention (as Qwen3-Next) 27,263,488; x 10              =    272,634,880
    #   GDN: in_proj_qkv 8,192 x 2,048 = 16,777,216; in_proj_z 4,096 x 2,048 = 8,388,608;
    #     in_proj_b, in_proj_a 2 x 32 x 2,048 = 131,072; conv1d 32,768; dt_bias + A_log 64;
    #     norm 128; out_proj 8,388,608 -> 33,718,464; x 30           =  1,011,553,920
    #   MoE: 256 x 3 x 512 x 2,048 = 805,306,368; router 524,288; shared expert 3,145,728;
    #     shared_expert_gate 2,048 -> 808,978,432; x 40              = 32,359,137,280
    #   layer norms 40 x 2 x 2,048 + 2,048                           =        165,888
    #   vision: 437,132,016 + fc2 2,048 x 4,608 + 2,048 = 9,439,232  =    446,571,248
    #   total                                                        = 35,107,181,936
    cfg, _ = _load(ARCH / "qwen3_5/configs/Qwen--Qwen3.5-35B-A3B")
    est, why = _estimate(cfg)
    assert est is not None, why
    vision = sum(r.instances * r.elements for r in est.rows if r.module.startswith("model.visual"))
    assert vision == VISION_FIXED + 2048 * 4608 + 2048 == 446_571_248
    assert _params(est) == 35_107_181_936
    assert est.total_bytes == 35_107_181_936 * 2
    # Qwen3.6-35B-A3B has the same shapes.
    same, _ = _estimate(_load(ARCH / "qwen3_5/configs/Qwen--Qwen3.6-35B-A3B")[0])
    assert same.total_bytes == est.total_bytes
    # The wrapper's tie_word_embeddings decides (the 35B text_config declares none); a
    # text_config copy that disagrees (Qwen3.6 declares false there) is refused.
    tied, _ = _estimate(cfg | {"tie_word_embeddings": True})
    assert tied.total_bytes == est.total_bytes - 248_320 * 2_048 * 2
    q36 = _load(ARCH / "qwen3_5/configs/Qwen--Qwen3.6-35B-A3B")[0]
    assert "tie_word_embeddings" in _estimate(q36 | {"tie_word_embeddings": True})[1]


def test_qwen3_5_27b_dense():
    # Pinned Qwen3.5-27B text_config: hidden 5,120, 64 layers (16 full + 48 GDN), 24 q / 4 KV
    # heads x 256 (gated), GDN 16 key / 48 value heads x 128 (key_dim 2,048, value_dim
    # 6,144), conv 4, dense MLP 17,408, vocab 248,320, untied.
    #   embedding + lm_head 2 x 248,320 x 5,120                      =  2,542,796,800
    #   full attention: q 12,288 x 5,120 = 62,914,560; k, v 2 x 1,024 x 5,120 =
    #     10,485,760; o 5,120 x 6,144 = 31,457,280; norms 512 -> 104,858,112; x 16
    #                                                                =  1,677,729,792
    #   GDN: in_proj_qkv 10,240 x 5,120 = 52,428,800; in_proj_z 6,144 x 5,120 = 31,457,280;
    #     in_proj_b/a 2 x 48 x 5,120 = 491,520; conv1d 10,240 x 4 = 40,960; dt_bias + A_log
    #     96; norm 128; out_proj 31,457,280 -> 115,876,064; x 48     =  5,562,051,072
    #   MLP 3 x 17,408 x 5,120 = 267,386,880; x 64                   = 17,112,760,320
    #   layer norms 64 x 2 x 5,120 + 5,120                           =        660,480
    #   vision: 437,132,016 + fc2 5,120 x 4,608 + 5,120 = 23,598,080 =    460,730,096
    #   total                                                        = 27,356,728,560
    est, why = _estimate(_load(ARCH / "qwen3_5/configs/Qwen--Qwen3.5-27B")[0])
    assert est is not None, why
    vision = sum(r.instances * r.elements for r in est.rows if r.module.startswith("model.visual"))
    assert vision == VISION_FIXED + 5120 * 4608 + 5120 == 460_730_096
    assert _params(est) == 2_542_796_800 + 1_677_729_792 + 5_562_051_072 + 17_112_760_320 \
        + 660_480 + vision == 27_356_728_560
    assert not any(".mlp.experts." in r.module for r in est.rows)


def test_qwen3_6_nvfp4_mixed_precision_layers():
    # nvidia/Qwen3.6-35B-A3B-NVFP4: hf_quant_config MIXED_PRECISION with W4A16_NVFP4 (group
    # 16) on the routed experts and shared expert, FP8 on the GDN in_proj_qkv / in_proj_z /
    # out_proj and the full-attention projections; everything unlisted (in_proj_b/a, router,
    # shared_expert_gate, vision tower) stays bf16.
    est, why = _estimate(*_load(ARCH / "qwen3_5/configs/nvidia--Qwen3.6-35B-A3B-NVFP4"))
    assert est is not None, why
    assert _row(est, "experts.{e}.up_proj").stored_as == "nvfp4"
    assert _row(est, "shared_expert.down_proj").stored_as == "nvfp4"
    assert _row(est, "linear_attn.in_proj_qkv").stored_as == "fp8"
    assert _row(est, "linear_attn.in_proj_b").stored_as == "model dtype"
    assert _row(est, "mlp.gate").stored_as == "model dtype"
    assert _row(est, "visual.blocks.{r}.attn.qkv").stored_as == "model dtype"
    assert est.total_bytes < 35_107_181_936


def test_nemotron_3_nano_matches_31_6b():
    # Pinned NVIDIA-Nemotron-3-Nano-30B-A3B-BF16: hidden 2,688, hybrid_override_pattern of 23
    # M, 23 E, 6 *; Mamba 64 heads x 64 (inner 4,096), 8 groups x 128 state (conv_dim
    # 6,144), conv 4 with bias; 32 q / 2 KV heads x 128; 128 experts of 1,856 + a shared
    # expert of 3,712 (ReLU^2: up and down only); vocab 131,072, untied.
    #   embeddings + lm_head 2 x 131,072 x 2,688                     =    704,643,072
    #   M: in_proj 10,304 x 2,688 = 27,697,152; conv1d 6,144 x 4 + 6,144 = 30,720; dt_bias,
    #     A_log, D 192; gated norm 4,096; out_proj 2,688 x 4,096 = 11,010,048; block norm
    #     2,688 -> 38,744,896; x 23                                  =    891,132,608
    #   *: q 11,010,048; k, v 1,376,256; o 11,010,048; norm 2,688 -> 23,399,040; x 6
    #                                                                =    140,394,240
    #   E: 128 x 2 x 1,856 x 2,688 = 1,277,165,568; shared 2 x 3,712 x 2,688 = 19,955,712;
    #     router 344,064; bias 128; norm 2,688 -> 1,297,468,160; x 23 = 29,841,767,680
    #   final norm 2,688; total 31,577,940,288 (NVIDIA's "31.6B total parameters").
    # Bytes: x 2, plus 2 B more for each of the 23 x 128 float32 bias values (5,888).
    d = ARCH / "nemotron_h/configs/nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
    est, why = _estimate(*_load(d))
    assert est is not None, why
    assert _params(est) == 31_577_940_288
    assert est.total_bytes == 31_577_940_288 * 2 + 23 * 128 * 2
    # The NVFP4 copy excludes some layers' Mamba and attention projections from NVFP4.
    nvfp4, why = _estimate(*_load(ARCH / "nemotron_h/configs/"
                                  "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4"))
    assert nvfp4 is not None, why
    assert "model dtype" in _row(nvfp4, "mixer.in_proj").stored_as
    assert _row(nvfp4, "experts.{e}.up_proj").stored_as == "nvfp4"
    # Nemotron 3 Super / Ultra route through latent projections (moe_latent_size): refused.
    super_cfg, _ = _load(ARCH / "nemotron_h/configs/nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8")
    refused, why = _estimate(super_cfg)
    assert refused is None and "moe_latent_size" in why


def test_nemotron_h_56b_dense_mlp_layers():
    # Pinned Nemotron-H-56B-Base-8K: hidden 8,192, pattern of 54 M, 54 -, 10 *; Mamba 256
    # heads x 64 (inner 16,384), 8 groups x 256 state (conv_dim 20,480), conv 4 with bias;
    # 64 q / 8 KV heads x 128 (attention_head_dim); MLP 32,768; vocab 131,072, untied.
    #   embeddings + lm_head 2 x 131,072 x 8,192                     =  2,147,483,648
    #   M: in_proj (16,384 + 20,480 + 256 = 37,120) x 8,192 = 304,087,040; conv1d 20,480 x
    #     4 + 20,480 = 102,400; dt_bias, A_log, D 768; norm 16,384; out_proj 8,192 x 16,384 =
    #     134,217,728; block norm 8,192 -> 438,432,512; x 54         = 23,675,355,648
    #   -: up + down 2 x 32,768 x 8,192 = 536,870,912; norm 8,192; x 54 = 28,991,471,616
    #   *: q, o 2 x 67,108,864; k, v 2 x 1,024 x 8,192 = 16,777,216; norm 8,192
    #     -> 151,003,136; x 10                                       =  1,510,031,360
    #   final norm 8,192; total 56,324,350,464 (the "56B" of the name); x 2 B.
    est, why = _estimate(*_load(ARCH / "nemotron_h/configs/nvidia--Nemotron-H-56B-Base-8K"))
    assert est is not None, why
    assert _params(est) == 56_324_350_464
    assert est.total_bytes == 56_324_350_464 * 2
