"""Pipeline parallelism (#11 rule 7): vLLM's layer split, per-stage weights and state, the
binding stage, the engine's per-stage pools, and the launch command.

Expected numbers are derived by hand from the pinned configs (tests/fixtures/model-configs)
and from vLLM 0.33's own code (file:line in each comment).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvfit.engines.pages import LayerPage, group_pages
from kvfit.engines.pp_split import partition
from kvfit.engines.vllm_pp import stage_bytes_per_block
from kvfit.errors import UsageError

from conftest import run_cli, run_json, validate

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LLAMA = str(FIXTURES / "model-configs" / "meta-llama--Llama-3.1-8B")
QWEN36 = str(FIXTURES / "model-configs" / "Qwen--Qwen3.6-35B-A3B")
GIB = 1024**3
# h100-80 visible memory 81,559 MiB (specs/hardware/h100-80.yaml) x kvfit's utilization 0.9
BUDGET = int(81_559 * 1024**2 * 0.9)        # 76,968,728,985 B


@pytest.mark.parametrize(("layers", "pp", "split"), [
    (32, 2, [16, 16]),
    # vllm/distributed/utils.py:225-230: 32 // 3 = 10, remainder 2 -> partitions[-2] and
    # partitions[-3] each + 1
    (32, 3, [11, 11, 10]),
    # 61 // 4 = 15, remainder 1 -> partitions[-2] + 1 (the last stage is never padded)
    (61, 4, [15, 15, 16, 15]),
    # 94 // 8 = 11, remainder 6 -> partitions[-2] .. partitions[-7] + 1
    (94, 8, [11, 12, 12, 12, 12, 12, 12, 11]),
])
def test_layer_split_is_vllm_get_pp_indices(layers, pp, split):
    assert partition(layers, pp) == split and sum(split) == layers


def test_layer_partition_override_and_its_checks():
    assert partition(48, 2, "16,32") == [16, 32]       # VLLM_PP_LAYER_PARTITION (utils.py:214)
    for bad in ("16,31", "16", "a,b", "0,48"):
        with pytest.raises(UsageError):
            partition(48, 2, bad)
    with pytest.raises(UsageError):
        partition(4, 8)


def _layout(r: dict, lid: str) -> dict:
    return next(x for x in r["layouts"] if x["id"] == lid)


def test_static_tp2_pp2_stage_weights_state_and_capacity():
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "4", "--context",
                       "32k", "--pp", "2", "--weight-gib", "16")
    assert code == 0
    lay = _layout(r, "tp2pp2")
    # embedding = LM head (untied) = 128,256 x 4,096 x 2 B = 1,050,673,152 B; the other
    # 16 GiB - 2 x 1,050,673,152 = 15,078,522,880 B split 16/32 per stage = 7,539,261,440;
    # stage 0 = 7,539,261,440 + embedding = 8,589,934,592 (stage 1 likewise with the head);
    # over TP=2: 4,294,967,296 B per rank
    st = lay["pipeline"]["stages"]
    assert [s["layers"] for s in st] == [[0, 16], [16, 32]]
    assert [s["weights_bytes"] for s in st] == [4 * GIB, 4 * GIB]
    # 16 layers x 32,768 tokens x (2 x 8 heads x 128 x 2 B) / TP 2 = 1 GiB per sequence
    assert [s["state_bytes_per_sequence"] for s in st] == [GIB, GIB]
    # (76,968,728,985 - 4 GiB) // 1 GiB = 67
    assert lay["max_sequences"] == (BUDGET - 4 * GIB) // GIB == 67
    assert lay["label"] == "TP=2 x PP=2 x DP=1" and lay["group_gpus"] == 4
    # TP=1 x PP=2 x DP=2: 8 GiB weights, 2 GiB per sequence per rank, two replicas
    assert _layout(r, "tp1pp2")["max_sequences"] == 2 * ((BUDGET - 8 * GIB) // (2 * GIB))


def test_vllm_stages_own_pools_and_the_sampler_stage_binds():
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "2", "--context",
                       "32k", "--pp", "2", "--weight-gib", "16", "--engine", "vllm@0.33.0")
    e = _layout(r, "tp1pp2")["engine"]
    stages = e["pipeline_stages"]["value"]
    # one block per stage = 16 layers x 16 tokens x 4,096 B = 1,048,576 B
    # (kv_cache_planning.py:574-593 over the stage's projected group)
    assert [s["bytes_per_block"] for s in stages] == [1_048_576, 1_048_576]
    # only the last stage profiles the sampler's logits (gpu_model_runner.py:6139)
    assert stages[0]["activation_peak_bytes"] < stages[1]["activation_peak_bytes"]
    assert e["pipeline_stages"]["binding_stage"] == 1
    assert e["num_gpu_blocks"]["value"] == min(s["num_gpu_blocks"] for s in stages) == \
        stages[1]["available_kv_bytes"] // 1_048_576
    assert e["blocks_per_request"]["value"] == 32768 // 16
    assert _layout(r, "tp1pp2")["pipeline"]["binding_stage"] == 1


def test_hybrid_stage_takes_every_kth_layer_of_a_type():
    # gemma-3-27b-like: 52 sliding + 10 full layers, page 8,192 B/token (pages.py docstring);
    # vLLM groups 10 layers each: 6 sliding groups + 1 full group (kv_cache_planning.py:522-554)
    whole = [LayerPage("sw", "sliding", 52, 8192, window=1024), LayerPage("kv", "full", 10, 8192)]
    g = group_pages(whole, 16, 1.5)
    assert g.bytes_per_block == 10 * 16 * 8192
    # stage 0 of PP=2 (layers 0-30; every 6th layer is full: 5, 11, 17, 23, 29) holds 26
    # sliding and 5 full layers: ceil(26 / 6) = 5 and ceil(5 / 1) = 5 -> 5 pages per block
    stage = [LayerPage("sw", "sliding", 26, 8192, window=1024), LayerPage("kv", "full", 5, 8192)]
    assert stage_bytes_per_block(g, stage) == 5 * 16 * 8192


def test_launch_command_passes_pp_and_the_layer_partition():
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "2", "--context",
                       "8k", "--pp", "2", "--pp-layer-partition", "12,20", "--weight-gib", "16",
                       "--print-command", "vllm")
    cmd = r["engine_command"]["launch"]
    assert "--pipeline-parallel-size 2" in cmd and cmd.startswith("VLLM_PP_LAYER_PARTITION=12,20 ")
    st = _layout(r, "tp1pp2")["pipeline"]["stages"]
    assert [s["layers"] for s in st] == [[0, 12], [12, 32]]
    # the 20-layer stage keeps 20 x 8,192 tokens x 4,096 B = 640 MiB per sequence and binds
    assert st[1]["state_bytes_per_sequence"] == 20 * 8192 * 4096
    assert _layout(r, "tp1pp2")["pipeline"]["binding_stage"] == 1


def test_vllm_spelling_sets_the_same_knob():
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "2", "--context",
                       "8k", "--pipeline-parallel-size", "2", "--weight-gib", "16")
    assert [x["id"] for x in r["layouts"]] == ["tp1pp2"]


@pytest.mark.parametrize("extra", [
    ("--gpus", "4", "--pp", "3"),                                  # 3 does not divide 4
    ("--gpus", "2", "--pp-layer-partition", "16,16"),              # no --pp
    ("--gpus", "2", "--pp", "2", "--parallelism", "vllm-dp-ep"),   # plain TP only
    ("--gpus", "2", "--pp", "2", "--engine", "sglang", "--mtp"),   # SGLang PP draft: not modelled
    ("--gpus", "2", "--pp", "2", "--pp-layer-partition", "16,15"),
    ("--gpus", "2", "--decode-context-parallel-size", "0"),
])
def test_bad_pipeline_requests_exit_2(extra):
    code, out, err = run_cli(LLAMA, "--offline", "--hardware", "h100-80", "--context", "8k",
                             "--weight-gib", "16", *extra)
    assert code == 2 and "Traceback" not in err and err.strip()


def test_qwen36_mtp_draft_layer_keeps_kv_and_sits_on_the_last_stage():
    code, r = run_json(QWEN36, "--offline", "--hardware", "h100-80", "--gpus", "2", "--context",
                       "32k", "--mtp", "--pp", "2", "--weight-gib", "67")
    comps = {c["name"]: c for c in r["state"]["components"]}
    # mtp_num_hidden_layers 1 (config) x 32,768 x (2 x 2 heads x 256 x 2 B) = 67,108,864 B
    assert comps["kv-mtp"]["bytes_per_sequence"] == 67_108_864
    st = _layout(r, "tp1pp2")["pipeline"]["stages"]
    assert "kv-mtp" in st[1]["components"] and "kv-mtp" not in st[0]["components"]


def test_pp_report_matches_the_published_schema():
    import json


    schema = json.loads((FIXTURES.parent.parent / "schemas" / "report.schema.json").read_text())
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "4", "--context",
                       "8k", "--pp", "2", "--weight-gib", "16", "--engine", "vllm@0.33.0")
    validate(r, schema)
    assert all(x["pp"] == 2 and x["pipeline"]["stages"] for x in r["layouts"])


def test_pp_is_suggested_where_it_changes_the_answer():
    # Llama-3.1-405B (catalog config: 126 layers, 8 KV heads x 128, vocab 128,256, hidden
    # 16,384, untied), 756 GiB stated, 16 x H100 at 128k, 4 users.
    # TP=16: 8 KV heads < 16, each rank keeps 1 head: 126 x 131,072 x (2 x 128 x 2 B) =
    # 8,455,716,864 B per sequence; weights 756 GiB / 16 = 50,734,301,184 B;
    # (76,968,728,985 - 50,734,301,184) // 8,455,716,864 = 3 < 4: no fit.
    # TP=8 x PP=2: 63 layers per stage; stage weights = the other weights / 2 + the embedding
    # (or head) = 405,874,409,472 B, / 8 = 50,734,301,184 B per rank; state 63 x 131,072 x
    # 512 = 4,227,858,432 B; (76,968,728,985 - 50,734,301,184) // 4,227,858,432 = 6
    code, r = run_json("meta-llama/Llama-3.1-405B", "--offline", "--hardware", "h100-80",
                       "--gpus", "16", "--context", "128k", "--concurrent-users", "4",
                       "--weight-gib", "756")
    assert code == 1 and r["recommended"]["max_sequences"] == 3
    pp = next(s for s in r["suggestions"] if s["change"] == "pp")
    assert pp["flags"] == "--pp 2" and pp["layout"] == "TP=8 x PP=2 x DP=1"
    assert pp["max_sequences"] == (BUDGET - 50_734_301_184) // 4_227_858_432 == 6


@pytest.mark.parametrize("extra", [
    ("--pp", "0"), ("--pp", "-2"),
])
def test_nonpositive_pp_exits_2(extra):
    code, out, err = run_cli(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "2",
                             "--context", "8k", "--weight-gib", "16", *extra)
    assert code == 2 and "--pp" in err and "Traceback" not in err


def test_pp_without_hardware_exits_2():
    code, out, err = run_cli(LLAMA, "--offline", "--context", "8k", "--pp", "2")
    assert code == 2 and "need --hardware" in err


def test_min_gpus_with_pp_counts_whole_pipelines():
    # 1 GPU cannot hold PP=2: the search starts at 2 GPUs (TP=1 x PP=2), which holds
    # (76,968,728,985 - 8 GiB) // 2 GiB per sequence at 32k = 31 >= 1
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--context", "32k",
                       "--pp", "2", "--weight-gib", "16", "--min-gpus")
    assert code == 0 and r["inverse"]["min_gpus"] == 2
