"""Kimi-K3 under pipeline parallelism: each stage holds the replicated rows of its own layers
whole on every one of its ranks (issue 24), and the rest of its share / TP.

The rule (per rank = (stage bytes - its replicated bytes) / TP + its replicated bytes): both
engines build Kimi-K3's router, its correction bias and the latent MoE projections unsharded,
SGLang 0.5.23 models/kimi_k3.py:484, :663-681 (deepseek_v2.py:497-531) and vLLM 0.33
models/kimi_k3/nvidia/model.py:437-447, :477-499; the rows are marked `replicated` in
specs/architectures/kimi_linear.yaml. They are per-layer rows of the MoE layers
(first_k_dense_replace 1: layers 1 .. 92), so a stage holds those of its own layers.

Hand derivation from the pinned config (tests/architectures/kimi_linear/configs/
moonshotai--Kimi-K3/config.json, text_config): 93 layers, first_k_dense_replace 1 -> 92 MoE
layers; hidden 7,168; vocab 163,840, untied; bf16.
  T  (the estimate's total, hand-derived in tests/test_weights_estimate_v4_kimi.py)
                                                            = 1,560,860,324,864 B
  R  (replicated, tests/test_sglang_kimi_k3_replicated.py)  =    10,636,036,096 B
     per MoE layer: 10,636,036,096 / 92                     =       115,609,088 B
  E  embedding = LM head: 163,840 x 7,168 x 2 B             =     2,348,810,240 B each
  body split in proportion to layers: T - 2 E - R
     = 1,560,860,324,864 - 4,697,620,480 - 10,636,036,096   = 1,545,526,668,288 B
  47 layers' share: 1,545,526,668,288 x 47 // 93            =   781,072,617,306 B
  46 layers' share: 1,545,526,668,288 x 46 // 93            =   764,454,050,981 B
"""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.checkpoint.weights import Weights

from conftest import report_schema, run_cli, validate

DIR = Path(__file__).resolve().parent / "architectures" / "kimi_linear" / "configs" / \
    "moonshotai--Kimi-K3"
PER_LAYER = 115_609_088
E = 2_348_810_240


def _pp2_tp8(*extra: str) -> dict:
    code, out, err = run_cli(str(DIR), "--system", "dgx-b200", "--nodes", "2", "--tp", "8",
                             "--pp", "2", "--kv-dtype", "fp8_e4m3", "--context", "131072",
                             "--json", *extra)
    assert code in (0, 1), err
    report = json.loads(out)
    validate(report, report_schema())
    (lay,) = report["layouts"]
    assert lay["id"] == "tp8pp2"
    return lay


def test_vllm_split_each_stage_keeps_its_layers_replicated_rows_whole():
    lay = _pp2_tp8()
    st = lay["pipeline"]["stages"]
    # vLLM get_pp_indices (vllm/distributed/utils.py:198-240): 93 // 2 = 46, remainder 1 ->
    # partitions[-2] + 1: [47, 46]
    assert [s["layers"] for s in st] == [[0, 47], [47, 93]]
    # stage 0: layers 0 .. 46, MoE layers 1 .. 46 = 46 -> 46 x 115,609,088 = 5,318,018,048
    # stage 1: layers 47 .. 92, all MoE = 46            -> 5,318,018,048
    assert [s["replicated_bytes"] for s in st] == [46 * PER_LAYER, 46 * PER_LAYER] == \
        [5_318_018_048, 5_318_018_048]
    # stage 0 sharded: 781,072,617,306 + E = 783,421,427,546 / 8 = 97,927,678,443.25 -> ceil
    #   97,927,678,444 + 5,318,018,048 = 103,245,696,492 (all / 8 was 98,599,578,573)
    # stage 1 sharded: 764,454,050,981 + E = 766,802,861,221 / 8 = 95,850,357,652.625 -> ceil
    #   95,850,357,653 + 5,318,018,048 = 101,168,375,701 (all / 8 was 96,507,962,035)
    assert [s["weights_bytes"] for s in st] == [103_245_696_492, 101_168_375_701]
    assert "replicated rows" in lay["pipeline"]["weights_basis"]


def test_vllm_engine_stages_load_the_same_weights():
    lay = _pp2_tp8("--engine", "vllm@0.33.0")
    rows = lay["engine"]["pipeline_stages"]["value"]
    assert [s["weights_bytes"] for s in rows] == [103_245_696_492, 101_168_375_701]


