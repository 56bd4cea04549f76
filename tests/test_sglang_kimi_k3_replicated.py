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
The architecture spec lists these rows unsplit (specs/architectures/kimi_linear.yaml), so the
config-shape estimate's per-rank bytes (WeightEstimate.rank_bytes) carry them whole.
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
    # on a TP32 rank; SGLang loads all of it: 10,303,340,544 B more per rank, which the
    # plain TP layouts' ideal split (kvfit's weights per rank = total / TP) does not count.
    rep = sum(r.bytes for r in estimate.rows if r.split == "none")
    assert rep >= 10_635_706_368
    for tp in (16, 32):
        ideal = estimate.total_bytes / tp
        assert estimate.rank_bytes(tp) - ideal >= 10_635_706_368 * (tp - 1) / tp
