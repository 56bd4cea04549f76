"""SGLang 0.5.23's multimodal and prefill-graph rules (issue 11), each checked by hand from the
pinned config and against SGLang's own record (tests/engine_probe/sglang-0.5.23-kv.jsonl).

Shared arithmetic (H100 80GB: 81,559 MiB; TP 1; chunked prefill 8,192; decode graphs up to
256; arg_groups/memory_hook.py:296-322, 357-399): reserve = 512 + 1.5 x 8,192 + 1 x 1,024 / 8
+ 2 x 256 = 13,440 MiB without a prefill graph (0.835 = round((81,559 - 13,440) / 81,559, 3)),
+ 58 x 8 = 464 MiB with one for a non-MLA model (13,904 -> 0.830), + 1,536 MiB for MLA
(14,976 -> 0.816). A multimodal model's fraction is then x 0.95 x max(0.8, min(1.05,
1 - 0.1 x (layers x hidden^2 / (24 x 1024^2) - 1))) (memory_hook.py:417-462), unrounded.
"""

from __future__ import annotations

import pytest
import sglang_record_cases as cases

from kvfit.engines import sglang_mm
from kvfit.engines.common import Inputs
from kvfit.engines.spec import rules_for

RULES = rules_for("sglang", "0.5.23")
GIB, MIB = 1 << 30, 1 << 20


def _point(name: str, tp: int = 1, context: int = 4096):
    return next(p for p in cases.points() if p.dir.endswith(name) and p.tp == tp
                and p.kv == "auto" and p.avail == 40 * GIB and p.context == context)


def _engine(name: str):
    p = _point(name)
    return p, cases.kvfit_engine(p, None), cases.compare(p)


