"""What a `--systems` search costs, and why it may skip node counts: with plain TP x DP a TP
size's validity and sequences per replica do not depend on the node count, only its number
of replicas does (checked here for every system preset under each capacity model: static,
vLLM's, SGLang's), so kvfit.planner.search evaluates a few counts and computes the rest
(search._from_tp_sizes). Its answers are those of a walk over every count."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
QWEN3 = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
# 28 query heads, 4 KV heads: TP sizes 1, 2, 4, 7, 14, 28 - TP=7 only on a multiple of 7 nodes
QWEN25 = ROOT / "tests" / "architectures" / "qwen2" / "configs" / "Qwen--Qwen2.5-7B"
SYSTEMS = ["dgx-b200", "dgx-b300", "dgx-h100", "dgx-h200", "dgx-spark", "gaudi3-8",
           "gb200-nvl72", "gb300-nvl72", "hgx-b200", "hgx-b300", "hgx-h100", "hgx-h200",
           "mi300x-8", "mi325x-8", "mi355x-8"]


def test_every_system_preset_is_checked():
    from kvfit.planner.systems import listing

    assert sorted(s["id"] for s in listing()) == SYSTEMS


@pytest.mark.parametrize("engine", [None, "vllm", "sglang"])
@pytest.mark.parametrize("model,weight_gib", [(QWEN25, 400), (QWEN3, 700)])
def test_a_tp_size_holds_the_same_per_replica_at_every_node_count(engine, model, weight_gib):
    from kvfit.hardware.presets import find_system
    from kvfit.planner import placements, systems
    from kvfit.planner.build import prepare
    from kvfit.planner.request import PlanRequest

    req = PlanRequest(model=str(model), context="32k", weight_gib=weight_gib,
                      concurrent_users=10, utilization=0.9, engine=engine)
    m, _ = prepare(req, [])
    checked = 0
    for system_id in SYSTEMS:
        system = find_system(system_id)
        per: dict[int, tuple] = {}
        for n in (1, 2, 3, 4, 6, 7, 14):
            layouts, _, _ = placements.run_topology(
                req, m, systems.of_system(system, n), m.comps, 10)
            for lay in layouts:
                p = lay.sequences_per_replica if lay.max_sequences is not None else None
                key = (lay.valid, p, lay.placement if lay.tp <= system.accelerators else None)
                assert per.setdefault(lay.tp, key) == key, (system_id, n, lay.tp)
                if p is not None:
                    assert lay.max_sequences == p * lay.dp, (system_id, n, lay.tp)
                    checked += p > 0
    assert checked > 0


def _walk(monkeypatch, argv):
    from kvfit.planner import search

    with monkeypatch.context() as patch:
        patch.setattr(search, "_fits_grow", lambda req: False)     # every count, in order
        return run_cli(*argv, "--json")


CASES = [
    # Qwen3-32B, 700 GiB: no node-local layout holds the weights; TP=16 on 2 nodes first
    [QWEN3, "--weight-gib", "700", "--systems", "dgx-h100", "mi300x-8", "--max-nodes", "64"],
    # 560 GiB, 23 users: TP=16 on 2 nodes, node-local TP=8 from 23 nodes (tests/test_search.py)
    [QWEN3, "--weight-gib", "560", "--concurrent-users", "23", "--systems", "dgx-h100",
     "--max-nodes", "40"],
    # no count fits; the most any count holds is on the largest one
    [QWEN3, "--weight-gib", "61", "--concurrent-users", "100000", "--systems", "dgx-h100",
     "gb200-nvl72", "--max-nodes", "50"],
    # no layout holds one sequence anywhere: the first count with a valid layout is quoted
    [QWEN3, "--weight-gib", "90000", "--systems", "dgx-h100", "--max-nodes", "12"],
    [QWEN3, "--weight-gib", "61", "--concurrent-users", "3000", "--tp", "16", "--systems",
     "dgx-h100", "dgx-b200", "--max-nodes", "64"],
    [QWEN3, "--concurrent-users", "900", "--engine", "vllm", "--systems", "dgx-h100",
     "dgx-spark", "gb200-nvl72", "--max-nodes", "24"],
    [QWEN3, "--concurrent-users", "900", "--engine", "sglang", "--systems", "dgx-h100",
     "mi355x-8", "--max-nodes", "24"],
    # TP=7 and TP=14 exist only on multiples of 7 nodes
    [QWEN25, "--weight-gib", "400", "--concurrent-users", "40", "--systems", "dgx-h100",
     "gaudi3-8", "dgx-spark", "--max-nodes", "30"],
    [QWEN25, "--weight-gib", "400", "--concurrent-users", "5000", "--systems", "dgx-h100",
     "--max-nodes", "30"],
    [QWEN25, "--weight-gib", "30", "--concurrent-users", "700", "--tp", "7", "--systems",
     "dgx-h100", "--max-nodes", "40"],
    [QWEN25, "--concurrent-users", "2000", "--engine", "vllm", "--systems", "dgx-spark",
     "dgx-h100", "--max-nodes", "64"],
]


@pytest.mark.parametrize("argv", CASES, ids=range(len(CASES)))
def test_the_search_answers_as_a_walk_of_every_count(argv, monkeypatch):
    argv = [*argv, "--context", "32k"]
    got = run_cli(*argv, "--json")
    assert got[0] in (0, 1), got[2]
    assert got == _walk(monkeypatch, argv)


def _count_evaluations(monkeypatch, argv) -> tuple[int, int]:
    """(exit code, topologies evaluated: placements.run_topology calls, each a plan's whole
    layout evaluation on one node count and memory basis)."""
    from kvfit.planner import placements

    calls = []
    real = placements.run_topology
    monkeypatch.setattr(placements, "run_topology",
                        lambda *a, **k: (calls.append(a[2].nodes), real(*a, **k))[1])
    code, _, err = run_cli(*argv, "--json")
    assert code in (0, 1), err
    return code, len(calls)


SEARCH = [QWEN3, "--context", "32k", "--weight-gib", "700", "--systems", "dgx-h100",
          "--max-nodes", "1024"]
NEVER = [QWEN3, "--context", "32k", "--weight-gib", "61", "--concurrent-users", "100000",
         "--systems", "dgx-h100", "--max-nodes", "1024"]


def test_a_search_to_1024_nodes_evaluates_a_handful_of_counts(monkeypatch):
    # Qwen3-32B: TP divides 64 query heads: 1, 2, 4, 8 (on any count of 8-GPU nodes), 16 (an
    # even count), 32 (a multiple of 4), 64 (of 8); the count with the most replicas of each
    # is 1,024. On each memory basis (nominal, visible): 1,024 nodes, then 2 (TP=16 is the
    # first to hold the weights, 700 / 16 = 43.75 GiB a rank; TP <= 8 never does, 87.5 GiB
    # > 0.9 x 80 GiB, so no node-local count is looked for) = 2 + 2; then the chosen
    # 2 nodes' full placement and its other-basis comparison: 6 in all. A walk: 26 + 2.
    assert _count_evaluations(monkeypatch, SEARCH) == (0, 6)
    # nothing fits: 1,024 nodes on each basis, no placement to show. A walk: 1,024.
    assert _count_evaluations(monkeypatch, NEVER) == (1, 2)
