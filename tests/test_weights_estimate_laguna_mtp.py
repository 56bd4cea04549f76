"""Config-shape weight estimates for laguna (per-layer query heads) and the MTP / draft layers of
glm4_moe_lite, mimo_v2_flash and minimax_m3, counted only for a speculative run (`mtp`).

No pinned model.safetensors.index.json exists for any of these checkpoints; every expected total
is derived by hand from the pinned config (arithmetic in the comments). fp8-block = 1 B per
element + a float32 scale per 128 x 128 block (specs/quant/weight_storage.yaml).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.checkpoint.estimate import estimate_weights
from kvfit.checkpoint.metadata import Metadata
from kvfit.checkpoint.quant import summarize
from kvfit.state.resolve import resolve_architecture

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"


def _fp8(rows: int, cols: int) -> int:
    return rows * cols + -(-rows // 128) * -(-cols // 128) * 4


def _with_mtp(cfg: dict, hf: dict | None = None):
    meta = Metadata("x", "local", cfg, quant_config=hf)
    return estimate_weights(resolve_architecture(cfg), summarize(meta), 2, mtp=True)


def test_laguna_xs2_fp8_per_layer_heads():
    # Pinned poolside/Laguna-XS.2-FP8 (UNVERIFIED copy): hidden 2,048, 40 layers (full at
    # 0, 4, ..., 36 with 48 query heads; 30 sliding layers with 64), 8 KV heads x 128,
    # gating true (one gate per query head), mlp_layer_types dense on layer 0 then sparse,
    # MLP 8,192, 256 experts of 512 + a shared expert of 512, vocab 100,352, untied; FP8
    # [128, 128] blocks on every Linear except lm_head, self_attn q/k/v/o/g_proj and mlp.gate.
    #   embed + lm_head 2 x 100,352 x 2,048 x 2 B                     =      822,083,584
    #   every layer, bf16: norms 2 x 2,048, k and v 2 x 1,024 x 2,048, q/k norms 256
    #     = 4,198,656 values; x 2 B x 40                             =      335,892,480
    #   full layers: q and o 2 x 6,144 x 2,048 + g 48 x 2,048 = 25,264,128; x 2 B x 10
    #                                                                =      505,282,560
    #   sliding: q and o 2 x 8,192 x 2,048 + g 64 x 2,048 = 33,685,504; x 2 B x 30
    #                                                                =    2,021,130,240
    #   dense MLP (layer 0) fp8: 3 x (8,192 x 2,048 + 64 x 16 x 4) = 3 x 16,781,312
    #                                                                =       50,343,936
    #   MoE layers: router 256 x 2,048 x 2 B = 1,048,576, float32 bias 1,024, experts 256 x
    #     3 x (512 x 2,048 + 4 x 16 x 4 = 1,048,832), shared 3 x 1,048,832
    #     -> 809,699,072; x 39                                       =   31,578,263,808
    #   final norm                                                   =            4,096
    #   total                                                        =   35,313,000,704 B
    # (33,442,617,088 parameters: Poolside's "33B" XS.2)
    est, why = estimate_of(*load_config_dir(ARCH / "laguna/configs/poolside--Laguna-XS.2-FP8"))
    assert est is not None, why
    assert est.total_bytes == 35_313_000_704
    assert param_count(est) == 33_442_617_088
    q = {r.instances: r.elements for r in est.rows if r.module.endswith("self_attn.q_proj")}
    assert q == {10: 6144 * 2048, 30: 8192 * 2048, 0: 9216 * 2048}
    assert row_of(est, "experts.{e}.up_proj").stored_as == "fp8-block"
    assert row_of(est, "self_attn.g_proj").stored_as == "model dtype"
    assert row_of(est, "experts.{e}.down_proj").routed


def test_laguna_s21_keeps_its_excluded_dense_and_shared_mlps_bf16():
    # Pinned poolside/Laguna-S-2.1-FP8 (UNVERIFIED): hidden 3,072, 48 layers (12 full with 48
    # heads, 36 sliding with 72), 8 KV heads x 128, gating "per-head", dense layer 0 of 12,288,
    # 256 experts of 1,024 + shared 1,024, vocab 100,352; the ignore list adds layer 0's MLP
    # and every shared_expert projection to the bf16 attention and router.
    #   embed + lm_head 2 x 100,352 x 3,072 x 2 B + norm 6,144       =    1,233,131,520
    #   every layer: (2 x 3,072 + 2 x 1,024 x 3,072 + 256) x 2 B x 48 =      604,569,600
    #   full: (2 x 6,144 x 3,072 + 48 x 3,072) x 2 B x 12             =      909,508,608
    #   sliding: (2 x 9,216 x 3,072 + 72 x 3,072) x 2 B x 36          =    4,092,788,736
    #   dense MLP 3 x 12,288 x 3,072 x 2 B                            =      226,492,416
    #   MoE: router 1,572,864 + bias 1,024 + experts 256 x 3 x (1,024 x 3,072 + 8 x 24 x 4 =
    #     3,146,496) + shared 3 x 1,024 x 3,072 x 2 B -> 2,437,037,056; x 47
    #                                                                =  114,540,741,632
    #   total                                                        =  121,603,503,104 B
    est, why = estimate_of(*load_config_dir(ARCH / "laguna/configs/poolside--Laguna-S-2.1-FP8"))
    assert est is not None, why
    assert _fp8(1024, 3072) == 3_146_496
    assert est.total_bytes == 121_603_503_104
    assert param_count(est) == 117_561_977_600
    assert row_of(est, "shared_expert.up_proj").stored_as == "model dtype"
    assert row_of(est, "layers.{i}.mlp.gate_proj").stored_as == "model dtype"


def test_laguna_gating_words_and_refusals():
    cfg, hf = load_config_dir(ARCH / "laguna/configs/poolside--Laguna-XS.2-FP8")
    base, _ = estimate_of(cfg, hf)
    # "per-head" (a word) is the same gate as true (a boolean): one output per query head.
    same, why = estimate_of(cfg | {"gating": "per-head"}, hf)
    assert same is not None and same.total_bytes == base.total_bytes, why
    # "per-element": one gate per channel, g_proj head_dim times wider (bf16, ignored by FP8):
    # 10 x 48 x 127 + 30 x 64 x 127 more rows of 2,048.
    wide, why = estimate_of(cfg | {"gating": "per-element"}, hf)
    assert wide is not None, why
    assert param_count(wide) - param_count(base) == (10 * 48 + 30 * 64) * 127 * 2048
    # gating false, an unlisted head count or a missing mlp_layer_types: no estimate, and why.
    for change, word in (({"gating": False}, "gating"),
                         ({"num_attention_heads_per_layer": [40] * 40}, "query-head count"),
                         ({"mlp_layer_types": None}, "mlp_layer_types")):
        refused, why = estimate_of({k: v for k, v in (cfg | change).items() if v is not None}, hf)
        assert refused is None and word in why, why
    # Without the per-layer list every layer has num_attention_heads (48).
    flat = {k: v for k, v in cfg.items() if k != "num_attention_heads_per_layer"}
    est, why = estimate_of(flat, hf)
    assert est is not None, why
    q = [r for r in est.rows if r.module.endswith("q_proj") and r.instances]
    assert [(r.instances, r.elements) for r in q] == [(40, 6144 * 2048)]


def test_glm47_flash_mtp_layer_as_the_checkpoint_stores_it():
    # The pinned CURATED GLM-4.7-Flash config dropped num_nextn_predict_layers; the upstream
    # config declares 1 (model.layers.47). Main model: 29,943,393,920 parameters
    # (tests/test_weights_estimate_latent_moe.py). The MTP layer:
    #   embed_tokens and shared_head.head 2 x 154,880 x 2,048         =      634,388,480
    #   eh_proj 2,048 x 4,096 = 8,388,608; enorm, hnorm, shared_head.norm 3 x 2,048 = 6,144
    #   attention 21,759,232 + 2 norms 4,096; MoE block 613,548,096 (layer 47 > first dense)
    #   -> 1,278,094,656 parameters; total 31,221,488,576 in 9,703 tensors (48 x 11 attention
    #   and norm tensors, 47 x (3 x 64 + 5) MoE, 3 dense MLP, 6 MTP-only, embed, norm, lm_head).
    # Bytes: 2,556,189,440 more (the float32 bias: 64 x 2 B extra).
    cfg, hf = load_config_dir(ARCH / "glm4_moe_lite/configs/zai-org--GLM-4.7-Flash")
    cfg = cfg | {"num_nextn_predict_layers": 1}
    main, _ = estimate_of(cfg, hf)
    est, why = _with_mtp(cfg, hf)
    assert est is not None and "MTP layers included" in why, why
    assert param_count(main) == 29_943_393_920
    assert param_count(est) - param_count(main) == 1_278_094_656
    assert param_count(est) == 31_221_488_576
    assert sum(r.instances for r in est.rows) == 9_703
    assert est.total_bytes - main.total_bytes == 2 * 1_278_094_656 + 64 * 2
    assert row_of(est, "shared_head.head").instances == 1
    # Without `mtp` (or without a declared MTP layer) nothing of layer 47 is counted.
    plain, _ = _with_mtp(load_config_dir(ARCH / "glm4_moe_lite/configs/zai-org--GLM-4.7-Flash")[0])
    assert plain.total_bytes == main.total_bytes == 59_886_793_728


def test_mimo_v2_flash_mtp_layer_loaded_by_a_speculative_run():
    # Pinned XiaomiMiMo/MiMo-V2-Flash: hidden 4,096, swa 64 q / 8 KV heads, K 192 / V 128, SWA
    # sink bias, MLP 16,384, FP8 [128, 128] blocks with no exclusions. One MTP layer (the one
    # vLLM and SGLang load):
    #   norms 5 x 4,096 x 2 B = 40,960; eh_proj bf16 2 x 4,096^2 x 2 B = 67,108,864
    #   q fp8(12,288, 4,096) = 50,343,936; k fp8(1,536, 4,096) = 6,292,992; v fp8(1,024,
    #   4,096) = 4,195,328; o fp8(4,096, 8,192) = 33,562,624; sink 64 x 2 B = 128
    #   MLP 3 x fp8(16,384, 4,096) = 3 x 67,125,248 = 201,375,744
    #   -> 362,920,576 B (329,273,408 parameters)
    cfg, hf = load_config_dir(ARCH / "mimo_v2_flash/configs/XiaomiMiMo--MiMo-V2-Flash")
    main, _ = estimate_of(cfg, hf)
    est, why = _with_mtp(cfg, hf)
    assert est is not None, why
    assert _fp8(12288, 4096) == 50_343_936 and _fp8(16384, 4096) == 67_125_248
    assert est.total_bytes - main.total_bytes == 362_920_576
    assert param_count(est) - param_count(main) == 329_273_408
    assert row_of(est, "mtp.layers.{r}.eh_proj").stored_as == "model dtype"
    assert row_of(est, "mtp.layers.{r}.mlp.up_proj").stored_as == "fp8-block"


def test_minimax_m3_mtp_modules():
    # Pinned MiniMax-M3 (CURATED): num_mtp_modules 7. Each module (bf16): enorm, hnorm,
    # final_layernorm and two layer norms 5 x 6,144 = 30,720; eh_proj 6,144 x 12,288 =
    # 75,497,472; attention q and o 2 x 8,192 x 6,144 + k and v 2 x 512 x 6,144 + q/k norms 256
    # = 106,955,008; indexer 512 x 6,144 + 128 x 6,144 + 256 = 3,932,416; router 128 x 6,144
    # (float32: 786,432 values, 4 B) + bias 128 (4 B); experts 128 x 3 x 3,072 x 6,144 =
    # 7,247,757,312; shared 3 x 3,072 x 6,144 = 56,623,104.
    #   parameters per module 7,491,582,592; x 7 = 52,441,078,144
    #   bytes per module: 7,491,582,592 x 2 + (786,432 + 128) x 2 (float32) = 14,984,738,304;
    #   x 7 = 104,893,168,128
    folder = ARCH / "minimax_m3" / "configs"
    cfg, hf = load_config_dir(folder / "MiniMaxAI--MiniMax-M3")
    main, _ = estimate_of(cfg, hf)
    est, why = _with_mtp(cfg, hf)
    assert est is not None, why
    assert param_count(est) - param_count(main) == 7 * 7_491_582_592
    assert est.total_bytes - main.total_bytes == 7 * 14_984_738_304 == 104_893_168_128
    assert row_of(est, "mtp.layers.{r}.block_sparse_moe.experts.{e}.w1").instances == 7 * 128
    # nvidia/MiniMax-M3-NVFP4 declares 1 module; its per-module quantization names no MTP
    # module, so the module is counted at bf16 (no pinned file shows how NVIDIA stores it).
    ncfg, nhf = load_config_dir(folder / "nvidia--MiniMax-M3-NVFP4")
    nmain, _ = estimate_of(ncfg, nhf)
    nv, why = _with_mtp(ncfg, nhf)
    assert nv is not None, why
    assert nv.total_bytes - nmain.total_bytes == 14_984_738_304
    assert row_of(nv, "mtp.layers.{r}.block_sparse_moe.experts.{e}.w2").stored_as == "model dtype"


def test_a_string_field_reads_a_json_boolean_as_its_spelling():
    # Laguna's gating is true in one config and "per-head" in another; both resolve.
    from kvfit.state.fields import resolve_fields

    cfg = json.loads((ARCH / "laguna/configs/poolside--Laguna-XS.2-FP8/config.json").read_text())
    res = resolve_architecture(cfg)
    params = res.arch.parameters
    got = resolve_fields(res.arch, res.root, res.prefix, params.fields, res.fields)
    assert got["gating"].value == "true"