def test_qwen3_vl_fraction_and_ipc_pool_by_hand():
    """Qwen3-VL-32B: multimodal, not in the breakable-graph list -> no prefill graph, 0.835.
    Its SGLang config class has no num_hidden_layers (config.json says depth: 27), so 24 layers
    x hidden 1152: ratio 1152^2 / 1024^2 = 1.265625, adjustment 1 - 0.1 x 0.265625 =
    0.9734375, fraction 0.835 x 0.95 x 0.9734375 = 0.772179296875. On a large SM90 GPU the
    features go by CUDA IPC: 1,024 MiB reserved, no embedding cache (qwen3_vl.py:85-110).
    Cell 64 layers x 8 KV heads x (128 + 128) x 2 B = 262,144 B; tokens
    (40 GiB - 1 GiB) / 262,144 = 39 x 4,096 = 159,744."""
    p, e, r = _engine("Qwen--Qwen3-VL-32B-Instruct")
    assert e["mem_fraction_static"]["value"] == pytest.approx(0.835 * 0.95 * 0.9734375, abs=1e-12)
    assert p.row["resolved"]["mem_fraction_static"] == pytest.approx(0.772179296875, abs=1e-12)
    assert e["multimodal_reserve_bytes"]["value"] == 1024 * MIB
    assert p.row["cell_bytes"] == 64 * 8 * 256 * 2
    assert r["tokens"][:2] == (159744, 159744) == ((40 * GIB - GIB) // 262144,) * 2


def test_kimi_k25_tower_keys_and_mla_graph_by_hand():
    """Kimi-K2.5: an MLA model in the breakable-graph list keeps the prefill graph (0.816); its
    config class reads the tower as vt_num_hidden_layers 27 x vt_hidden_size 1152: ratio
    27 x 1152^2 / (24 x 1024^2) = 1.423828125, adjustment 0.9576171875, fraction
    0.816 x 0.95 x 0.9576171875 = 0.74234484375. cpu transport: the 100 MiB embedding cache.
    Cell 61 layers x (512 + 64) x 2 B = 70,272 B; tokens (42,949,672,960 - 104,857,600) //
    70,272 = 609,699."""
    p, e, r = _engine("moonshotai--Kimi-K2.5")
    assert e["mem_fraction_static"]["value"] == pytest.approx(0.74234484375, abs=1e-12)
    assert p.row["resolved"]["mem_fraction_static"] == pytest.approx(0.74234484375, abs=1e-12)
    assert e["multimodal_reserve_bytes"]["value"] == 100 * MIB
    assert r["tokens"][:2] == (609699, 609699) == ((40 * GIB - 100 * MIB) // (61 * 576 * 2),) * 2


def test_kimi_linear_kda_has_no_prefill_graph_by_hand():
    """Kimi-Linear: KDA layers (linear_attn_config.kda_layers) switch the prefill graph off
    (cuda_graph_hook.py:183-191), so the MLA model reserves 13,440 MiB, not 14,976: 0.835."""
    p, e, _ = _engine("moonshotai--Kimi-Linear-48B-A3B-Base")
    assert e["mem_fraction_static"]["value"] == 0.835 == p.row["resolved"]["mem_fraction_static"]
    assert e["mem_fraction_static"]["reserved_mib"] == 13440
    assert "multimodal_reserve_bytes" not in e


def test_minimax_m3_dict_vision_config_by_hand():
    """MiniMax-M3: SGLang 0.5.23 keeps its vision_config a plain dict, so getattr finds neither
    key and the baseline 24 x 1024 applies (ratio 1, adjustment 1): 0.830 (non-MLA, prefill
    graph kept: listed) x 0.95 = 0.7885."""
    p, e, _ = _engine("nvidia--MiniMax-M3-NVFP4")
    assert e["mem_fraction_static"]["value"] == pytest.approx(0.83 * 0.95, abs=1e-12)
    assert p.row["resolved"]["mem_fraction_static"] == pytest.approx(0.7885, abs=1e-12)


def test_gemma3_is_text_only_by_default_by_hand():
    """Gemma-3 is multimodal by class but served text-only unless --enable-multimodal
    (model_config.py:690-717): 0.830, nothing reserved; cell 507,904 B, tokens
    42,949,672,960 // 507,904 = 84,562."""
    p, e, r = _engine("google--gemma-3-27b-it")
    assert e["mem_fraction_static"]["value"] == 0.83 == p.row["resolved"]["mem_fraction_static"]
    assert "multimodal_reserve_bytes" not in e
    assert r["tokens"][:2] == (84562, 84562) == (40 * GIB // 507904,) * 2


def test_qwen3_vl_off_hopper_keeps_the_embedding_cache():
    """Below SM90 (an A100, capability 8.0) Qwen3-VL gets no CUDA-IPC default: the 100 MiB
    embedding cache is reserved instead (qwen3_vl.py:25; serving_hook.py:829-840)."""
    cfg = {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
           "vision_config": {"depth": 27, "hidden_size": 1152}, "text_config": {}}
    inp = Inputs([], 1, 4096, None, 81920 * MIB, capability="8.0",
                 architectures=("Qwen3VLForConditionalGeneration",), model_config=cfg)
    assert sglang_mm.mm_reservation(RULES, inp, 81920).value == 100 * MIB
    inp.capability = "9.0"
    assert sglang_mm.mm_reservation(RULES, inp, 81920).value == 1024 * MIB
    assert sglang_mm.prefill_graph(RULES, inp)[0] is False


def test_dsa_nvfp4_auto_kv_is_bf16_on_sm90_by_hand():
    """nvidia/DeepSeek-V3.2-NVFP4 declares an FP8 KV cache, but SGLang sets a DSA model's auto
    cache by GPU (overrides.py:490-546): bfloat16 on the SM90 H100. Cell 61 layers x
    ((512 + 64) x 2 B latent + 132 B fp8 index key with its scale) = 61 x 1,284 = 78,324 B;
    42,949,672,960 / 78,324 = 548,358.5 -> 548,352 on 64-token DSA pages."""
    p = _point("nvidia--DeepSeek-V3.2-NVFP4")
    r = cases.compare(p)
    assert p.row["cell_bytes"] == 61 * ((512 + 64) * 2 + 132) == 78324
    assert r["cell_bytes"][:2] == (78324, 78324)
    assert r["tokens"][:2] == (548352, 548352) == (40 * GIB // 78324 // 64 * 64,) * 2


def test_dsa_auto_kv_follows_the_gpu_generation():
    """The same rule from SM100 on gives fp8_e4m3; a config with learnable sinks stays bf16;
    without a GPU kvfit takes bf16 and warns (overrides.py:525-536)."""
    from kvfit.checkpoint import kv_auto
    from kvfit.checkpoint.metadata import Metadata

    meta = Metadata("test", "local", {"architectures": ["DeepseekV32ForCausalLM"]})
    root = {"index_topk": 2048}
    warnings: list[str] = []
    assert kv_auto.by_gpu(RULES, meta, root, "10.0", warnings).name == "fp8_e4m3"
    assert kv_auto.by_gpu(RULES, meta, root, "9.0", warnings).name == "bf16"
    assert kv_auto.by_gpu(RULES, meta, root | {"learnable_sink": True}, "10.0", warnings).name == "bf16"
    assert not warnings
    assert kv_auto.by_gpu(RULES, meta, root, None, warnings).name == "bf16" and len(warnings) == 1
    assert kv_auto.by_gpu(RULES, meta, {}, "10.0", warnings) is None      # no indexer: not DSA


def test_dsa_page_is_64_x_index_kpool_by_hand():
    """A DSA page holds whole pooled index groups: 64 x index_kpool tokens
    (model_overrides/deepseek_v2.py:161-173): GLM-5.3-Flash's text config says index_kpool 4
    -> 256, DeepSeek-V3.2 has none (1) -> 64; SGLang's resolution recorded the same."""
    for name, page in (("zai-org--GLM-5.3-Flash", 256), ("nvidia--DeepSeek-V3.2-NVFP4", 64)):
        p, e, _ = _engine(name)
        assert e["page_size"]["value"] == page == p.row["resolved"]["page_size"]
        assert e["max_total_num_tokens"]["value"] % page == 0
