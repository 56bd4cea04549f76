"""Layout constraints the engines enforce (issue 12 part 5): specs/engines/*.yaml
`layout_constraints`, checked for every layout.

Qwen3-235B-A22B-FP8 (tests/fixtures/layout_constraints/Qwen--Qwen3-235B-A22B-FP8, pinned in
SOURCE.txt): moe_intermediate_size 1536, hidden_size 4096, 94 layers, 128 experts, FP8 with
weight_block_size [128, 128]. Sharded per rank:
  TP2: 1536 / 2 = 768 = 6 x 128     whole blocks
  TP4: 1536 / 4 = 384 = 3 x 128     whole blocks
  TP8: 1536 / 8 = 192 = 1.5 x 128   not whole blocks: the well-known start-up failure
       ("output_size of gate's and up's weight = 192 is not divisible by weight
       quantization block_n = 128", vllm-project/vllm#17569).
Engine rules, read from each engine's source:
  SGLang 0.5.23 fp8.py:1584-1601 raises (no padding on CUDA)            -> TP8 refused
  vLLM before 0.33 (the public failure above)                          -> TP8 refused
  vLLM 0.33.0 fused_moe/oracle/fp8.py:292-321 with --moe-backend auto: gcd(128, 128, 192,
    4096) = 64 >= 32, so the block scales are refined to 64 x 64          -> TP8 starts, same bytes
  vLLM 0.33.0 oracle/fp8.py:324-352 with an explicit non-Triton backend (deep_gemm): square
    blocks, 1536 and 4096 multiples of 128, EP 1 -> the shard is padded to 256 -> charged.
Padded bytes by hand: every routed expert weight is FP8 with float32 scales per 128 x 128
block (specs/quant/weight_storage.yaml fp8-block):
  gate / up [1536, 4096]: 6,291,456 + 12 x 32 x 4 = 6,292,992 B; down [4096, 1536]: the same
  per expert 3 x 6,292,992 = 18,878,976 B; x 128 experts x 94 layers = 227,151,839,232 B
  per rank at TP8: 227,151,839,232 / 8 = 28,393,979,904 B for 192 of each expert's columns;
  padded to 256: + 28,393,979,904 x 64 / 192 = 9,464,659,968 B per rank.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.engines.spec import rules_for

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
QWEN_FP8 = ROOT / "tests" / "fixtures" / "layout_constraints" / "Qwen--Qwen3-235B-A22B-FP8"
DSV3 = ROOT / "tests" / "architectures" / "deepseek_v3" / "configs" / "deepseek-ai--DeepSeek-V3"
H100X8 = ("--hardware", "h100-80", "--gpus", "8")


def _lay(report: dict, lid: str) -> dict:
    return next(x for x in report["layouts"] if x["id"] == lid)


def _actions(lay: dict) -> dict:
    return {c["engine"]: c["action"] for c in lay.get("engine_constraints", ())}


def test_must_show_tp8_refused_by_sglang_and_recommended_layout_starts():
    code, r = run_json(QWEN_FP8, *H100X8, "--engine", "sglang")
    assert code == 0
    tp8 = _lay(r, "tp8")
    assert tp8["valid"] is False and tp8["fits"] is False and tp8["max_sequences"] == 0
    assert "SGLang 0.5.23 refuses to start" in tp8["reason"]
    assert "moe_intermediate_size 1,536 / TP8 = 192" in tp8["reason"]
    assert "fp8.py:1584-1601" in tp8["reason"]
    (c,) = tp8["engine_constraints"]
    assert (c["shard"], c["block"], c["action"]) == (192, [128, 128], "refuse")
    # TP4 (384 = 3 x 128) and TP2 (768) are whole blocks: no constraint, and TP4 is chosen.
    assert "engine_constraints" not in _lay(r, "tp4")
    assert r["recommended"]["id"] == "tp4" and _lay(r, "tp4")["valid"]


def test_older_vllm_refuses_tp8_and_0_33_refines_it():
    code, old = run_json(QWEN_FP8, *H100X8, "--engine", "vllm@0.19.0")
    assert code == 0
    assert _lay(old, "tp8")["valid"] is False and old["recommended"]["id"] != "tp8"
    assert "vllm-project/vllm/issues/17569" in _lay(old, "tp8")["reason"]
    code, new = run_json(QWEN_FP8, *H100X8, "--engine", "vllm")
    tp8 = _lay(new, "tp8")
    assert code == 0 and tp8["valid"] is True
    (c,) = tp8["engine_constraints"]
    assert c["action"] == "refine" and "64 x 64" in c["text"]        # gcd(128,128,192,4096)
    assert c["extra_bytes"] == 0 and "oracle/fp8.py:292-321" in c["source"]


def test_vllm_0_33_pads_with_an_explicit_backend_and_charges_the_padded_bytes():
    _, auto = run_json(QWEN_FP8, *H100X8, "--engine", "vllm")
    code, pad = run_json(QWEN_FP8, *H100X8, "--engine", "vllm", "--moe-backend", "deep_gemm")
    assert code == 0
    (c,) = _lay(pad, "tp8")["engine_constraints"]
    assert c["action"] == "pad" and c["extra_bytes"] == 9_464_659_968       # derived above
    a, p = _lay(auto, "tp8")["per_rank"], _lay(pad, "tp8")["per_rank"]
    assert p["weights_bytes"] - a["weights_bytes"] == 9_464_659_968
    assert _lay(pad, "tp8")["max_sequences"] < _lay(auto, "tp8")["max_sequences"]
    code, out, _ = run_cli(QWEN_FP8, *H100X8, "--print-command", "vllm", "--moe-backend",
                           "deep_gemm")
    assert "--moe-backend deep_gemm" in out and "pads each shard to 256" in out


def test_static_plan_never_recommends_a_layout_an_engine_refuses():
    code, r = run_json(QWEN_FP8, *H100X8)
    assert code == 0
    tp8 = _lay(r, "tp8")
    assert tp8["valid"] is False
    assert _actions(tp8) == {"vLLM 0.33.0": "refine", "SGLang 0.5.23": "refuse"}
    assert "vLLM 0.33.0 starts it (plan with --engine vllm)" in tp8["reason"]
    assert r["recommended"]["id"] == "tp4"
    code, out, _ = run_cli(QWEN_FP8, *H100X8)
    assert "TP=8: SGLang 0.5.23 refuses to start" in out


def test_expert_parallel_keeps_experts_whole_so_the_block_rule_holds():
    # Under EP the experts' TP is 1: 1536 per rank is 12 whole blocks, whatever the
    # attention TP; the 8-GPU expert group starts on SGLang.
    code, r = run_json(QWEN_FP8, *H100X8, "--parallelism", "sglang-dpa", "--engine", "sglang")
    assert code == 0
    dpa = [x for x in r["layouts"] if x["parallelism"] == "sglang-dpa"]
    assert dpa and all("engine_constraints" not in x for x in dpa)
    assert all(x["valid"] for x in dpa if x["ep"] == 8)


def test_dense_mlp_rule_refuses_deepseek_tp32():
    # DeepSeek-V3 (FP8 128 x 128, 3 dense layers of intermediate_size 18432): at TP32 the
    # dense down projection gets 18432 / 32 = 576 = 4.5 blocks per rank; both engines refuse
    # (vLLM fp8_utils.py:1317-1327, SGLang fp8.py:592-598). TP16: 1152 = 9 x 128 starts.
    code, r = run_json(DSV3, "--system", "dgx-h200", "--nodes", "4", "--tp", "32",
                       "--context", "8k", "--engine", "vllm")
    tp32 = _lay(r, "tp32")
    assert code == 1 and tp32["valid"] is False
    dense = [c for c in tp32["engine_constraints"] if c["constraint"] == "fp8-block-dense"]
    assert [(c["value"], c["shard"], c["action"]) for c in dense] == [(18432, 576, "refuse")]
    # the MoE rule at TP32: 2048 / 32 = 64; vLLM 0.33 refines (gcd(128,128,64,7168) = 64)
    moe = [c for c in tp32["engine_constraints"] if c["constraint"] == "fp8-block-moe"]
    assert [(c["shard"], c["action"]) for c in moe] == [(64, "refine")]
    code, r = run_json(DSV3, "--system", "dgx-h200", "--nodes", "2", "--tp", "16",
                       "--context", "8k", "--engine", "vllm")
    assert _lay(r, "tp16")["valid"] and "engine_constraints" not in _lay(r, "tp16")


def test_constraints_are_per_engine_version_data():
    ids = {e: [(c["id"], c["action"], [m["action"] for m in c.get("remedies", ())])
               for c in rules_for(e, v).constraints]
           for e, v in (("vllm", "0.33.0"), ("sglang", "0.5.23"))}
    assert ids["vllm"] == [("fp8-block-moe", "refuse", ["refine", "pad"]),
                           ("fp8-block-dense", "refuse", [])]
    assert ids["sglang"] == [("fp8-block-moe", "refuse", []), ("fp8-block-dense", "refuse", []),
                             ("int8-block-moe", "refuse", []), ("int8-block-dense", "refuse", [])]
    old = [c for c in rules_for("vllm", "0.19.0").constraints if c["id"] == "fp8-block-moe"]
    assert [c.get("remedies") for c in old] == [None]
    assert rules_for("sglang", None)["ep_experts_even"] is True
    assert rules_for("vllm", None)["ep_experts_even"] is False


def test_unquantized_checkpoint_has_no_block_constraint():
    # The bf16 Qwen3-235B-A22B config has no weight_block_size: TP8 is valid for both engines.
    bf16 = ROOT / "tests" / "architectures" / "qwen3_moe" / "configs" / "Qwen--Qwen3-235B-A22B"
    code, r = run_json(bf16, *H100X8, "--weight-gib", "400")
    assert code in (0, 1) and _lay(r, "tp8")["valid"] and "engine_constraints" not in _lay(r, "tp8")


def test_sglang_attention_dp_still_splits_dense_layers_over_the_whole_group():
    # SGLang builds DeepSeek's dense MLP over the whole --tp group unless
    # --moe-dense-tp-size 1 (models/deepseek_v2.py:2665-2675): DPA32 / attention TP1 still
    # shards intermediate_size 18432 / 32 = 576 = 4.5 blocks -> refused. vLLM's DP32 x
    # attention TP1 splits it over the attention TP (1): whole.
    args = (DSV3, "--system", "dgx-h200", "--nodes", "4", "--tp", "32", "--context", "8k")
    _, r = run_json(*args, "--parallelism", "sglang-dpa", "--engine", "sglang")
    lay = _lay(r, "sglang-dpa-g32-a32")
    assert lay["valid"] is False
    assert [(c["constraint"], c["tp"], c["shard"]) for c in lay["engine_constraints"]] == [
        ("fp8-block-dense", 32, 576)]
    _, r = run_json(*args, "--parallelism", "vllm-dp-ep", "--engine", "vllm")
    lay = _lay(r, "vllm-dp-ep-g32-a32")
    assert lay["valid"] is True and "engine_constraints" not in lay


def test_block_int8_is_refused_by_sglang_like_block_fp8(tmp_path):
    # SYNTHETIC: the pinned Qwen3-235B-A22B-FP8 config with its quantization declaration
    # rewritten as SGLang's blockwise_int8 (activation_scheme dynamic, weight_block_size
    # [128, 128], the same modules_to_not_convert); no public block-INT8 Qwen3 config is pinned.
    # SGLang 0.5.23 blockwise_int8.py:278-297 raises on 1536 / 8 = 192 as fp8.py does.
    cfg = json.loads((QWEN_FP8 / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "blockwise_int8", "activation_scheme": "dynamic",
                                  "weight_block_size": [128, 128],
                                  "modules_to_not_convert": cfg["quantization_config"][
                                      "modules_to_not_convert"]}
    folder = tmp_path / "qwen3-235b-block-int8"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    code, r = run_json(folder, *H100X8, "--engine", "sglang")
    assert code == 0
    tp8 = _lay(r, "tp8")
    assert tp8["valid"] is False and "blockwise_int8.py:278-297" in tp8["reason"]
    assert "192 per rank is not a multiple of the checkpoint's 128 x 128 INT8 weight block" \
        in tp8["reason"]
    (c,) = tp8["engine_constraints"]
    assert (c["constraint"], c["shard"], c["action"]) == ("int8-block-moe", 192, "refuse")
    assert r["recommended"]["id"] == "tp4" and _lay(r, "tp4")["valid"]
    # Stored like block FP8: 1 B per element plus a float32 scale per 128 x 128 block, so the
    # config estimate equals the FP8 checkpoint's.
    _, fp8 = run_json(QWEN_FP8, *H100X8, "--engine", "sglang")
    assert r["weights"]["bytes"] == fp8["weights"]["bytes"]
    assert r["weights"]["source"] == "config estimate"
