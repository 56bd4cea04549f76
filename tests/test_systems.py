"""Systems and placements: --system/--nodes, --list-systems, scale-up domains, node-local vs
cross-domain labels, the recommendation order, memory bases and --device-memory-gib.

Numbers are derived by hand in the comments (GiB = 2**30 B, MiB = 2**20 B).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.hardware.presets import find_accelerator, find_system
from kvfit.model.plan import Layout, PerRank
from kvfit.planner.layouts import recommend
from kvfit.planner.systems import Topology, domains_spanned, of_hardware, of_system

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
# Qwen3-32B at 32k, bf16: 64 layers x 2 x 8 KV heads x 128 x 2 B = 262,144 B per token,
# x 32,768 = 8 GiB per sequence; the pinned folder has no weights, so 61 GiB is assumed
# (32.8 B parameters x 2 B, rounded) exactly as examples/qwen3-32b-h100.toml does.
QWEN_ARGS = ("--context", "32k", "--kv-dtype", "bf16", "--weight-gib", "61")


def _by_id(report: dict) -> dict:
    return {x["id"]: x for x in report["layouts"]}


# --- --system / --nodes -----------------------------------------------------------------


def test_must_show_qwen3_32b_on_dgx_h100_recommends_tp8_inside_the_node(snap_text, snap_json):
    code, report = run_json(QWEN, "--system", "dgx-h100", *QWEN_ARGS, "--concurrent-users", "16")
    assert code == 0
    hw = report["hardware"]
    assert (hw["system"], hw["nodes"], hw["gpus"], hw["scale_up_domain_accelerators"]) == (
        "dgx-h100", 1, 8, 8)
    # Budget: 0.9 x 81,559 MiB = 0.9 x 85,520,809,984 B = 76,968,728,985 B (71.683 GiB).
    assert hw["budget_bytes_per_gpu"] == 76968728985
    lay = _by_id(report)
    # TP=8: 61 GiB / 8 = 8,187,281,408 B of weights; (76,968,728,985 - 8,187,281,408)
    # // 1 GiB of state per rank = 64 sequences. TP=4: (76,968,728,985 - 16,374,562,816)
    # // 2 GiB = 28 per replica x 2 replicas = 56.
    assert lay["tp8"]["max_sequences"] == 64 and lay["tp4"]["max_sequences"] == 56
    assert report["recommended"]["id"] == "tp8"
    assert report["recommended"]["placement"] == "node-local"
    assert "holds the most sequences (64)" in report["recommended"]["why"]
    assert report["best_scale_up_local"]["id"] == report["best_any_fabric"]["id"] == "tp8"
    assert all(x["placement"] == "node-local" and x["domains"] == 1 for x in report["layouts"])
    code, text, _ = run_cli(QWEN, "--system", "dgx-h100", *QWEN_ARGS, "--concurrent-users", "16")
    assert "Recommended: TP=8 x DP=1" in text and "node-local" in text
    assert text == snap_text
    assert run_cli(QWEN, "--system", "dgx-h100", *QWEN_ARGS, "--concurrent-users", "16",
                   "--json")[1] == snap_json


def test_must_show_two_dgx_sparks_are_two_memory_domains_and_tp2_is_cross_domain(snap_text):
    code, report = run_json(QWEN, "--system", "dgx-spark", "--nodes", "2", *QWEN_ARGS)
    assert code == 0
    hw = report["hardware"]
    assert hw["memory_domains"] == 2 and hw["scale_up_domain_accelerators"] == 1
    assert hw["scale_up_domains"] == 2 and hw["gpus"] == 2
    lay = _by_id(report)
    assert lay["tp2"]["placement"] == "cross-domain" and lay["tp2"]["domains"] == 2
    assert "unqualified until tested" in lay["tp2"]["placement_note"]
    assert lay["tp1"]["placement"] == "node-local"
    # Unified memory: 121.69 GiB planning default = 130,663,642,563 B; x 0.9 = 117,597,278,306.
    # TP=1: (117,597,278,306 - 61 GiB = 65,498,251,264) // 8 GiB = 6 per Spark x 2 = 12.
    # TP=2: (117,597,278,306 - 30.5 GiB = 32,749,125,632) // 4 GiB = 19.
    assert hw["budget_bytes_per_gpu"] == 117597278306
    assert lay["tp1"]["max_sequences"] == 12 and lay["tp2"]["max_sequences"] == 19
    assert report["best_any_fabric"]["id"] == "tp2"
    assert report["best_scale_up_local"]["id"] == "tp1"
    assert any("unified memory" in w for w in report["warnings"])
    assert any("spans 2 scale-up domains" in w for w in report["warnings"])
    code, text, _ = run_cli(QWEN, "--system", "dgx-spark", "--nodes", "2", "--tp", "2",
                            *QWEN_ARGS)
    assert "cross-domain" in text and "2 memory domains" in text
    assert text == snap_text


def test_nodes_multiply_complete_systems():
    code, report = run_json(QWEN, "--system", "dgx-h100", "--nodes", "2", *QWEN_ARGS)
    assert code == 0
    lay = _by_id(report)
    assert report["hardware"]["gpus"] == 16 and report["hardware"]["memory_domains"] == 16
    assert lay["tp16"]["placement"] == "cross-domain" and lay["tp16"]["domains"] == 2
    assert lay["tp8"]["placement"] == "node-local" and lay["tp8"]["dp"] == 2
    # TP=16 cannot split 8 KV heads further: every rank keeps 1 head (1 GiB per sequence), and
    # (76,968,728,985 - 61 GiB / 16 = 4,093,640,704) // 1 GiB = 67 sequences in one replica;
    # TP=8 x DP=2 holds 2 x 64 = 128, node-local.
    assert lay["tp16"]["max_sequences"] == 67 and lay["tp8"]["max_sequences"] == 128
    assert any("8 heads < TP=16" in n for n in lay["tp16"]["replication"])
    assert report["recommended"]["id"] == "tp8"


def test_list_systems_text_and_json():
    code, out, _ = run_cli("--list-systems")
    assert code == 0 and "dgx-b300" in out and "gb200-nvl72" in out
    code, out, _ = run_cli("--list-systems", "--json")
    rows = {r["id"]: r for r in json.loads(out)}
    assert rows["dgx-b300"]["accelerators"] == 8
    assert rows["dgx-b300"]["scale_up_domain_accelerators"] == 8
    assert rows["gb200-nvl72"]["scale_up_domain_accelerators"] == 72
    assert rows["dgx-spark"]["memory_domains"] == 1 and rows["dgx-spark"]["hardware"] == "dgx-spark"


# --- topology arithmetic -----------------------------------------------------------------


@pytest.mark.parametrize(("gpus", "domain", "group", "spanned"), [
    (32, 8, 8, 1), (32, 8, 16, 2), (32, 8, 32, 4), (32, 8, 4, 1), (32, 8, 1, 1),
    (24, 8, 3, 2),     # ranks 6-8 straddle the first boundary
    (72, 72, 72, 1), (2, 1, 2, 2),
])
def test_domains_spanned(gpus, domain, group, spanned):
    topo = Topology(find_accelerator("h100-80"), gpus, domain, gpus)
    assert domains_spanned(group, topo) == spanned


def test_topologies_from_specs():
    b300 = of_system(find_system("dgx-b300"), 4)
    assert (b300.gpus, b300.domain_size, b300.memory_domains) == (32, 8, 32)
    spark = of_system(find_system("dgx-spark"), 2)
    assert (spark.gpus, spark.domain_size, spark.memory_domains) == (2, 1, 2)
    loose = of_hardware(find_accelerator("h100-80"), 8)
    assert loose.domain_size == 8 and "assumed" in loose.source
    assert of_hardware(find_accelerator("dgx-spark"), 2).domain_size == 1


def _lay(i, seqs, domains, group):
    per_rank = PerRank(weights_bytes=0, state_bytes_per_sequence=1, budget_bytes=1,
                       reserve_bytes=0)
    return Layout(id=i, label=i, parallelism="tp", tp=group, dp=1, valid=True, per_rank=per_rank,
                  max_sequences=seqs, fits=True, reason=None, domains=domains, group_gpus=group,
                  placement="node-local" if domains == 1 else "cross-domain")


def test_recommendation_order_sequences_then_domains_then_smaller_group():
    # Most sequences wins even across domains.
    rec = recommend([_lay("a", 10, 1, 8), _lay("b", 12, 2, 16)])
    assert rec.id == "b" and "holds the most sequences (12)" in rec.why
    # Tie on sequences: fewer scale-up domains.
    rec = recommend([_lay("a", 12, 2, 8), _lay("b", 12, 1, 16)])
    assert rec.id == "b" and "fewer scale-up domains (1 vs 2)" in rec.why
    # Tie on both: the smaller group.
    rec = recommend([_lay("a", 12, 1, 8), _lay("b", 12, 1, 4)])
    assert rec.id == "b" and "smaller group (4 vs 8 GPUs)" in rec.why


# --- memory basis -----------------------------------------------------------------------


def test_visible_is_the_default_basis_and_nominal_switches():
    _, vis = run_json(QWEN, "--system", "dgx-b300", *QWEN_ARGS)
    _, nom = run_json(QWEN, "--system", "dgx-b300", *QWEN_ARGS, "--memory-basis", "nominal")
    # B300: 275,040 MiB visible = 288,400,343,040 B (268.594 GiB); nominal 288 GiB.
    assert vis["hardware"]["memory_bytes_per_gpu"] == 275040 * 2**20 == 288400343040
    assert vis["hardware"]["memory_basis"] == "visible"
    assert nom["hardware"]["memory_bytes_per_gpu"] == 288 * 2**30
    cmp = vis["memory_basis_comparison"]
    assert cmp["other_basis"] == "nominal" and cmp["other_memory_bytes_per_gpu"] == 288 * 2**30
    assert "19.406 GiB more per GPU" in cmp["explanation"]


def test_device_memory_gib_overrides_both_bases():
    code, report = run_json(QWEN, "--hardware", "h100-80", *QWEN_ARGS, "--device-memory-gib", "64")
    hw = report["hardware"]
    assert hw["memory_bytes_per_gpu"] == 64 * 2**30 and hw["memory_basis"] == "override"
    assert "--device-memory-gib 64" in hw["basis_detail"]
    assert report["memory_basis_comparison"] is None


def test_unified_memory_warns_and_uses_its_planning_default():
    _, report = run_json(QWEN, "--hardware", "dgx-spark", *QWEN_ARGS)
    assert "planning default" in report["hardware"]["basis_detail"]
    assert any("unified memory" in w for w in report["warnings"])


def test_preset_keys_for_systems(tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text(f'model = "{QWEN}"\nsystem = "dgx-h100"\nnodes = 2\ncontext = "32k"\n'
                      'weight_gib = 61\nkv_dtype = "bf16"\n[output]\njson = true\n')
    code, out, err = run_cli(preset)
    assert code == 0, err
    assert json.loads(out)["hardware"]["gpus"] == 16


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["--system", "dgx-h100", "--hardware", "h100-80"], "--hardware and --system"),
    (["--system", "dgx-h100", "--gpus", "8"], "--gpus cannot be combined with --system"),
    (["--system", "dgx-h999"], "unknown system 'dgx-h999'"),
    (["--system", "dgx-h100", "--nodes", "0"], "--nodes must be a whole number from 1"),
    (["--hardware", "h100-80", "--nodes", "2"], "--nodes needs --system"),
    (["--system", "dgx-h100", "--tp", "3"], "must divide the 8 GPUs of 1 x dgx-h100"),
    (["--hardware", "h100-80", "--device-memory-gib", "0"], "--device-memory-gib"),
    (["--system", "dgx-h100", "--parallelism", "sglang-dpa"],
     "declares no routed-expert tensors"),
    (["--system", "dgx-h100", "--parallelism", "tp2"], "invalid choice"),
])
def test_bad_system_flags(args, needle):
    code, out, err = run_cli(QWEN, *QWEN_ARGS, *args)
    assert code == 2, err
    assert needle in err and "Traceback" not in err
    assert err.count("\n") == 1          # one paragraph


@pytest.mark.parametrize(("toml", "needle"), [
    ('system = "dgx-h100"\nhardware = "h100-80"\n', "--hardware and --system"),
    ('systems = "dgx-h100"\n', "should be list"),
    ('systems = [1]\n', "list of strings"),
    ('nodes = "2"\nsystem = "dgx-h100"\n', "should be int"),
])
def test_bad_system_presets(tmp_path, toml, needle):
    preset = tmp_path / "p.toml"
    preset.write_text(f'model = "{QWEN}"\ncontext = "32k"\nweight_gib = 61\n' + toml)
    code, _, err = run_cli(preset)
    assert code == 2 and needle in err, err
