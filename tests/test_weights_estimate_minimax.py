"""Config-shape weight estimates for the MiniMax specs (minimax_m1, minimax_m2, minimax_m3).

MiniMax-M1-80k is checked against its pinned model.safetensors.index.json (tensor names and
total_size); the others against totals derived by hand from the pinned configs (no index is
pinned for them). fp8-block = 1 B per element + a float32 scale per 128 x 128 block; nvfp4 =
half a byte per element + one FP8 scale per 16 + 8 B (specs/quant/weight_storage.yaml).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"


def test_minimax_m1_reproduces_its_index_total_size():
    # Pinned MiniMax-M1-80k: hidden 6,144, 80 layers (attn_type_list: 70 lightning, 10
    # softmax), 64 q / 8 KV heads x 128, 32 experts of 9,216, vocab 200,064, untied, bf16.
    #   embed + lm_head 2 x 200,064 x 6,144 + norm 6,144             =    2,458,392,576
    #   every layer: norms 2 x 6,144, router 32 x 6,144 = 196,608, experts 32 x 3 x 9,216 x
    #     6,144 = 5,435,817,984 -> 5,436,026,880; x 80               =  434,882,150,400
    #   lightning: qkv 24,576 x 6,144 = 150,994,944, output_gate and out_proj 2 x 8,192 x
    #     6,144 = 100,663,296, norm 8,192 -> 251,666,432; x 70       =   17,616,650,240
    #   softmax: q and o 2 x 8,192 x 6,144 + k and v 2 x 1,024 x 6,144 = 113,246,208; x 10
    #                                                                =    1,132,462,080
    #   total 456,089,655,296 parameters (MiniMax's "456B"); x 2 B = 912,179,310,592, plus
    #   2 B more for each float32 router value (80 x 196,608 = 15,728,640): 912,210,767,872.
    folder = ARCH / "minimax_m1" / "configs" / "MiniMaxAI--MiniMax-M1-80k"
    est, why = estimate_of(*load_config_dir(folder))
    assert est is not None, why
    assert param_count(est) == 456_089_655_296
    assert est.total_bytes == 912_210_767_872
    # The index: the same total_size (gap 0 B) and one row instance per tensor it lists.
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    assert index["metadata"]["total_size"] - est.total_bytes == 0
    assert sum(r.instances for r in est.rows) == len(index["weight_map"]) == 8_243
    # Every listed module names tensors of the index (weights as <module>.weight).
    names = {k.rsplit(".", 1)[0] for k in index["weight_map"]}
    for r in est.rows:
        pattern = re.compile(re.escape(r.module).replace(r"\{i\}", r"\d+")
                             .replace(r"\{e\}", r"\d+"))
        assert sum(1 for n in names if pattern.fullmatch(n)) == r.instances, r.module


def test_minimax_m2_fp8_and_its_nvfp4_requantisation():
    # Pinned MiniMax-M2.5: hidden 3,072, 62 layers, 48 q / 8 KV heads x 128, per-layer q/k
    # norms, 256 experts of 1,536 with a routing bias, vocab 200,064, untied; fp8 [128, 128]
    # blocks except gate, e_score_correction_bias and lm_head.
    #   embed + lm_head 2 x 200,064 x 3,072 x 2 B + norm 6,144 B     =    2,458,392,576
    #   every layer: norms 12,288; q fp8(6,144, 3,072) = 18,874,368 + 48 x 24 x 4 =
    #     18,878,976; k and v 2 x (3,145,728 + 8 x 24 x 4) = 6,292,992; o 18,878,976;
    #     q_norm 6,144 x 2 + k_norm 1,024 x 2 = 14,336; router 256 x 3,072 x 4 = 3,145,728;
    #     bias 256 x 4 = 1,024; experts 256 x 3 x (4,718,592 + 12 x 24 x 4) = 3,624,763,392
    #     -> 3,671,987,712; x 62                                     =  227,663,238,144
    #   total                                                        =  230,121,630,720 B
    # (228,689,764,864 parameters: MiniMax's "230B total").
    folder = ARCH / "minimax_m2" / "configs" / "MiniMaxAI--MiniMax-M2.5"
    est, why = estimate_of(*load_config_dir(folder))
    assert est is not None, why
    assert param_count(est) == 228_689_764_864
    assert est.total_bytes == 230_121_630_720
    assert row_of(est, "experts.{e}.w1").stored_as == "fp8-block"
    assert row_of(est, "block_sparse_moe.gate").stored_as == "4 B"
    # nvidia/MiniMax-M2.5-NVFP4: NVFP4 (group 16) on every linear except lm_head, every
    # layer's self_attn* and router: attention bf16 2 x (6,144 + 1,024 + 1,024 + 6,144) x
    # 3,072 x ... = 88,080,384 B per layer; experts 256 x 3 x (1,536 x 3,072 / 2 + 1,536 x
    # 192 + 8) = 256 x 3 x 2,654,216 = 2,038,437,888; with norms, q/k norms, router and bias
    # (12,288 + 14,336 + 3,145,728 + 1,024) -> 2,129,691,648 per layer; x 62 =
    # 132,040,882,176 + 2,458,392,576 = 134,499,274,752 B.
    nv, why = estimate_of(*load_config_dir(ARCH / "minimax_m2" / "configs"
                                            / "nvidia--MiniMax-M2.5-NVFP4"))
    assert nv is not None, why
    assert nv.total_bytes == 134_499_274_752
    assert row_of(nv, "self_attn.q_proj").stored_as == "model dtype"
    assert row_of(nv, "experts.{e}.w2").stored_as == "nvfp4"


def test_minimax_m3_text_decoder_bf16_and_nvfp4():
    # Pinned MiniMax-M3 (CURATED flat copy; the same text fields as nvidia/MiniMax-M3-NVFP4's
    # text_config): hidden 6,144, 60 layers (moe_layer_freq: 3 dense then 57 MoE; sparse
    # attention on the same 57), 64 q / 4 KV heads x 128, per-head q/k norms, indexer 4 heads
    # x 128, dense MLP 12,288, 128 experts of 3,072 + 1 shared of 3,072, vocab 200,064, bf16.
    #   embed + lm_head 2 x 200,064 x 6,144 + norm 6,144, x 2 B      =    4,916,785,152
    #   every layer: norms 2 x 6,144 x 2 = 24,576; attention q and o 2 x 8,192 x 6,144 + k and
    #     v 2 x 512 x 6,144 + q/k norms 256 = 106,955,008 values (213,910,016 B); x 60
    #                                                                =   12,836,075,520
    #   sparse layers: index_q 512 x 6,144 + index_k 128 x 6,144 + norms 256 = 3,932,416
    #     values; x 2 B x 57                                         =      448,295,424
    #   dense MLP 3 x 12,288 x 6,144 x 2 B x 3                       =    1,358,954,496
    #   MoE: router 128 x 6,144 x 4 B = 3,145,728 + bias 512 + experts 128 x 3 x 3,072 x
    #     6,144 x 2 = 14,495,514,624 + shared 3 x 3,072 x 6,144 x 2 = 113,246,208
    #     -> 14,611,907,072; x 57                                    =  832,878,703,104
    #   total                                                        =  852,438,813,696 B
    #   (426,174,572,928 parameters).
    est, why = estimate_of(*load_config_dir(ARCH / "minimax_m3" / "configs"
                                             / "MiniMaxAI--MiniMax-M3"))
    assert est is not None, why
    assert param_count(est) == 426_174_572_928
    assert est.total_bytes == 852_438_813_696
    assert row_of(est, "self_attn.index_k_proj").instances == 57
    assert row_of(est, "mlp.gate_proj").instances == 3
    # nvidia/MiniMax-M3-NVFP4: per-module MXFP8 (1 B + one E8M0 byte per 32) on attention,
    # indexer, dense MLP and shared expert; NVFP4 (group 16) on the routed experts.
    #   attention mxfp8: q and o 2 x (50,331,648 + 8,192 x 192) + k and v 2 x (3,145,728 + 512
    #     x 192) + q/k norms 512 = 110,297,600; x 60                 =    6,617,856,000
    #   indexer: 3,145,728 + 98,304 + 786,432 + 24,576 + 512 = 4,055,552; x 57 = 231,166,464
    #   dense MLP 2 x (75,497,472 + 12,288 x 192) + (75,497,472 + 6,144 x 384) = 233,570,304;
    #     x 3                                                        =      700,710,912
    #   MoE: router + bias 3,146,240; experts 128 x 3 x (18,874,368 / 2 + 3,072 x 384 + 8) =
    #     128 x 3 x 10,616,840 = 4,076,866,560; shared 3 x 19,464,192 = 58,392,576
    #     -> 4,138,405,376; x 57                                     =  235,889,106,432
    #   + embed/lm_head/norm 4,916,785,152 + layer norms 60 x 24,576 = 1,474,560
    #   text decoder total                                           =  248,357,099,520 B
    #   + the bf16 vision tower, projector and patch-merge MLP, 865,567,232 parameters x 2 B
    #   (derived in tests/test_weights_estimate_vision_moe.py)     =    1,731,134,464 B
    #   total                                                        =  250,088,233,984 B
    nv, why = estimate_of(*load_config_dir(ARCH / "minimax_m3" / "configs"
                                            / "nvidia--MiniMax-M3-NVFP4"))
    assert nv is not None, why
    assert nv.total_bytes == 248_357_099_520 + 1_731_134_464 == 250_088_233_984
    assert row_of(nv, "self_attn.q_proj").stored_as == "mxfp8"
    assert row_of(nv, "experts.{e}.w1").stored_as == "nvfp4"
