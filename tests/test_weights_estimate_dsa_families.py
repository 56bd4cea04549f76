"""Config-shape weight estimates for the DeepSeek sparse-attention specs (deepseek_v32,
glm_moe_dsa): MLA, the Lightning Indexer, dense and MoE layers.

Every expected total is derived by hand from a pinned config (derivations in comments); no
pinned safetensors index exists for these checkpoints. fp8-block storage = 1 B per element
+ a float32 scale per 128 x 128 block (specs/quant/weight_storage.yaml). The MTP layers are
loaded only by the draft model and left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.checkpoint.estimate import estimate_weights
from kvfit.checkpoint.metadata import Metadata
from kvfit.checkpoint.quant import summarize
from kvfit.state.resolve import resolve_architecture

ARCH = Path(__file__).resolve().parent / "architectures"


def _estimate(name: str, **override):
    cfg = json.loads((ARCH / name / "config.json").read_text()) | override
    return estimate_weights(resolve_architecture(cfg), summarize(Metadata("x", "local", cfg)), 2)


def _params(est) -> int:
    return sum(r.instances * r.elements for r in est.rows)


def _row(est, suffix: str):
    return next(r for r in est.rows if r.module.endswith(suffix))


def test_deepseek_v32_is_v3_plus_the_indexer():
    # Pinned deepseek-ai/DeepSeek-V3.2: the DeepSeek-V3 shapes (671,026,419,200 parameters,
    # 673,150,611,808 B at fp8-block; test_weights_estimate_mla_families.py) plus
    # index_n_heads 64 x index_head_dim 128 on every one of the 61 layers:
    #   wq_b 8,192 x 1,536 = 12,582,912 (fp8: + 64 x 12 x 4 = 3,072 B -> 12,585,984 B)
    #   wk 128 x 7,168 = 917,504 (fp8: + 1 x 56 x 4 = 224 B -> 917,728 B)
    #   k_norm weight + bias 256 (512 B); weights_proj 64 x 7,168 = 458,752 (bf16, 917,504 B)
    #   -> 13,959,424 parameters, 14,421,728 B per layer; x 61 = 851,524,864 / 879,725,408
    #   total 671,877,944,064 parameters (the card's 685B adds the MTP module);
    #   673,150,611,808 + 879,725,408 = 674,030,337,216 B.
    est, why = _estimate("deepseek_v32/configs/deepseek-ai--DeepSeek-V3.2")
    assert est is not None, why
    assert _params(est) == 671_877_944_064
    assert est.total_bytes == 674_030_337_216
    assert _row(est, "indexer.wq_b").stored_as == "fp8-block"
    assert _row(est, "indexer.weights_proj").stored_as == "model dtype"
    no_dense = json.loads((ARCH / "deepseek_v32/configs/deepseek-ai--DeepSeek-V3.2"
                           / "config.json").read_text())
    del no_dense["first_k_dense_replace"]
    refused, why = estimate_weights(resolve_architecture(no_dense),
                                    summarize(Metadata("x", "local", no_dense)), 2)
    assert refused is None and "first_k_dense_replace" in why


def test_glm5_matches_744b():
    # Pinned zai-org/GLM-5: hidden 6,144, 78 layers (first_k_dense_replace 3), 64 heads,
    # q_lora_rank 2,048, kv_lora_rank 512, qk 192 + 64, v 256, MLP 12,288, 256 routed experts
    # of 2,048 + 1 shared, indexer 32 heads x 128 on every layer, vocab 154,880, untied,
    # noaux_tc, bf16.
    #   embedding + lm_head 2 x 154,880 x 6,144                      =   1,903,165,440
    #   attention per layer: q_a 2,048 x 6,144 = 12,582,912; q_b 16,384 x 2,048 =
    #     33,554,432; kv_a 576 x 6,144 = 3,538,944; kv_b 28,672 x 512 = 14,680,064;
    #     o 6,144 x 16,384 = 100,663,296; norms 2,048 + 512 -> 165,022,208; x 78
    #                                                                =  12,871,732,224
    #   indexer: wq_b 4,096 x 2,048 = 8,388,608; wk 128 x 6,144 = 786,432; k_norm 256;
    #     weights_proj 32 x 6,144 = 196,608 -> 9,371,904; x 78       =     731,008,512
    #   dense MLP 3 x 12,288 x 6,144 = 226,492,416; x 3              =     679,477,248
    #   MoE layer: 257 x 3 x 2,048 x 6,144 = 9,701,425,152, router 256 x 6,144 = 1,572,864,
    #     bias 256 -> 9,702,998,272; x 75                            = 727,724,870,400
    #   norms 78 x 2 x 6,144 + 6,144                                 =         964,608
    #   total 743,911,218,432 (Z.ai's "744B"); bytes x 2 plus 2 B more for each of the
    #   75 x 256 float32 bias values: 1,487,822,436,864 + 38,400 = 1,487,822,475,264.
    est, why = _estimate("glm_moe_dsa/configs/zai-org--GLM-5")
    assert est is not None, why
    assert _params(est) == 743_911_218_432
    assert est.total_bytes == 1_487_822_475_264
    # GLM-5.1 has the same shapes.
    same, _ = _estimate("glm_moe_dsa/configs/zai-org--GLM-5.1")
    assert same.total_bytes == est.total_bytes


def test_glm52_shared_indexer_layers_store_no_indexer():
    # Pinned zai-org/GLM-5.2: GLM-5's shapes, but indexer_types lists 21 `full` layers and 57
    # `shared` ones, which reuse another layer's top-k and store no indexer (the pinned
    # GLM-5.2-FP8 modules_to_not_convert names indexer.k_norm only on the 21 full layers and
    # the MTP layer 78). 743,911,218,432 - 57 x 9,371,904 (534,198,528) = 743,377,019,904.
    est, why = _estimate("glm_moe_dsa/configs/zai-org--GLM-5.2")
    assert est is not None, why
    assert _params(est) == 743_377_019_904
    assert _row(est, "indexer.wk").instances == 21
