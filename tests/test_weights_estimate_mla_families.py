"""Config-shape weight estimates for the DeepSeek V2/V3, Kimi K2 and GLM-4.x MoE specs.

Every expected total is derived by hand from a pinned config (derivations in comments) and
compared with the published parameter count where one exists. Stored bytes per format follow
specs/quant/weight_storage.yaml: fp8-block = 1 B per element + a float32 scale per 128 x 128
block; nvfp4 = half a byte per element + one FP8 scale per 16 + 8 B; int4-pack = half a byte
per element + a 16-bit scale per group of 32 + 8 B. `count` tensors stay at the model dtype
(bf16, 2 B) unless the spec gives element_bytes (the float32 e_score_correction_bias).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

TESTS = Path(__file__).resolve().parent
ARCH = TESTS / "architectures"
FIXTURES = TESTS / "fixtures" / "model-configs"


_load, _estimate, _params, _row = load_config_dir, estimate_of, param_count, row_of


def test_deepseek_v3_fp8_matches_671b():
    # Pinned deepseek-ai/DeepSeek-V3 config: hidden 7,168, 61 layers (first_k_dense_replace 3
    # dense, 58 MoE), 128 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128 + rope 64,
    # v 128, MLP 18,432, 256 routed experts of 2,048 + 1 shared, vocab 129,280, untied,
    # topk_method noaux_tc, quant_method fp8 with weight_block_size [128, 128].
    # Parameters:
    #   embedding + lm_head 2 x 129,280 x 7,168                          =   1,853,358,080
    #   attention per layer: q_a 1,536 x 7,168 = 11,010,048; q_b 24,576 x 1,536 =
    #     37,748,736; kv_a 576 x 7,168 = 4,128,768; kv_b 32,768 x 512 = 16,777,216;
    #     o 7,168 x 16,384 = 117,440,512; q_a/kv_a norms 1,536 + 512
    #     = 187,107,328; x 61                                            =  11,413,547,008
    #   dense MLP 3 x 18,432 x 7,168 = 396,361,728; x 3                  =   1,189,085,184
    #   MoE layer: (256 + 1) x 3 x 2,048 x 7,168 = 11,318,329,344, router 256 x 7,168 =
    #     1,835,008, bias 256 -> 11,320,164,608; x 58                    = 656,569,547,264
    #   layer norms 61 x 2 x 7,168 + final norm 7,168                    =         881,664
    #   total                                                            = 671,026,419,200
    # = DeepSeek's "671B total parameters" (the model card's 685B adds the 14B MTP module,
    # model.layers.61, which vLLM's main model does not load and the estimate leaves out).
    est, why = _estimate(*_load(ARCH / "deepseek_v3/configs/deepseek-ai--DeepSeek-V3"))
    assert est is not None, why
    assert _params(est) == 671_026_419_200
    # Bytes. Every linear is fp8-block: elements + ceil(r/128) x ceil(c/128) x 4 B.
    #   q_a  11,010,048 +  12 x  56 x 4 =  11,012,736
    #   q_b  37,748,736 + 192 x  12 x 4 =  37,757,952
    #   kv_a  4,128,768 +   5 x  56 x 4 =   4,129,888
    #   kv_b 16,777,216 + 256 x   4 x 4 =  16,781,312
    #   o   117,440,512 +  56 x 128 x 4 = 117,469,184
    #   -> 187,151,072 per layer x 61                                    =  11,416,215,392
    #   dense gate/up/down 132,120,576 + 144 x 56 x 4 = 132,152,832; x 9 =   1,189,375,488
    #   expert/shared projections 14,680,064 + 16 x 56 x 4 = 14,683,648;
    #     x 257 x 3 = 11,321,092,608 per MoE layer; x 58                 = 656,623,371,264
    #   bf16: (926,679,040 x 2 embedding/lm_head + 61 x (2 x 7,168 + 1,536 + 512) norms
    #     + 7,168 + 58 x 1,835,008 router) x 2 B                         =   3,921,590,272
    #   float32 e_score_correction_bias 58 x 256 x 4 B                   =          59,392
    #   total                                                            = 673,150,611,808
    assert est.total_bytes == 673_150_611_808
    assert "fp8-block" in why and "deepseek_v3" in why
    assert _row(est, "mlp.gate").stored_as == "model dtype"
    assert _row(est, "e_score_correction_bias").stored_as == "4 B"
    assert not any("layers.{i}.eh_proj" in r.module or "shared_head" in r.module
                   for r in est.rows)
    # TP=8: q_a_proj (671,776,896 B) and kv_a_proj_with_mqa (251,923,168 B) are replicated,
    # like the norms (2,013,184 B), the router (212,860,928 B) and the bias (59,392 B):
    # 1,138,633,568 B on every rank; the other 672,011,978,240 B split 8 ways.
    assert est.rank_bytes(8) == 672_011_978_240 // 8 + 1_138_633_568


def test_deepseek_v2_lite_uses_q_proj_and_no_correction_bias():
    # Pinned DeepSeek-V2-Lite: hidden 2,048, 27 layers (first_k_dense_replace 1), 16 heads,
    # q_lora_rank null (a plain q_proj), kv_lora_rank 512, qk 128 + 64, v 128, MLP 10,944,
    # 64 routed experts of 1,408 + 2 shared, vocab 102,400, topk_method greedy (no
    # e_score_correction_bias), bf16.
    #   embedding + lm_head 2 x 102,400 x 2,048                          =     419,430,400
    #   attention per layer: q_proj 3,072 x 2,048 = 6,291,456; kv_a 576 x 2,048 =
    #     1,179,648; kv_a norm 512; kv_b 4,096 x 512 = 2,097,152; o 2,048 x 2,048 =
    #     4,194,304 -> 13,763,072; x 27                                  =     371,602,944
    #   dense MLP 3 x 10,944 x 2,048                                     =      67,239,936
    #   MoE layer: 64 x 3 x 1,408 x 2,048 = 553,648,128; shared 3 x 2,816 x 2,048 =
    #     17,301,504; router 64 x 2,048 = 131,072 -> 571,080,704; x 26   =  14,848,098,304
    #   norms 27 x 2 x 2,048 + 2,048                                     =         112,640
    #   total 15,706,484,224 = the model card's "15.7B total parameters"; x 2 B.
    est, why = _estimate(*_load(ARCH / "deepseek_v3/configs/deepseek-ai--DeepSeek-V2-Lite"))
    assert est is not None, why
    assert _params(est) == 15_706_484_224
    assert est.total_bytes == 15_706_484_224 * 2
    modules = {r.module.rsplit(".", 1)[-1] for r in est.rows}
    assert "q_proj" in modules and "q_a_proj" not in modules
    assert "e_score_correction_bias" not in modules


def test_deepseek_v31_nvfp4_keeps_the_excluded_mla_projections_at_bf16():
    # nvidia/DeepSeek-V3.1-NVFP4: hf_quant_config NVFP4 (group 16) on all linears except
    # lm_head, every layer's q_a/q_b/kv_a/kv_b projections and model.layers.61*; same shapes
    # as DeepSeek-V3 (see above).
    #   bf16 MLA projections (11,010,048 + 37,748,736 + 4,128,768 + 16,777,216) x 61 x 2 B
    #                                                                    =   8,499,101,696
    #   o_proj nvfp4 58,720,256 + 7,168 x 1,024 + 8 = 66,060,296; x 61   =   4,029,678,056
    #   dense MLP 66,060,288 + 18,432 x 448 + 8 = 74,317,832; x 9        =     668,860,488
    #   expert/shared 7,340,032 + 2,048 x 448 + 8 = 8,257,544; x 771 x 58 = 369,260,852,592
    #   bf16 embedding/lm_head, norms, router + float32 bias (as DeepSeek-V3) = 3,921,649,664
    #   total                                                            = 386,380,142,496
    est, why = _estimate(*_load(ARCH / "deepseek_v3/configs/nvidia--DeepSeek-V3.1-NVFP4"))
    assert est is not None, why
    assert est.total_bytes == 386_380_142_496
    assert _row(est, "self_attn.kv_b_proj").stored_as == "model dtype"
    assert _row(est, "self_attn.o_proj").stored_as == "nvfp4"


def test_kimi_k2_instruct_fp8_matches_1t():
    # Pinned moonshotai/Kimi-K2-Instruct: hidden 7,168, 61 layers (first_k_dense_replace 1),
    # 64 heads, q_lora_rank 1,536, kv_lora_rank 512, qk 128 + 64, v 128, MLP 18,432, 384
    # routed experts of 2,048 + 1 shared, vocab 163,840, untied, noaux_tc, fp8 [128, 128].
    # Parameters:
    #   embedding + lm_head 2 x 163,840 x 7,168                          =     2,348,810,240
    #   attention per layer: q_a 11,010,048; q_b 12,288 x 1,536 = 18,874,368; kv_a
    #     4,128,768; kv_b 16,384 x 512 = 8,388,608; o 7,168 x 8,192 = 58,720,256; norms
    #     2,048 -> 101,124,096; x 61                                     =     6,168,569,856
    #   dense MLP 3 x 18,432 x 7,168                                     =       396,361,728
    #   MoE layer: 385 x 3 x 2,048 x 7,168 + router 384 x 7,168 + bias 384
    #     = 16,958,226,816; x 60                                         = 1,017,493,608,960
    #   norms 61 x 2 x 7,168 + 7,168                                     =           881,664
    #   total 1,026,408,232,448 = Moonshot's "1T total parameters".
    est, why = _estimate(*_load(ARCH / "kimi_k2/configs/moonshotai--Kimi-K2-Instruct"))
    assert est is not None, why
    assert _params(est) == 1_026_408_232_448
    # Bytes (fp8-block as for DeepSeek-V3):
    #   attention: q_a 11,012,736; q_b 18,874,368 + 96 x 12 x 4 = 18,878,976; kv_a
    #     4,129,888; kv_b 8,388,608 + 128 x 4 x 4 = 8,390,656; o 58,720,256 + 56 x 64 x 4
    #     = 58,734,592 -> 101,146,848; x 61                              =     6,169,957,728
    #   dense MLP 3 x 132,152,832                                        =       396,458,496
    #   expert/shared 14,683,648 x 385 x 3 x 60                          = 1,017,576,806,400
    #   bf16 (2,348,810,240 embedding/lm_head + 60 x 2,752,512 router + 61 x 16,384
    #     + 7,168 norms) x 2 B                                           =     5,029,935,104
    #   float32 bias 60 x 384 x 4 B                                      =            92,160
    #   total                                                            = 1,029,173,249,888
    assert est.total_bytes == 1_029_173_249_888
    assert "fp8-block" in why and "kimi_k2" in why


def test_kimi_k2_int4_pack_quantizes_routed_experts_only():
    # Kimi-K2-Thinking / K2.5 declare compressed-tensors pack-quantized int4, group 32,
    # targets [Linear], ignore [lm_head, re:.*self_attn.*, re:.*shared_experts.*,
    # re:.*mlp\.(gate|up|gate_up|down)_proj.*]. The pinned Kimi-K2-Thinking copy is trimmed
    # (no quantization_config), so the K2.5 text_config (model_type kimi_k2, the same
    # declaration, the Kimi-K2 shapes above) stands in as a kimi_k2 config.
    cfg = json.loads((FIXTURES / "moonshotai--Kimi-K2.5" / "config.json").read_text())
    est, why = _estimate(copy.deepcopy(cfg["text_config"]))
    assert est is not None, why
    # Routed experts: 7,340,032 + 2,048 x 224 x 2 + 8 = 8,257,544 B per projection;
    #   x 3 x 384 x 60                                                   =   570,761,441,280
    # Everything else bf16: 1,026,408,232,448 parameters - 60 x 384 x 3 x 2,048 x 7,168
    #   routed expert weights - 23,040 bias values = 11,722,185,728; x 2 B = 23,444,371,456
    # float32 bias 60 x 384 x 4 B                                        =            92,160
    # total 594,205,904,896 B (about the 594 GB the Kimi-K2-Thinking checkpoint is quoted at).
    assert est.total_bytes == 594_205_904_896
    assert "int4-pack" in why
    for suffix in ("experts.{e}.gate_proj", "experts.{e}.up_proj", "experts.{e}.down_proj"):
        assert _row(est, suffix).stored_as == "int4-pack"
    for suffix in ("shared_experts.gate_proj", "self_attn.q_b_proj", "self_attn.o_proj",
                   "layers.{i}.mlp.gate_proj", "layers.{i}.mlp.down_proj"):
        assert _row(est, suffix).stored_as == "model dtype"


def test_glm47_matches_the_355b_class():
    # Pinned CURATED zai-org/GLM-4.7-FP8 copy: hidden 5,120, 92 layers (first_k_dense_replace
    # 3), 96 query / 8 KV heads x 128, MLP 12,288, 160 routed experts of 1,536 + 1 shared,
    # vocab 151,552, untied. It was trimmed: no attention_bias (so the estimate refuses it,
    # see below), no use_qk_norm (class default False), no quantization_config (bf16). With
    # the attention_bias true of the published GLM-4.5 config:
    #   embedding + lm_head 2 x 151,552 x 5,120                          =   1,551,892,480
    #   attention per layer: q 12,288 x 5,120 = 62,914,560; k, v 2 x 1,024 x 5,120 =
    #     10,485,760; o 5,120 x 12,288 = 62,914,560; q/k/v biases 12,288 + 2,048 = 14,336
    #     -> 136,329,216; x 92                                           =  12,542,287,872
    #   dense MLP 3 x 12,288 x 5,120 = 188,743,680; x 3                  =     566,231,040
    #   MoE layer: 161 x 3 x 1,536 x 5,120 = 3,798,466,560, router 160 x 5,120 = 819,200,
    #     bias 160 -> 3,799,285,920; x 89                                = 338,136,446,880
    #   norms 92 x 2 x 5,120 + 5,120                                     =         947,200
    #   total 352,797,805,472 parameters (Z.ai quotes 355B for GLM-4.5/4.6/4.7; the MTP
    #   layer the main model leaves out is about 3.99B more).
    # Bytes: x 2, plus 2 B more for each of the 89 x 160 float32 bias values:
    #   705,595,610,944 + 28,480                                         = 705,595,639,424
    cfg, _ = _load(ARCH / "glm4_moe/configs/zai-org--GLM-4.7-FP8")
    est, why = _estimate(cfg | {"attention_bias": True})
    assert est is not None, why
    assert _params(est) == 352_797_805_472
    assert est.total_bytes == 705_595_639_424
    # TP=8: k/v and their biases split over min(8, 8 KV heads); replicated are the norms
    # (1,894,400 B), the router (145,817,600 B) and the bias (56,960 B) = 147,768,960 B.
    assert est.rank_bytes(8) == (705_595_639_424 - 147_768_960) // 8 + 147_768_960
    # use_qk_norm adds q_norm and k_norm (2 x 128 per layer): 92 x 256 x 2 B = 47,104 B.
    normed, _ = _estimate(cfg | {"attention_bias": True, "use_qk_norm": True})
    assert normed.total_bytes - est.total_bytes == 47_104


def _refusal(cfg: dict) -> str:
    est, why = _estimate(cfg)
    assert est is None
    return why


def test_variants_the_tensor_lists_do_not_describe_are_refused():
    v3, _ = _load(ARCH / "deepseek_v3/configs/deepseek-ai--DeepSeek-V3")
    assert "moe_layer_freq" in _refusal(v3 | {"moe_layer_freq": 2})
    assert "attention_bias" in _refusal(v3 | {"attention_bias": True})
    assert "topk_method" in _refusal(v3 | {"topk_method": "sinkhorn"})
    # first_k_dense_replace decides the dense/MoE split and its class defaults differ
    # (DeepseekV2Config 0, DeepseekV3Config 3): absent, the estimate refuses while the state
    # plan still resolves.
    no_dense = {k: v for k, v in v3.items() if k != "first_k_dense_replace"}
    assert "first_k_dense_replace" in _refusal(no_dense)
    assert "n_routed_experts" in _refusal(v3 | {"n_routed_experts": None})
    kimi, _ = _load(ARCH / "kimi_k2/configs/moonshotai--Kimi-K2-Instruct")
    assert "topk_method" in _refusal(kimi | {"topk_method": "greedy"})
    # Hand-trimmed copies that dropped keys every saved config carries (and with them the
    # quantization_config) are refused rather than estimated at bf16: the pinned
    # Kimi-K2-Thinking copy (an int4 checkpoint) and the CURATED GLM-4.7-FP8 copy.
    thinking, _ = _load(ARCH / "kimi_k2/configs/moonshotai--Kimi-K2-Thinking")
    assert "topk_method" in _refusal(thinking)
    glm47, _ = _load(ARCH / "glm4_moe/configs/zai-org--GLM-4.7-FP8")
    assert "attention_bias" in _refusal(glm47)
    # The synthetic GLM config carries attention keys only: no sizes, no estimate.
    glm = json.loads((ARCH / "glm4_moe/configs/synthetic/synthetic--glm4-moe-nextn.json")
                     .read_text())
    assert "vocab_size" in _refusal(glm)
