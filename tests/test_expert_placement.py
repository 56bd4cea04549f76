"""Expert placement for every MoE (issue 12 part 3): routed-expert vs other bytes from the
spec's tagged `parameters:` rows when there are no headers and no pinned split, attention-DP
keeping each group's own histories, and TP+EP against DP+EP for a partly latent hybrid.

DeepSeek-V3 (tests/architectures/deepseek_v3/configs/deepseek-ai--DeepSeek-V3, pinned in
SOURCE.txt: hidden 7168, 61 layers of which 3 dense, 128 heads, q_lora_rank 1536,
kv_lora_rank 512, qk_rope_head_dim 64, qk_nope 128, v 128, intermediate 18432, 256 routed
experts of 2048 + 1 shared, vocab 129280, FP8 128 x 128 blocks), by hand. FP8-block storage
is 1 B per element + a float32 scale per 128 x 128 block (specs/quant/weight_storage.yaml);
norms, router, embeddings and lm_head (`count:` rows) stay bf16, the router bias float32.
  routed expert, gate/up [2048, 7168]: 14,680,064 + 16 x 56 x 4 = 14,683,648 B; down the same
    per expert 3 x 14,683,648 = 44,050,944 B; x 256 experts x 58 MoE layers
                                                                 = 654,068,416,512 B routed
  other: attention per layer (q_a 11,012,736 + q_a_norm 3,072 + q_b 37,757,952 + kv_a
    4,129,888 + kv_a_norm 1,024 + kv_b 16,781,312 + o 117,469,184 + 2 norms 28,672)
    = 187,183,840 x 61 = 11,418,214,240; dense MLP 3 x 132,152,832 x 3 layers = 1,189,375,488;
    MoE router 3,670,016 + bias 1,024 + shared expert 44,050,944 = 47,721,984 x 58
    = 2,767,875,072; embed + lm_head 2 x 1,853,358,080; final norm 14,336
                                                                 =  19,082,195,296 B other
State per sequence at 131,072 tokens (bf16): (kv_lora_rank 512 + qk_rope_head_dim 64) = 576
  values x 2 B x 61 layers x 131,072 = 9,210,691,584 B, one shared latent row per token that
  TP cannot split (every TP rank keeps all of it).
One DGX H200 (8 x h200-141, visible 143,771 MiB): budget int(143,771 MiB x 0.9)
  = 135,679,338,086 B per GPU, no reserve.
  TP8: weights (654,068,416,512 + 19,082,195,296) / 8 = 84,143,826,476 B; left
    51,535,511,610 -> 5 sequences (x 9,210,691,584 = 46,053,457,920), each held on all 8
    ranks.
  DPA8 / attention TP1 / EP8: 654,068,416,512 / 8 = 81,758,552,064 B of experts + all
    19,082,195,296 B of the other tensors = 100,840,747,360 B; one 64-token padding page
    64 x 61 x 1,152 = 4,497,408 B; left 34,834,093,318 -> 3 sequences per attention group,
    x 8 groups = 24: each group keeps only its own sequences' latent.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from kvfit.checkpoint.metadata import Metadata
from kvfit.errors import UsageError
from kvfit.hardware.presets import find_system
from kvfit.planner import ownership
from kvfit.planner.dpa import dpa_layouts
from kvfit.planner.dpa_notes import split_note
from kvfit.planner.expert_split import classify, header_patterns
from kvfit.planner.layouts import Budget
from kvfit.planner.systems import of_system
from kvfit.specs.registry import builtin_architecture as load_architecture
from kvfit.state.evaluate import ComponentState

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "architectures"
DSV3 = CONFIGS / "deepseek_v3" / "configs" / "deepseek-ai--DeepSeek-V3"
H200 = ("--system", "dgx-h200", "--context", "128k")
GIB = 2**30


def _lay(report: dict, lid: str) -> dict:
    return next(x for x in report["layouts"] if x["id"] == lid)


def test_must_show_deepseek_v3_dpa_holds_more_128k_sequences_than_tp8():
    code, r = run_json(DSV3, *H200, "--parallelism", "sglang-dpa")
    assert code == 0
    ep = r["expert_parallel"]
    assert ep["source"] == "config estimate" and ep["detail"].startswith("ESTIMATE")
    assert (ep["routed_expert_bytes"], ep["non_expert_bytes"]) == (654068416512, 19082195296)
    assert ep["routed_experts"] == 256
    assert r["state"]["bytes_per_sequence"] == 9210691584
    tp8, dpa8 = _lay(r, "tp8"), _lay(r, "sglang-dpa-g8-a8")
    assert tp8["per_rank"]["weights_bytes"] == 84143826476 and tp8["max_sequences"] == 5
    p = dpa8["per_rank"]
    assert (p["routed_expert_bytes"], p["non_expert_bytes"]) == (81758552064, 19082195296)
    assert p["weights_bytes"] == 100840747360 and p["padding_bytes"] == 4497408
    assert p["budget_bytes"] == 135679338086
    assert dpa8["sequences_per_group"] == 3 and dpa8["max_sequences"] == 24
    assert r["recommended"]["id"] == "sglang-dpa-g8-a8"
    note = r["placement_notes"][0]
    assert "holds 24 resident sequences where TP=8 x DP=1 holds 5" in note
    assert "because each attention group keeps its own sequences' histories" in note
    code, out, _ = run_cli(DSV3, *H200, "--parallelism", "sglang-dpa")
    assert "each attention group keeps its own sequences' histories" in out
    assert "Weights ESTIMATED from config shapes" in out
    code, out, _ = run_cli(DSV3, *H200, "--parallelism", "sglang-dpa", "--verbose")
    assert "Expert ownership (config estimate): ESTIMATE" in out


def test_vllm_dp_ep_plans_deepseek_v3_offline_too():
    code, r = run_json(DSV3, *H200, "--parallelism", "vllm-dp-ep")
    assert code == 0
    lay = _lay(r, "vllm-dp-ep-g8-a8")
    assert lay["label"] == "DP8 x attention TP1 + EP8" and lay["max_sequences"] == 24


@pytest.mark.parametrize("config", [
    "deepseek_v3/configs/deepseek-ai--DeepSeek-R1",
    "deepseek_v32/configs/deepseek-ai--DeepSeek-V3.2",
    "kimi_k2/configs/moonshotai--Kimi-K2-Instruct",
    "qwen3_moe/configs/Qwen--Qwen3-235B-A22B",
    "gpt_oss/configs/openai--gpt-oss-120b",
])
def test_moe_families_plan_attention_dp_offline_from_their_parameters(config):
    code, r = run_json(CONFIGS / config, "--system", "dgx-h200", "--context", "32k",
                       "--parallelism", "sglang-dpa")
    assert code in (0, 1) and r["fits"] is not None
    ep = r["expert_parallel"]
    assert ep["routed_expert_bytes"] > ep["non_expert_bytes"] > 0
    assert any(x["parallelism"] == "sglang-dpa" and x["valid"] for x in r["layouts"])


def test_estimate_split_is_scaled_to_a_known_total():
    # --weight-gib 600 states the checkpoint's bytes; the estimate gives only the routed share
    # 654,068,416,512 / 673,150,611,808: routed = floor(600 GiB x that share).
    code, r = run_json(DSV3, *H200, "--parallelism", "sglang-dpa", "--weight-gib", "600")
    ep = r["expert_parallel"]
    total = 600 * GIB
    assert ep["routed_expert_bytes"] == total * 654068416512 // 673150611808
    assert ep["total_bytes"] == total and "routed share" in ep["detail"]


def test_routed_rows_name_the_expert_tensors_in_real_headers():
    arch = load_architecture("deepseek_v3")
    assert sum(t.routed for t in arch.parameters.tensors) == 6       # 3 main + 3 MTP rows
    pats = header_patterns(arch)
    assert classify("model.layers.3.mlp.experts.17.gate_proj.weight", pats) == (True, 17)
    assert classify("model.layers.61.mlp.experts.255.down_proj.weight_scale_inv",
                    pats) == (True, 255)
    assert classify("model.layers.3.mlp.shared_experts.gate_proj.weight", pats) == (False, None)
    assert classify("model.layers.3.mlp.gate.weight", pats) == (False, None)
    # gpt-oss stores each layer's experts stacked (MXFP4 `_blocks` / `_scales`, and biases)
    pats = header_patterns(load_architecture("gpt_oss"))
    for name in ("model.layers.0.mlp.experts.gate_up_proj_blocks",
                 "model.layers.0.mlp.experts.down_proj_scales",
                 "model.layers.0.mlp.experts.gate_up_proj_bias"):
        assert classify(name, pats) == (True, None)
    assert classify("model.layers.0.mlp.router.weight", pats) == (False, None)


def test_headers_classified_by_routed_rows_spread_stacked_experts_evenly():
    # A toy arch without an `experts:` block: one per-expert row and one stacked row.
    rows = [SimpleNamespace(module="m.{i}.experts.{e}.w", routed=True),
            SimpleNamespace(module="m.{i}.experts.stack", routed=True)]
    arch = SimpleNamespace(id="toy", experts=None, parameters=SimpleNamespace(tensors=rows))
    est = SimpleNamespace(rows=(SimpleNamespace(routed=True, experts=4, bytes=1),),
                          total_bytes=2, detail="toy")
    tensors = {**{f"m.0.experts.{e}.w": 10 for e in range(4)}, "m.0.experts.stack_blocks": 42,
               "m.0.attn.q.weight": 7}
    meta = Metadata("toy", "hub", {}, tensor_bytes=tensors)
    own = ownership.establish(meta, arch, {}, None, lambda: (est, ""))
    # 42 stacked bytes over 4 experts: 11, 11, 10, 10 (the remainder on the first ranks)
    assert own.source == "safetensors headers" and own.expert_bytes == (21, 21, 20, 20)
    assert (own.routed_bytes, own.non_expert_bytes) == (82, 7)


def test_uneven_experts_are_an_engine_rule():
    own = ownership.Ownership("t", "", 8, 80, 0, tuple([10] * 8))
    assert own.problem(6, even=True) == "EP=6 does not divide the 8 routed experts"
    assert own.problem(6, even=False) is None and own.problem(9, even=False) is not None
    # vLLM's map: 8 experts over 6 ranks -> 2, 2, 1, 1, 1, 1; the fullest rank holds 20 B
    assert own.blocks(6) == [(0, 2), (2, 4), (4, 5), (5, 6), (6, 7), (7, 8)]
    assert own.rank_bytes(6) == 20
    summary = ownership.Ownership("t", "", 8, 80, 0)
    assert summary.rank_bytes(6) == 20 and summary.rank_bytes(8) == 10


def test_a_spec_without_parameters_says_so():
    arch = SimpleNamespace(id="bare", experts=None, parameters=None)
    with pytest.raises(UsageError, match="lists no tensor shapes"):
        ownership.establish(Metadata("x", "hub", {}), arch, {}, None, lambda: (None, "no"))


def _kimi_like_state() -> list[ComponentState]:
    """Kimi-K3's state shape at 131,072 tokens, FP8 KV (tests/architectures/kimi_linear/
    configs/moonshotai--Kimi-K3: 24 MLA layers of 576 values, 69 KDA layers of 96 heads x 128):
      mla-latent 24 x 131,072 x 576 x 1 B = 1,811,939,328 B, replicated
      kda-conv   69 x 3 x 96 x 128 x 3 x 2 B = 15,261,696 B, split by 96 heads
      kda-recurrent 69 x 96 x 128 x 128 x 4 B = 434,110,464 B, split by 96 heads"""
    return [
        ComponentState("mla-latent", "latent", "", "mla", 24, 131072, 576, 1811939328, None,
                       "", "logical"),
        ComponentState("kda-conv", "constant", "", "kda", 69, 1, 221184, 15261696, 96, "",
                       "logical"),
        ComponentState("kda-recurrent", "constant", "", "kda", 69, 1, 6291456, 434110464, 96,
                       "", "logical"),
    ]


def test_tp_ep_beats_dp_ep_when_only_a_quarter_of_the_layers_keep_a_latent():
    # Synthetic bytes (not Kimi-K3's, which kvfit cannot count yet): 960 GiB of routed experts
    # over EP16 = 60 GiB per GPU, 36 GiB of other tensors, 100 GiB budget, no reserve.
    #   TP16+EP: 60 + 36/16 = 62.25 GiB = 66,840,428,544 B; state per sequence per rank
    #     1,811,939,328 + 449,372,160/16 = 1,840,025,088; padding 64 x 24 x 576 = 884,736 +
    #     one KDA slot 28,085,760; left 107,374,182,400 - 66,840,428,544 - 28,970,496
    #     = 40,504,783,360 -> 22 sequences (one attention group).
    #   DP16+EP: 60 + 36 = 96 GiB = 103,079,215,104 B; state 2,261,311,488; padding 884,736
    #     + 449,372,160; left 3,844,710,400 -> 1 per group x 16 groups = 16.
    comps = _kimi_like_state()
    own = ownership.Ownership("t", "", 384, 960 * GIB, 36 * GIB)
    topo = of_system(find_system("dgx-h200"), 2)
    lays = dpa_layouts("sglang-dpa", topo, own, comps, Budget(100 * GIB, 1.0, 0), 1, [], 16)
    by = {x.attention_dp: x for x in lays}
    assert by[1].per_rank.weights_bytes == 66840428544 and by[1].max_sequences == 22
    assert by[16].per_rank.weights_bytes == 103079215104 and by[16].max_sequences == 16
    note = split_note(lays, comps)
    assert note.startswith("DPA1 / attention TP16 / EP16 (TP+EP) holds 22 sequences and "
                           "DPA16 / attention TP1 / EP16 (DP+EP) 16")
    assert "mla-latent is replicated on every attention-TP rank (1.688 GiB under both)" in note
    assert "kda-conv, kda-recurrent is sharded by heads (0.026 GiB at attention TP16, " \
           "0.419 GiB at TP1)" in note
    assert "TP+EP wins: the replicated rows sit on only 24 layers" in note
    assert re.search(r"other tensors take 2\.250 GiB per rank at TP16 and 36\.000 GiB", note)


@pytest.mark.parametrize(("nodes", "tp"), [(2, 16), (4, 32)])
def test_must_show_kimi_k3_plans_expert_parallel_layouts_to_a_kv_token_count(nodes, tp):
    # The kimi_linear parameters (merged from params-moe) tag the routed experts; the SGLang
    # prediction gives each layout's pool tokens; the report states the weights' basis and
    # compares TP+EP with DP+EP (latent replicated per TP rank, KDA state sharded).
    k3 = CONFIGS / "kimi_linear" / "configs" / "moonshotai--Kimi-K3"
    code, r = run_json(k3, "--system", "dgx-h200", "--nodes", str(nodes), "--tp", str(tp),
                       "--engine", "sglang", "--kv-dtype", "fp8", "--parallelism", "sglang-dpa")
    # Kimi-K3 is multimodal and KDA-hybrid in SGLang: its fraction is x 0.95 x 0.9875 for the
    # 27 x 1024 tower and has no prefill graph (0.767 at TP 8 in SGLang's own record,
    # tests/test_sglang_mm_rules.py), so on 2 nodes no layout holds one 1M-token sequence
    # (exit 1) and on 4 nodes one does (exit 0); every layout still plans to pool tokens.
    assert code == (1 if nodes == 2 else 0)
    assert r["weights"]["source"] == "config estimate"
    assert r["expert_parallel"]["source"] == "config estimate"
    tp_ep = _lay(r, f"sglang-dpa-g{tp}-a1")
    assert tp_ep["engine"]["max_total_num_tokens"]["value"] > 0
    note = next(n for n in r["placement_notes"] if "(TP+EP)" in n)
    assert "mla-latent is replicated on every attention-TP rank" in note
    assert "kda-conv, kda-recurrent is sharded by heads" in note
