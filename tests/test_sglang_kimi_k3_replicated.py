"""Kimi-K3 under SGLang at TP16 / TP32 + EP: the weights every rank holds whole (issue 24).

The one public SGLang figure for this layout (H200, FP8 KV, speculative decoding and HiCache
on: about 800K KV tokens at TP16 + EP16, about 4M at TP32 + EP32) is approximate and its
launch command is not public, so nothing here is fitted to it. What SGLang 0.5.23's own code
says about the per-rank weights (paths under the wheel's sglang/srt/):
  * the latent MoE projections around the routed experts are ReplicatedLinear
    (models/kimi_k3.py:663-681): routed_expert_down_proj [3,584 x 7,168] and
    routed_expert_up_proj [7,168 x 3,584], bf16 (quant_config None unless the quant method
    supports quantized latent projections, :654-662), as kvfit's estimate counts them;
  * the router is MoEGate (:484), one [num_experts, hidden] parameter on every rank
    (models/deepseek_v2.py:497-515), bf16 without router_fp32.
vLLM 0.33 on CUDA builds the same rows unsharded (vllm/models/kimi_k3/nvidia/model.py:437
GateLinear, a ReplicatedLinear subclass, :445 the correction bias, :477 and :494
ReplicatedLinear). The architecture spec marks these rows `replicated`
(specs/architectures/kimi_linear.yaml), so a plan's per-rank weights are the rest / TP plus
these bytes whole, whatever gave the total (estimate or index).
"""

from __future__ import annotations

from pathlib import Path

import pytest

DIR = Path(__file__).resolve().parent / "architectures" / "kimi_linear" / "configs" / \
    "moonshotai--Kimi-K3"


@pytest.fixture(scope="module")
def estimate():
    from kvfit.checkpoint.local import load_local
    from kvfit.checkpoint.weights import config_estimate
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    meta = load_local(DIR)
    state = engine_state(meta, rules_for("sglang", "0.5.23"), "fp8_e4m3", 131072,
                         capability="9.0")
    est, why = config_estimate(meta, state.resolution, 2)
    assert est is not None, why
    return est


def test_replicated_latent_projections_and_router_by_hand(estimate):
    # config.json text_config: 93 layers, first_k_dense_replace 1 -> 92 MoE layers;
    # hidden_size 7,168, routed_expert_hidden_size 3,584, num_experts 896; bf16 (2 B).
    #   each latent projection: 92 x 3,584 x 7,168 x 2 = 4,726,980,608 B (3,584 x 7,168 = 25,690,112)
    #   router: 92 x 896 x 7,168 x 2 = 1,181,745,152 B
    rows = {r.module.rsplit(".", 1)[-1]: r for r in estimate.rows
            if ".block_sparse_moe." in r.module and r.module.rsplit(".", 1)[-1] in
            ("routed_expert_down_proj", "routed_expert_up_proj", "gate")}
    assert {k: (r.bytes, r.split) for k, r in rows.items()} == {
        "routed_expert_down_proj": (4_726_980_608, "none"),
        "routed_expert_up_proj": (4_726_980_608, "none"),
        "gate": (1_181_745_152, "none")}
    # on every rank whole, at TP16 and TP32 alike
    for tp in (16, 32):
        assert sum(r.on_rank(tp) for r in rows.values()) == 10_635_706_368


def test_the_replicated_rows_do_not_shrink_with_tp(estimate):
    # Ideal sharding (bytes / TP) would put 10,635,706,368 / 32 = 332,365,824 B of these rows
    # on a TP32 rank; SGLang loads all of it: 10,303,340,544 B more per rank.
    rep = sum(r.bytes for r in estimate.rows if r.split == "none")
    assert rep >= 10_635_706_368
    for tp in (16, 32):
        ideal = estimate.total_bytes / tp
        assert estimate.rank_bytes(tp) - ideal >= 10_635_706_368 * (tp - 1) / tp


# The replicated part by hand (config.json text_config: 92 MoE layers, hidden 7,168,
# routed_expert_hidden_size 3,584, num_experts 896; bf16 2 B, the bias float32 4 B):
#   routed_expert_down_proj + routed_expert_up_proj: 2 x 4,726,980,608 =  9,453,961,216
#   router (gate):           92 x 896 x 7,168 x 2                      =  1,181,745,152
#   gate.e_score_correction_bias: 92 x 896 x 4                         =        329,728
#   replicated R                                                       = 10,636,036,096
REPLICATED = 10_636_036_096
# The estimate's total, hand-derived in tests/test_weights_estimate_v4_kimi.py:
TOTAL = 1_560_860_324_864


def _plan(model, tp: int, *extra: str) -> dict:
    import json

    from conftest import run_cli
    code, out, err = run_cli(model, "--system", "dgx-h200", "--nodes", str(tp // 8),
                             "--tp", str(tp), "--kv-dtype", "fp8_e4m3", "--context", "131072",
                             "--json", *extra)
    assert code in (0, 1), err
    return json.loads(out)


def test_estimate_marks_the_replicated_rows(estimate):
    assert estimate.replicated[0] == REPLICATED
    assert "routed_expert_down_proj" in estimate.replicated[1]
    assert "kimi_k3.py:484, :663-681" in estimate.replicated[1]


@pytest.mark.parametrize("tp, per_rank", [
    # (TOTAL - R) / TP + R: (1,560,860,324,864 - 10,636,036,096) = 1,550,224,288,768
    #   / 16 = 96,889,018,048 -> + R = 107,525,054,144 (TOTAL / 16 was 97,553,770,304)
    (16, 107_525_054_144),
    #   / 32 = 48,444,509,024 -> + R =  59,080,545,120 (TOTAL / 32 was 48,776,885,152)
    (32, 59_080_545_120)])
def test_plan_per_rank_weights_keep_the_replicated_part_whole(tp, per_rank):
    report = _plan(DIR, tp)
    w = report["weights"]
    assert (w["bytes"], w["source"], w["replicated_bytes"]) == (
        TOTAL, "config estimate", REPLICATED)
    assert "held whole on every rank" in w["replicated_detail"]
    (lay,) = [x for x in report["layouts"] if x["tp"] == tp]
    assert lay["per_rank"]["weights_bytes"] == per_rank


@pytest.mark.parametrize("tp, per_rank", [
    # an index total_size of 1,600,000,000,000 B: (1,600,000,000,000 - R) = 1,589,363,963,904
    #   / 16 = 99,335,247,744 -> + R = 109,971,283,840
    (16, 109_971_283_840),
    #   / 32 = 49,667,623,872 -> + R =  60,303,659,968
    (32, 60_303_659_968)])
def test_an_index_total_is_split_the_same_way(tmp_path, tp, per_rank):
    import json
    import shutil
    shutil.copy(DIR / "config.json", tmp_path / "config.json")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 1_600_000_000_000},
         "weight_map": {"lm_head.weight": "model-00001-of-00001.safetensors"}}))
    report = _plan(tmp_path, tp)
    assert (report["weights"]["bytes"], report["weights"]["source"]) == (
        1_600_000_000_000, "safetensors index")
    assert report["weights"]["replicated_bytes"] == REPLICATED
    (lay,) = [x for x in report["layouts"] if x["tp"] == tp]
    assert lay["per_rank"]["weights_bytes"] == per_rank


def test_a_model_without_replicated_rows_reports_none():
    # Kimi-Linear (no latent MoE): the replicated rows' `when` is false, nothing is whole.
    report = _plan(DIR.parent / "moonshotai--Kimi-Linear-48B-A3B-Base", 16)
    assert "replicated_bytes" not in report["weights"]
