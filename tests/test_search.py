"""`--systems ... --max-nodes N`: the smallest candidate per family, 'no candidate' vs
'incompatible', best_scale_up_local / best_any_fabric, and the brief's GLM-5.3 search.

GLM-5.3 per GPU under DPA8 / EP8 (derivation in tests/test_dpa.py): 105.077 GiB of tensors,
53.445 GiB per sequence, 8 GiB reserve, a 3,502,592 B padding page.
  B300, nominal (230.400 GiB budget): 2 sequences per GPU -> 16 per node; 50 sequences need
  ceil(50 / 16) = 4 nodes (3 nodes hold 48). Visible (214.875 GiB): 1 per GPU -> 8 per node
  -> ceil(50 / 8) = 7 nodes.
  H200, nominal: 0.8 x 141 GiB = 112.8 GiB < 105.077 + 8 = 113.077 GiB: no DPA layout holds a
  sequence, and plain TP (all 703.7 GiB sharded, latent copied on every rank) tops out below
  50 within 32 nodes. B200, nominal: 0.8 x 180 = 144 GiB leaves 30.9 GiB per GPU after DPA8
  weights and reserve, under one 53.445 GiB sequence. Neither is incompatible: layouts are
  valid, they just do not reach the target.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import config_without_weights, run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
GLM = ROOT / "tests" / "fixtures" / "systems" / "zai-org--GLM-5.3"
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
GLM_SEARCH = ("--systems", "dgx-h200", "dgx-b200", "dgx-b300", "--max-nodes", "32",
              "--concurrent-users", "25", "--active-sequences-per-user", "2",
              "--context", "1m", "--kv-dtype", "fp8", "--parallelism", "sglang-dpa",
              "--cache-layout", "sglang-dsa-scaled", "--mtp",
              "--runtime-reserve-gib", "8", "--utilization", "0.8")


def _cands(report: dict) -> dict:
    return {c["system"]: c for c in report["search"]["candidates"]}


def test_must_show_glm_search_finds_four_b300_nodes_on_the_nominal_basis(snap_text, snap_json):
    code, report = run_json(GLM, *GLM_SEARCH, "--memory-basis", "nominal")
    assert code == 0 and report["fits"] is True
    c = _cands(report)
    assert c["dgx-h200"]["status"] == c["dgx-b200"]["status"] == "no candidate"
    assert "no candidate under these settings" in c["dgx-h200"]["reason"]
    b300 = c["dgx-b300"]
    assert (b300["status"], b300["nodes"], b300["gpus"]) == ("fits", 4, 32)
    for key in ("best_any_fabric", "best_scale_up_local"):
        best = b300[key]
        assert best["label"] == "DPA8 / attention TP1 / EP8"
        assert (best["attention_dp"], best["attention_tp"], best["ep"]) == (8, 1, 8)
        assert best["dp"] == 4 and best["max_sequences"] == 64 >= 50
        assert best["placement"] == "node-local"
    assert b300["smallest_scale_up_local_nodes"] == 4
    assert b300["other_basis"] == {"basis": "visible", "status": "fits", "nodes": 7,
                                   "max_sequences": 56}
    assert report["search"]["chosen"] == "dgx-b300"
    # The rest of the report details the chosen candidate.
    assert report["hardware"]["system"] == "dgx-b300" and report["hardware"]["nodes"] == 4
    assert report["recommended"]["max_sequences"] == 64
    code, text, _ = run_cli(GLM, *GLM_SEARCH, "--memory-basis", "nominal")
    assert "dgx-b300     4 nodes = 32 x b300-288" in text
    assert "NO CANDIDATE: no candidate under these settings" in text
    assert text == snap_text
    assert run_cli(GLM, *GLM_SEARCH, "--memory-basis", "nominal", "--json")[1] == snap_json


def test_glm_search_on_the_visible_basis_needs_seven_nodes_and_says_why():
    code, report = run_json(GLM, *GLM_SEARCH)
    assert code == 0
    b300 = _cands(report)["dgx-b300"]
    assert (b300["nodes"], b300["best_any_fabric"]["max_sequences"]) == (7, 56)
    assert b300["other_basis"]["nodes"] == 4
    cmp = report["memory_basis_comparison"]
    assert cmp["basis"] == "visible" and cmp["other_max_sequences"] == 112
    assert "19.406 GiB more per GPU" in cmp["explanation"]
    _, text, _ = run_cli(GLM, *GLM_SEARCH)
    assert "on the nominal basis: 4 nodes" in text


def test_cross_domain_only_candidates_state_their_best_local_layout():
    # Qwen3-32B at 32k with 130 sequences: one DGX H100 holds 64 (TP=8); two nodes hold 128 with
    # TP=8 x DP=2, 130 needs three. No cross-domain TP beats node-local here, so both agree.
    code, report = run_json(QWEN, "--context", "32k", "--kv-dtype", "bf16", "--weight-gib", "61",
                            "--concurrent-users", "130", "--systems", "dgx-h100")
    c = _cands(report)["dgx-h100"]
    assert code == 0 and c["nodes"] == 3
    assert c["best_scale_up_local"]["id"] == c["best_any_fabric"]["id"] == "tp8"
    assert c["best_scale_up_local"]["max_sequences"] == 192


def test_incompatible_is_distinct_from_no_candidate():
    # nvfp4 KV on an H100 (no FP4 in its hardware spec) cannot be served at all.
    code, report = run_json(QWEN, "--context", "32k", "--kv-dtype", "nvfp4", "--weight-gib", "61",
                            "--systems", "dgx-h100", "dgx-b200")
    c = _cands(report)
    assert c["dgx-h100"]["status"] == "incompatible" and "no native FP4" in c["dgx-h100"]["reason"]
    assert c["dgx-b200"]["status"] == "fits" and c["dgx-b200"]["nodes"] == 1
    assert code == 0


def test_no_candidate_anywhere_exits_1():
    code, out, err = run_cli(QWEN, "--context", "32k", "--weight-gib", "61",
                             "--concurrent-users", "100000", "--systems", "dgx-h100",
                             "--max-nodes", "2")
    assert code == 1 and "NO CANDIDATE" in out and "Traceback" not in err


@pytest.mark.parametrize(("args", "needle"), [
    (["--systems", "dgx-h100", "--hardware", "h100-80"], "drop --hardware"),
    (["--systems", "dgx-h100", "--system", "dgx-h100"], "drop --system"),
    (["--systems", "dgx-h100", "--gpus", "8"], "drop --gpus"),
    (["--systems", "dgx-h100", "--max-nodes", "0"], "--max-nodes must be a whole number"),
    (["--systems", "nosuch"], "unknown system 'nosuch'"),
    (["--systems", "dgx-h100", "--min-gpus"], "cannot be combined"),
])
def test_bad_search_flags(args, needle):
    code, _, err = run_cli(QWEN, "--context", "32k", "--weight-gib", "61", *args)
    assert code == 2 and needle in err and "Traceback" not in err


def test_search_needs_weights(tmp_path):
    code, _, err = run_cli(config_without_weights(QWEN, tmp_path), "--context", "32k",
                           "--systems", "dgx-h100")
    assert code == 2 and "weight bytes" in err


def test_search_runs_on_a_config_weight_estimate():
    # Qwen3-32B's config alone: the qwen3 spec's parameter shapes give the weights.
    # Embedding + untied lm_head: 2 x 151,936 x 5,120 = 1,555,824,640; per layer: q/o
    # 2 x 8,192 x 5,120 + k/v 2 x 1,024 x 5,120 = 94,371,840, MLP 3 x 25,600 x 5,120 =
    # 393,216,000, norms 2 x 5,120 + 2 x 128 = 10,496 -> 487,598,336 x 64 layers =
    # 31,206,293,504; + final norm 5,120 = 32,762,123,264 parameters x 2 B (bf16).
    code, out, err = run_cli(QWEN, "--context", "32k", "--systems", "dgx-h100", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["weights"]["source"] == "config estimate"
    assert report["weights"]["bytes"] == 32_762_123_264 * 2
    assert any("ESTIMATE" in w for w in report["warnings"])


def test_search_preset_keys(tmp_path):
    preset = tmp_path / "s.toml"
    preset.write_text(f'model = "{QWEN}"\ncontext = "32k"\nweight_gib = 61\n'
                      'systems = ["dgx-h100", "dgx-h200"]\nmax_nodes = 2\n'
                      'concurrent_users = 100\n')
    code, out, err = run_cli(preset, "--json")
    assert code == 0, err
    # H100: 64 sequences per node -> 2 nodes (16 GPUs). H200: 0.9 x 143,771 MiB =
    # 135,680,237,568 B; minus 61 GiB / 8 = 8,187,281,408 -> 118 sequences at TP=8 on 1 node.
    search = json.loads(out)["search"]
    assert [c["nodes"] for c in search["candidates"]] == [2, 1]
    assert search["chosen"] == "dgx-h200"


def test_tp_candidates_are_every_divisor_in_order():
    from kvfit.planner.layouts import tp_candidates
    assert tp_candidates(12, None) == [1, 2, 3, 4, 6, 12]
    assert tp_candidates(1024, None) == [2**k for k in range(11)]
    assert tp_candidates(36, None) == [1, 2, 3, 4, 6, 9, 12, 18, 36]   # a square: 6 once
    assert tp_candidates(7, None) == [1, 7] and tp_candidates(1, None) == [1]
    assert tp_candidates(8, 4) == [4]


# Qwen3-32B at 32k with --weight-gib 560 on dgx-h100 (8 x H100, one 8-GPU scale-up domain):
# budget 0.9 x 81,559 MiB = 71.683 GiB per GPU; one sequence is 64 layers x 2 x 8 KV heads x
# 128 x 2 B x 32,768 = 8 GiB of KV. Node-local TP=8: 70 GiB of weights and 1 GiB of KV per
# rank leave 1.683 GiB, one sequence per replica, so n nodes (DP = n) hold n sequences.
# Cross-domain TP=16 on 2 nodes: 35 GiB of weights; 8 KV heads < 16 ranks, so each rank keeps
# one head (1 GiB per sequence) and holds floor(36.683) = 36. For 2 <= R <= 36 sequences
# the answer is 2 nodes (TP=16) and the smallest node-local fit is R nodes.
@pytest.mark.parametrize("users,max_nodes,local", [(10, 64, 10), (30, 64, 30), (30, 20, None),
                                                   (36, 1024, 36)])
def test_search_finds_the_smallest_node_local_count_past_the_answer(users, max_nodes, local):
    code, report = run_json(QWEN, "--context", "32k", "--weight-gib", "560", "--systems",
                            "dgx-h100", "--max-nodes", str(max_nodes),
                            "--concurrent-users", str(users))
    c = _cands(report)["dgx-h100"]
    assert code == 0 and (c["status"], c["nodes"]) == ("fits", 2)
    assert c["best_any_fabric"]["label"] == "TP=16 x DP=1"
    assert c["best_any_fabric"]["max_sequences"] == 36
    assert c["smallest_scale_up_local_nodes"] == local


def test_the_node_local_count_found_by_bisection_is_the_first_a_walk_finds():
    """Every node count from 3 to 40 walked one by one: the first node-local fit is the one
    the search reports (the bisection relies on a node-local fit only growing with nodes)."""
    from kvfit.hardware.presets import find_system
    from kvfit.planner import placements, systems
    from kvfit.planner.build import prepare
    from kvfit.planner.request import PlanRequest

    req = PlanRequest(model=str(QWEN), context="32k", weight_gib=560, concurrent_users=23,
                      utilization=0.9)
    m, _ = prepare(req, [])
    walked = next(n for n in range(3, 41) if placements.run_topology(
        req, m, systems.of_system(find_system("dgx-h100"), n), m.comps, 23)[1]
        .best_scale_up_local.fits)
    _, report = run_json(QWEN, "--context", "32k", "--weight-gib", "560", "--systems",
                         "dgx-h100", "--max-nodes", "40", "--concurrent-users", "23")
    assert walked == 23 == _cands(report)["dgx-h100"]["smallest_scale_up_local_nodes"]


@pytest.mark.parametrize("flags", [
    ("--max-nodes", "40"),                                   # nothing fits
    ("--max-nodes", "64", "--tp", "16"),                     # nothing fits; counts of 2 nodes
    # fits at 24 nodes, cross-domain only (TP=64); at 32 nodes, node-local (TP=8)
    ("--max-nodes", "40", "--weight-gib", "3000", "--concurrent-users", "50"),
    ("--max-nodes", "40", "--concurrent-users", "2000"),
])
def test_a_search_that_skips_counts_answers_as_a_walk_of_every_count(flags, monkeypatch):
    """Where capacity only grows with nodes the search skips the counts that divide one that
    does not fit; the whole report must be what walking every count 1..N gives."""
    from kvfit.planner import search

    argv = [QWEN, "--context", "32k", "--weight-gib", "61", "--concurrent-users", "100000",
            "--systems", "dgx-h100", *flags]
    skipping = run_cli(*argv, "--json")
    monkeypatch.setattr(search, "_fits_grow", lambda req: False)
    assert skipping == run_cli(*argv, "--json")