def test_sglang_split_gives_the_last_stage_more_replicated_rows():
    lay = _pp2_tp8("--engine", "sglang@0.5.23")
    st = lay["pipeline"]["stages"]
    # SGLang 0.5.10+ (sglang/srt/distributed/utils.py:137-148): the last 93 % 2 = 1 stage one
    # more layer: [46, 47]
    assert [s["layers"] for s in st] == [[0, 46], [46, 93]]
    # stage 0: MoE layers 1 .. 45 = 45 -> 5,202,408,960; stage 1: 46 .. 92 = 47 -> 5,433,627,136
    assert [s["replicated_bytes"] for s in st] == [45 * PER_LAYER, 47 * PER_LAYER] == \
        [5_202_408_960, 5_433_627_136]
    # stage 0 sharded: 764,454,050,981 + E = 766,802,861,221 / 8 -> 95,850,357,653
    #   + 5,202,408,960 = 101,052,766,613
    # stage 1 sharded: 781,072,617,306 + E = 783,421,427,546 / 8 -> 97,927,678,444
    #   + 5,433,627,136 = 103,361,305,580
    assert [s["weights_bytes"] for s in st] == [101_052_766_613, 103_361_305_580]
    rows = lay["engine"]["pipeline_stages"]["value"]
    assert [s["weights_bytes"] for s in rows] == [101_052_766_613, 103_361_305_580]


def test_a_stage_of_the_dense_layer_alone_holds_no_replicated_rows():
    lay = _pp2_tp8("--pp-layer-partition", "1,92")
    st = lay["pipeline"]["stages"]
    assert [s["layers"] for s in st] == [[0, 1], [1, 93]]
    # layer 0 is the dense one (first_k_dense_replace 1): no router, nothing whole
    assert "replicated_bytes" not in st[0]
    assert st[1]["replicated_bytes"] == 10_636_036_096
    # stage 0: 1,545,526,668,288 x 1 // 93 = 16,618,566,325 + E = 18,967,376,565 / 8
    #   = 2,370,922,070.625 -> 2,370,922,071
    # stage 1: 1,545,526,668,288 x 92 // 93 = 1,528,908,101,962 + E = 1,531,256,912,202 / 8
    #   = 191,407,114,025.25 -> 191,407,114,026 + 10,636,036,096 = 202,043,150,122
    assert [s["weights_bytes"] for s in st] == [2_370_922_071, 202_043_150_122]


def test_replicated_rows_spread_over_their_layers_and_a_row_outside_goes_first():
    # a row of 10 B over layers 0, 1, 2 (cumulative: 10 x 1 // 3 = 3 on [0, 1), 10 - 3 = 7
    # on [1, 3)); a row of 7 B outside the layers counts on the first stage
    w = Weights(100, "user", "x", replicated_rows=((10, (0, 1, 2)), (7, ())))
    assert w.replicated == 17
    assert (w.replicated_on(0, 1, True), w.replicated_on(1, 3, False)) == (3 + 7, 7)
    # the one per-rank rule: (100 - 17) / 4 = 20.75 -> 21, + 17
    assert w.rank_bytes(4) == 38


def test_a_plain_tp_layout_keeps_the_whole_model_rule():
    # PP=1 keeps the whole-model rule: (T - R) / 8 = 193,778,036,096 + R = 204,414,072,192
    code, out, err = run_cli(str(DIR), "--system", "dgx-b200", "--tp", "8", "--kv-dtype",
                             "fp8_e4m3", "--context", "131072", "--json")
    assert code in (0, 1), err
    (lay,) = json.loads(out)["layouts"]
    assert lay["per_rank"]["weights_bytes"] == 204_414_072_192


def test_the_api_plan_is_the_cli_answer():
    import kvfit
    report = kvfit.plan(str(DIR), system="dgx-b200", nodes=2, tp=8, pp=2, kv_dtype="fp8_e4m3",
                        context=131072, engine="sglang@0.5.23")
    code, out, err = run_cli(str(DIR), "--system", "dgx-b200", "--nodes", "2", "--tp", "8",
                             "--pp", "2", "--kv-dtype", "fp8_e4m3", "--context", "131072",
                             "--engine", "sglang@0.5.23", "--json")
    assert json.loads(out) == report.to_json()
    assert report.layouts[0].pipeline.stages[1].replicated_bytes == 47 * PER_LAYER


def test_the_text_report_says_what_each_stage_holds_whole():
    code, out, err = run_cli(str(DIR), "--system", "dgx-b200", "--nodes", "2", "--tp", "8",
                             "--pp", "2", "--kv-dtype", "fp8_e4m3", "--context", "131072")
    assert code in (0, 1), err
    # 5,318,018,048 B / 2^30 = 4.9528 GiB on each stage (46 MoE layers each)
    assert out.count("(of which 4.953 GiB whole)") == 2
