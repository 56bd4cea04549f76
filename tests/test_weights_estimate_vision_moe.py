"""Config-shape weight estimates of the vision towers and projectors of the large multimodal MoE
checkpoints: Kimi-K2.5 / K2.6 (MoonViT, patchmerger), Kimi-K3 (MoonViT, patchmergerv2) and
nvidia/MiniMax-M3-NVFP4 (CLIP-style tower, projector, patch-merge MLP).

No pinned model.safetensors.index.json exists for these checkpoints: every expected count is
derived by hand from the pinned config's vision_config (arithmetic in the comments) under the
module shapes of vLLM 0.33's own model code (cited in the specs' parameters sources).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"


def _vision(est, *prefixes: str) -> tuple[int, int]:
    rows = [r for r in est.rows if r.module.startswith(prefixes)]
    return sum(r.instances * r.elements for r in rows), sum(r.bytes for r in rows)


KIMI = ("vision_tower.", "mm_projector.")

# Kimi-K2.5 MoonViT (vision_config: vt_hidden 1,152, vt_intermediate 4,304, 27 layers, patch
# 14, 64 x 64 position table, merge [2, 2], patchmerger into 7,168; no attn_bias / linear_bias /
# norm_type / patch_embed_proj_bias keys: vLLM's defaults, biases on and LayerNorms):
#   patch_embed.proj 1,152 x 3 x 14 x 14 + 1,152                 =       678,528
#   pos_emb 64 x 64 x 1,152                                      =     4,718,592
#   block: norm0 / norm1 4 x 1,152 = 4,608; wqkv 3,456 x 1,152 + 3,456 = 3,984,768; wo
#     1,152^2 + 1,152 = 1,328,256; fc0 4,304 x 1,152 + 4,304 = 4,962,512; fc1 1,152 x 4,304
#     + 1,152 = 4,959,360 -> 15,239,504; x 27                    =   411,466,608
#   final_layernorm 2 x 1,152                                    =         2,304
#   projector: pre_norm 2,304; proj.0 4,608^2 + 4,608 = 21,238,272; proj.2 7,168 x 4,608 +
#     7,168 = 33,037,312                                         =    54,277,888
#   total                                                        =   471,143,920
K25_TOWER = 678_528 + 4_718_592 + 411_466_608 + 2_304 + 54_277_888


def test_kimi_k25_moonvit_and_patchmerger_at_bf16_under_int4():
    assert K25_TOWER == 471_143_920
    est, why = estimate_of(*load_config_dir(ARCH / "kimi_k25/configs/moonshotai--Kimi-K2.5"))
    assert est is not None, why
    # The compressed-tensors INT4 declaration targets every Linear, but vLLM builds the tower
    # and projector without it (_maybe_ignore_quant_config): 2 B per parameter.
    assert _vision(est, *KIMI) == (K25_TOWER, 2 * K25_TOWER)
    assert row_of(est, "encoder.blocks.{r}.wqkv").instances == 27
    assert not any(r.module.startswith("mm_projector.linear_") for r in est.rows)
    # The NVFP4 re-quantisations carry the same vision_config.
    for name in ("nvidia--Kimi-K2.5-NVFP4", "nvidia--Kimi-K2.6-NVFP4"):
        nv, why = estimate_of(*load_config_dir(ARCH / "kimi_k25/configs" / name))
        assert nv is not None, why
        assert _vision(nv, *KIMI) == (K25_TOWER, 2 * K25_TOWER), name


def test_kimi_k3_moonvit_rmsnorm_without_biases_and_patchmergerv2():
    # Kimi-K3 vision_config: vt_hidden 1,024, vt_intermediate 4,096, 12 heads, qkv_hidden_size
    # 1,536, 27 layers, rmsnorm, attn_bias / linear_bias / patch_embed_proj_bias false,
    # patchmergerv2 into 7,168:
    #   patch_embed.proj 1,024 x 3 x 14 x 14                       =       602,112
    #   pos_emb 64 x 64 x 1,024                                    =     4,194,304
    #   block: norms 2 x 1,024 = 2,048; wqkv 4,608 x 1,024 = 4,718,592; wo 1,024 x 1,536 =
    #     1,572,864; fc0 and fc1 2 x 4,096 x 1,024 = 8,388,608 -> 14,682,112; x 27
    #                                                              =   396,417,024
    #   final_layernorm 1,024
    #   projector: linear_1 4,096^2 = 16,777,216; linear_2 7,168 x 4,096 = 29,360,128;
    #     post_norm 7,168                                          =    46,144,512
    #   total                                                      =   447,358,976
    # This is exactly the gap between the text decoder's bf16 values and the Hub's BF16 count
    # for moonshotai/Kimi-K3, and the rows are its 168 vision tensors
    # (tests/test_weights_estimate_v4_kimi.py).
    tower = 602_112 + 4_194_304 + 396_417_024 + 1_024 + 46_144_512
    assert tower == 447_358_976
    est, why = estimate_of(*load_config_dir(ARCH / "kimi_linear/configs/moonshotai--Kimi-K3"))
    assert est is not None, why
    assert _vision(est, *KIMI) == (tower, 2 * tower)
    assert row_of(est, "mm_projector.post_norm").elements == 7168
    assert not any(r.module.startswith("mm_projector.proj.") for r in est.rows)
    # Kimi-Linear-48B (text only, no vision_config): no tower rows.
    lin, why = estimate_of(*load_config_dir(
        ARCH / "kimi_linear/configs/moonshotai--Kimi-Linear-48B-A3B-Base"))
    assert lin is not None, why
    assert _vision(lin, *KIMI) == (0, 0)


def test_kimi_vision_config_the_rows_do_not_describe_is_refused():
    cfg, hf = load_config_dir(ARCH / "kimi_k25/configs/moonshotai--Kimi-K2.5")
    bad = json.loads(json.dumps(cfg))
    bad["vision_config"]["text_hidden_size"] = 4096
    refused, why = estimate_of(bad, hf)
    assert refused is None and "text_hidden_size" in why
    # Without vision_config the text decoder alone is estimated.
    text = {k: v for k, v in cfg.items() if k != "vision_config"}
    alone, why = estimate_of(text, hf)
    full, _ = estimate_of(cfg, hf)
    assert alone is not None, why
    assert full.total_bytes - alone.total_bytes == 2 * K25_TOWER


def test_minimax_m3_nvfp4_vision_tower_projector_and_patch_merger():
    # nvidia/MiniMax-M3-NVFP4 vision_config: hidden 1,280, 32 layers, MLP 5,120, patch 14,
    # 3 channels, temporal patch 2, spatial merge 2, rope positions (no table); top level
    # projector_hidden_size 6,144, text hidden 6,144; projector and merge biases on.
    #   patch_embedding (no bias) 1,280 x 3 x 2 x 14 x 14          =     1,505,280
    #   pre_layrnorm 2 x 1,280                                     =         2,560
    #   layer: layer norms 4 x 1,280 = 5,120; q/k/v/out 4 x (1,280^2 + 1,280) = 6,558,720;
    #     fc1 5,120 x 1,280 + 5,120 = 6,558,720; fc2 1,280 x 5,120 + 1,280 = 6,554,880
    #     -> 19,677,440; x 32                                      =   629,678,080
    #   multi_modal_projector: 6,144 x 1,280 + 6,144 = 7,870,464; 6,144^2 + 6,144 =
    #     37,754,880                                               =    45,625,344
    #   patch_merge_mlp: 6,144 x 24,576 + 6,144 = 151,001,088; 37,754,880
    #                                                              =   188,755,968
    #   total                                                      =   865,567,232
    tower = 1_505_280 + 2_560 + 629_678_080 + 45_625_344 + 188_755_968
    assert tower == 865_567_232
    folder = ARCH / "minimax_m3/configs"
    est, why = estimate_of(*load_config_dir(folder / "nvidia--MiniMax-M3-NVFP4"))
    assert est is not None, why
    prefixes = ("vision_tower.", "multi_modal_projector.", "patch_merge_mlp.")
    # The NVFP4 exclusion list names vision_tower, multi_modal_projector and patch_merge_mlp.
    assert _vision(est, *prefixes) == (tower, 2 * tower)
    assert row_of(est, "encoder.layers.{r}.mlp.fc1").stored_as == "model dtype"
    assert param_count(est) == 426_174_572_928 + tower
    # The flat text-only MiniMax-M3 config has no tower.
    flat, _ = estimate_of(*load_config_dir(folder / "MiniMaxAI--MiniMax-M3"))
    assert _vision(flat, *prefixes) == (0, 0)
