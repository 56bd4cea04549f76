"""Config-shape weight estimates for DeepSeek V4 (deepseek_v4) and Kimi Linear / Kimi-K3
(kimi_linear).

No safetensors index of these checkpoints is pinned in tests/. Every expected total below is
derived by hand from the pinned config (derivations in comments) and compared with what public
sources state about the released checkpoints:
  * DeepSeek-V4-Flash: a checkpoint validator (steadfastgaze/MoEspresso,
    src/moespresso/inventory/deepseek_v4/static.py) states the released index's total_size
    159,609,485,896 B and 69,187 tensors (67,612 without mtp.*);
  * Kimi-K3: the Hub's safetensors metadata for moonshotai/Kimi-K3 as third-party K3 notes
    quote it (BF16 57,179,884,544, F32 11,122,432 and U8 2,722,740,830,208 values) and
    497,220 tensors, 168 of them the vision tower and projector.
Stored bytes per format follow specs/quant/weight_storage.yaml: fp8-block-e8m0 = 1 B per
element + one 1-byte E8M0 scale per 128 x 128 block; mxfp4 = half a byte per element + one
E8M0 byte per 32.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.checkpoint.estimate import estimate_weights
from kvfit.checkpoint.metadata import Metadata
from kvfit.checkpoint.quant import summarize
from kvfit.state.resolve import resolve_architecture

from conftest import param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"
V4 = ARCH / "deepseek_v4" / "configs"
KIMI = ARCH / "kimi_linear" / "configs"


def _config(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text())


def _estimate(folder: Path, mtp: bool = False, **override):
    cfg = _config(folder) | override
    hf = folder / "hf_quant_config.json"
    meta = Metadata("x", "local", cfg, quant_config=json.loads(hf.read_text())
                    if hf.exists() else None)
    return estimate_weights(resolve_architecture(cfg), summarize(meta), 2, mtp)


def test_deepseek_v4_flash_reproduces_the_released_total_size():
    # Pinned deepseek-ai/DeepSeek-V4-Flash: hidden 4,096, 43 layers (compress_ratios: 2 x 0,
    # then 21 x 4 and 20 x 128, and a 44th entry 0 for the MTP block), 64 heads x head_dim 512,
    # q_lora_rank 1,024, o_groups 8 x o_lora_rank 1,024, hc_mult 4, indexer 64 x 128, 256
    # routed experts of 2,048 (expert_dtype fp4) + 1 shared, 6 per token, num_hash_layers 3,
    # vocab 129,280; fp8 [128, 128] blocks with ue8m0 scales. fp8(r, c) = r x c + ceil(r/128)
    # x ceil(c/128); fp4(r, c) = r x c / 2 + r x c / 32.
    #   embed + head 2 x 129,280 x 4,096 x 2 B = 2,118,123,520; norm 8,192; hc_head_fn
    #     4 x 16,384 + base 4 + scale 1, x 4 B = 262,164             ->    2,118,393,876
    #   every layer: hc_attn/ffn_fn 2 x 24 x 16,384 x 4 B, base 2 x 24 x 4, scale 2 x 3 x 4,
    #     attn/ffn norms 2 x 4,096 x 2 = 3,162,328; attention: sink 64 x 4 = 256, wq_a
    #     fp8(1,024, 4,096) = 4,194,560, q_norm 2,048, wq_b fp8(32,768, 1,024) = 33,556,480,
    #     wkv fp8(512, 4,096) = 2,097,280, kv_norm 1,024, wo_a fp8(8,192, 4,096) = 33,556,480,
    #     wo_b fp8(4,096, 8,192) = 33,556,480 -> 106,964,608; router 256 x 4,096 x 2 =
    #     2,097,152; routed experts 256 x (2 x fp4(2,048, 4,096) + fp4(4,096, 2,048)) =
    #     256 x 3 x 4,456,448 = 3,422,552,064; shared 3 x 8,389,120 = 25,167,360
    #     -> 3,559,943,512; x 43                                     =  153,077,571,016
    #   C4 compressor: ape 4 x 1,024 x 4 = 16,384, wkv + wgate 2 x 1,024 x 4,096 x 2 B =
    #     16,777,216, norm 1,024 -> 16,794,624; indexer: wq_b fp8(8,192, 1,024) = 8,389,120,
    #     weights_proj 64 x 4,096 x 2 = 524,288, compressor ape 4 x 256 x 4 = 4,096, wkv + wgate
    #     2 x 256 x 4,096 x 2 = 4,194,304, norm 256 -> 13,112,064; x 21 =    628,057,848
    #   C128 compressor: ape 128 x 512 x 4 = 262,144, wkv + wgate 2 x 512 x 4,096 x 2 =
    #     8,388,608, norm 1,024 -> 8,651,776; x 20                   =      173,035,520
    #   tid2eid 3 x 129,280 x 6 x 8 B (int64) = 18,616,320; router bias 40 x 256 x 4 = 40,960
    #   main model                                                   =  156,015,698,140
    #   MTP block (mtp.0, a sliding-window block): 3,559,943,512 + bias 1,024 + e_proj and
    #     h_proj 2 x fp8(4,096, 4,096) = 33,556,480 + enorm/hnorm/norm 24,576 + hc_head
    #     262,164                                                    =    3,593,787,756
    #   with the MTP block                                           =  159,609,485,896
    # = the released index's total_size (see the module docstring): the gap is 0 B.
    est, why = _estimate(V4 / "deepseek-ai--DeepSeek-V4-Flash")
    assert est is not None, why
    assert est.total_bytes == 156_015_698_140
    assert "fp8-block-e8m0" in why and "mxfp4" in why
    stored, why = _estimate(V4 / "deepseek-ai--DeepSeek-V4-Flash", mtp=True)
    assert stored.total_bytes == 159_609_485_896
    assert "MTP layers included" in why
    assert row_of(est, "ffn.experts.{e}.w1").stored_as == "mxfp4"
    assert row_of(est, "attn.wq_b").stored_as == "fp8-block-e8m0"
    assert row_of(est, "attn.compressor.wkv").stored_as == "model dtype"
    assert row_of(est, "ffn.gate.tid2eid").instances == 3
    assert row_of(est, "attn.indexer.wq_b").instances == 21


def test_deepseek_v4_pro_at_its_own_shapes():
    # Pinned deepseek-ai/DeepSeek-V4-Pro: hidden 7,168, 61 layers (31 x C128 + 30 x C4, MTP
    # entry 0), 128 heads x 512, q_lora_rank 1,536, o_groups 16 x 1,024, 384 routed experts of
    # 3,072 + 1 shared, 6 per token, 3 hash layers, vocab 129,280 (fp8 / fp4 as V4-Flash).
    #   embed + head 2 x 129,280 x 7,168 x 2 + norm 14,336 + hc_head (4 x 28,672 + 5) x 4
    #                                                                =    3,707,189,268
    #   every layer: hc + norms 5,533,912; attention sink 512 + wq_a 11,010,720 + q_norm 3,072
    #     + wq_b fp8(65,536, 1,536) 100,669,440 + wkv 3,670,240 + kv_norm 1,024 + wo_a
    #     fp8(16,384, 4,096) 67,112,960 + wo_b fp8(7,168, 16,384) 117,447,680 = 299,915,648;
    #     router 384 x 7,168 x 2 = 5,505,024; experts 384 x 3 x 11,698,176 = 13,476,298,752;
    #     shared 3 x 22,021,440 = 66,064,320 -> 13,853,317,656; x 61 =  845,052,377,016
    #   C4: compressor 16,384 + 29,360,128 + 1,024 = 29,377,536, indexer wq_b 12,583,680 +
    #     weights_proj 917,504 + ape 4,096 + wkv/wgate 7,340,032 + norm 256 = 20,845,568;
    #     x 30                                                       =    1,506,693,120
    #   C128: 262,144 + 14,680,064 + 1,024 = 14,943,232; x 31        =      463,240,192
    #   tid2eid 3 x 129,280 x 6 x 8 = 18,616,320; bias 58 x 384 x 4 = 89,088
    #   main model                                                   =  850,748,205,004
    #   MTP: 13,853,317,656 + 1,536 + 2 x 51,383,360 + 43,008 + 458,772 = 13,956,587,692
    #   with the MTP block                                           =  864,704,792,696
    est, why = _estimate(V4 / "deepseek-ai--DeepSeek-V4-Pro")
    assert est is not None, why
    assert est.total_bytes == 850_748_205_004
    stored, _ = _estimate(V4 / "deepseek-ai--DeepSeek-V4-Pro", mtp=True)
    assert stored.total_bytes == 864_704_792_696


def test_deepseek_v4_requantisations_and_dspark_are_refused():
    # No pinned index shows what the re-quantised checkpoints store: refused, with the reason.
    est, why = _estimate(V4 / "nvidia--DeepSeek-V4-Flash-NVFP4")
    assert est is None and "quantization_config.ignore" in why
    est, why = _estimate(V4 / "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8")
    assert est is None and "compressed-tensors" in why
    est, why = _estimate(V4 / "sgl-project--DeepSeek-V4-Flash-FP8")
    assert est is None and "expert_dtype" in why
    dspark = json.loads((V4 / "synthetic" / "synthetic--deepseek-v4-flash-dspark.json")
                        .read_text())
    est, why = estimate_weights(resolve_architecture(dspark),
                                summarize(Metadata("x", "local", dspark)), 2)
    assert est is None and "DSpark" in why


def test_kimi_k3_text_decoder_against_the_hub_metadata():
    # Pinned moonshotai/Kimi-K3 text_config: hidden 7,168, 93 layers (69 KDA, 24 MLA;
    # first_k_dense_replace 1), KDA 96 heads x 128 (P = 12,288), conv 4, full-rank gate; MLA
    # 96 heads, q_lora 1,536, kv_lora 512, qk 128 + 64, v 128, output gate; latent MoE: 896
    # experts of 3,072 over routed_expert_hidden_size 3,584, 2 shared; dense MLP 33,792; vocab
    # 163,840; compressed-tensors MXFP4 (group 32) on the routed experts only.
    #   embed + lm_head 2 x 163,840 x 7,168 + norm, output_attn_res_norm / _proj 3 x 7,168
    #     = 2,348,831,744 values x 2 B                               =    4,697,663,488
    #   every layer: input/post norms, self_attention_res_norm / _proj, mlp_res_norm / _proj
    #     6 x 7,168 x 2 B = 86,016; x 93                             =        7,999,488
    #   KDA: q/k/v/g 4 x 12,288 x 7,168, f_a 128 x 7,168, f_b 12,288 x 128, b 96 x 7,168,
    #     o 7,168 x 12,288 = 443,580,416 bf16 values (887,160,832 B); float32 conv 3 x 12,288
    #     x 4, dt_bias 12,288, A_log 128, o_norm 128 = 160,000 values (640,000 B)
    #     -> 887,800,832; x 69                                       =   61,258,257,408
    #   MLA: q_a 1,536 x 7,168, q_a norm 1,536, q_b 18,432 x 1,536, kv_a 576 x 7,168, kv_a
    #     norm 512, kv_b 24,576 x 512, o 7,168 x 12,288, g 12,288 x 7,168 = 232,196,096;
    #     x 2 B x 24                                                 =   11,145,412,608
    #   dense MLP 3 x 33,792 x 7,168 x 2 B                           =    1,453,326,336
    #   MoE: router 896 x 7,168, latent down/up 2 x 3,584 x 7,168, routed norm 3,584, shared
    #     3 x 6,144 x 7,168 = 189,926,912 bf16 (379,853,824 B) + bias 896 x 4 = 3,584 B;
    #     experts 896 x 3 x (3,072 x 3,584 / 2 + 3,072 x 112) = 896 x 3 x 5,849,088 =
    #     15,722,348,544 -> 16,102,205,952; x 92                     = 1,481,402,947,584
    #   total (text decoder)                                         = 1,559,965,606,912
    #   + the MoonViT tower and patchmergerv2 projector, 447,358,976 bf16 values (derived in
    #     tests/test_weights_estimate_vision_moe.py) x 2 B           =      894,717,952
    #   total                                                        = 1,560,860,324,864
    est, why = _estimate(KIMI / "moonshotai--Kimi-K3")
    assert est is not None, why
    assert est.total_bytes == 1_559_965_606_912 + 894_717_952 == 1_560_860_324_864
    assert "mxfp4" in why
    # Against the Hub metadata (module docstring). float32: 69 x 160,000 + 92 x 896 =
    # 11,122,432 = the Hub's F32 count exactly. MXFP4: the Hub counts the logical values,
    # 92 x 896 x 3 x 3,072 x 3,584 = 2,722,740,830,208, exactly its U8 count. bf16: the text
    # decoder's 56,732,525,568 plus the tower's 447,358,976 = 57,179,884,544, the Hub's BF16
    # count exactly (the gap was the tower before it was listed); and the tower's rows are 168
    # tensors (patch embedding, position table, 27 x 6 block tensors, final norm, 3 projector
    # tensors), the Hub's vision-tower-and-projector tensor count.
    f32 = sum(r.instances * r.elements for r in est.rows if r.stored_as == "4 B")
    assert f32 == 11_122_432
    fp4 = sum(r.instances * r.elements for r in est.rows if r.stored_as == "mxfp4")
    assert fp4 == 2_722_740_830_208
    bf16 = param_count(est) - f32 - fp4
    assert 57_179_884_544 - bf16 == 0
    tower = [r for r in est.rows if r.module.startswith(("vision_tower.", "mm_projector."))]
    assert sum(r.instances for r in tower) == 168
    assert row_of(est, "routed_expert_down_proj").stored_as == "model dtype"
    assert row_of(est, "shared_experts.gate_proj").stored_as == "model dtype"
    assert row_of(est, "self_attn.q_proj").instances == 69


def test_kimi_linear_48b_matches_its_name():
    # Pinned Kimi-Linear-48B-A3B-Base: hidden 2,304, 27 layers (20 KDA, 7 MLA;
    # first_k_dense_replace 1), KDA 32 heads x 128 (P = 4,096), conv 4; MLA 32 heads,
    # q_lora_rank null (q_proj), kv_lora 512, qk 128 + 64, v 128; 256 experts of 1,024 + 1
    # shared; dense MLP 9,216; vocab 163,840; bf16, no quantization.
    #   embed + lm_head 2 x 163,840 x 2,304 + norm 2,304              =      754,976,000
    #   layer norms 27 x 2 x 2,304                                   =          124,416
    #   KDA: q/k/v 3 x 4,096 x 2,304, f_a / g_a 2 x 128 x 2,304, f_b / g_b 2 x 4,096 x 128,
    #     b 32 x 2,304, o_norm 128, o 2,304 x 4,096 = 39,460,992; float32 conv 3 x 4,096 x 4,
    #     dt_bias 4,096, A_log 32 = 53,280 -> 39,514,272; x 20       =      790,285,440
    #   MLA: q_proj 6,144 x 2,304, kv_a 576 x 2,304, kv_a norm 512, kv_b 8,192 x 512, o 2,304
    #     x 4,096 = 29,114,880; x 7                                  =      203,804,160
    #   dense MLP 3 x 9,216 x 2,304                                  =       63,700,992
    #   MoE: router 256 x 2,304 + bias 256, experts 256 x 3 x 1,024 x 2,304, shared 3 x 1,024
    #     x 2,304 = 1,819,607,296; x 26                              =   47,309,789,696
    #   total 49,122,681,728 parameters (the "48B" of the name). Bytes: x 2, plus 2 B more for
    #   each float32 value (20 x 53,280 + 26 x 256 = 1,072,256): 98,245,363,456 + 2,144,512
    #   = 98,247,507,968.
    est, why = _estimate(KIMI / "moonshotai--Kimi-Linear-48B-A3B-Base")
    assert est is not None, why
    assert param_count(est) == 49_122_681_728
    assert est.total_bytes == 98_247_507_968
    assert row_of(est, "self_attn.g_b_proj").instances == 20
    assert not any("language_model" in r.module for r in est.rows)


def test_kimi_k3_and_kimi_linear_features_are_not_mixed():
    cfg = _config(KIMI / "moonshotai--Kimi-Linear-48B-A3B-Base") | {"attn_res_block_size": 12}
    est, why = estimate_weights(resolve_architecture(cfg),
                                summarize(Metadata("x", "local", cfg)), 2)
    assert est is None and "mixes Kimi-K3 features" in why
