"""Engine predictions: hybrid block alignment and recurrent page padding (Qwen3.6, Qwen3-Next
under vLLM 0.33), the sliding-window admission reserve and --max-num-batched-tokens (gpt-oss),
refusals to start, the public predict() API, flags and --print-command."""

from __future__ import annotations

import argparse
import math

import pytest
from engine_log_cases import CONFIGS

from kvfit.checkpoint.local import load_local
from kvfit.engines import engine_args, pop_engine_args, predict, print_command
from kvfit.engines.spec import rules_for
from kvfit.engines.state import engine_state
from kvfit.errors import UnsupportedArchitecture
from kvfit.hardware.presets import find_accelerator

GIB, MIB = 1024**3, 1024**2
H100 = find_accelerator("h100-80")


def run(config: str, engine: str, version: str, flags: dict, tp: int = 1,
        weights_gib: float | None = 10.0, ctx: int = 131072) -> dict:
    rules = rules_for(engine, version)
    try:
        st = engine_state(load_local(CONFIGS / config), rules, flags.get("kv_cache_dtype"), ctx)
    except UnsupportedArchitecture as exc:
        pytest.skip(f"{config}: {exc.message}")
    w = None if weights_gib is None else int(weights_gib * GIB)
    return predict(engine, version, flags, st.components, tp, w, H100.memory("visible")[0], ctx,
                   st.quant, total_bytes=H100.cuda_total_mib * MIB, vocab=st.vocab,
                   max_context=st.max_context)


@pytest.mark.parametrize("config, kv, tp, block, state, padded", [
    # Qwen3.6-35B-A3B: attention 2 KV heads x 512 values; GDN conv 8,192 x 3 x 2 B + SSM
    # 32 x 128 x 128 x 4 B (config mamba_ssm_dtype float32) = 2,146,304 B at TP=1.
    # bf16: 2,048 B/token -> 16 x ceil(2,146,304 / 32,768) = 1,056 tokens; page 2,162,688.
    ("Qwen--Qwen3.6-35B-A3B", "auto", 1, 1056, 2_146_304, 2_162_688),
    # fp8: 1,024 B/token -> 2,096 tokens; page 2,146,304 (no padding).
    ("Qwen--Qwen3.6-35B-A3B", "fp8", 1, 2096, 2_146_304, 2_146_304),
    # TP=8: 1 KV head per rank (512 B bf16); state 6,144 + 262,144 = 268,288 -> 272 tokens.
    ("Qwen--Qwen3.6-35B-A3B", "auto", 8, 272, 268_288, 278_528),
    ("Qwen--Qwen3.6-35B-A3B", "fp8", 8, 528, 268_288, 270_336),
    # Qwen3-Next (engines.md §1.5): no mamba_ssm_dtype -> vLLM keeps the SSM at bf16:
    # 49,152 + 1,048,576 = 1,097,728 B -> 16 x ceil(1,097,728 / 32,768) = 544; +1.49 %.
    ("Qwen--Qwen3-Next-80B-A3B-Thinking", "auto", 1, 544, 1_097_728, 1_114_112),
    ("Qwen--Qwen3-Next-80B-A3B-Thinking", "auto", 8, 144, 137_216, 147_456),
])
def test_vllm_0_33_hybrid_alignment(config, kv, tp, block, state, padded):
    out = run(config, "vllm", "0.33.0", {"kv_cache_dtype": kv}, tp=tp)
    h = out["hybrid"]
    assert out["block_size"]["value"] == block
    assert (h["recurrent_page_bytes"]["value"], h["recurrent_page_padded_bytes"]["value"]) == (
        state, padded)
    assert f"Setting attention block size to {block} tokens" in h["log_line"]
    assert h["recurrent_padding_percent"]["value"] == round(100 * (padded - state) / state, 2)


def test_qwen3_6_concurrency_is_not_pool_tokens_over_len():
    # fp8, TP=8, 131,072 tokens: 1 attention group + 3 GDN groups of 10 layers. A request pins
    # ceil(131,072 / 528) = 249 attention blocks + 3 groups x 3 recurrent blocks (0.33 align
    # mode: 2 + 1 prefill checkpoint) = 258; the pool's attention tokens / max_model_len
    # ignores the 9 recurrent blocks.
    out = run("Qwen--Qwen3.6-35B-A3B", "vllm", "0.33.0", {"kv_cache_dtype": "fp8"}, tp=8,
              weights_gib=8.4)
    per = {(b["family"], b["blocks"]) for b in out["request_blocks_by_group"]}
    assert per == {("full", 249), ("recurrent", 3)} and out["blocks_per_request"]["value"] == 258
    n = out["num_gpu_blocks"]["value"]
    assert out["max_concurrency"]["value"] == round(n / 258, 4)
    assert out["attention_token_capacity"]["value"] == n * 528
    assert out["capacity_over_len"]["value"] > out["max_concurrency"]["value"] * 1.03
    assert out["kv_cache_tokens"]["value"] == int(n / 258 * 131072)


@pytest.mark.parametrize("mnbt, sliding_blocks", [
    # 0.33: a sliding layer holds W - 1 + 2 x max_num_batched_tokens (async scheduling):
    # ceil((127 + 2 x 2,048) / 16) + 1 = 265; with 8,192: ceil(16,511 / 16) + 1 = 1,033.
    (2048, 265), (8192, 1033), (32768, 4105),
])
def test_gpt_oss_sliding_admission_reserve(mnbt, sliding_blocks):
    out = run("openai--gpt-oss-20b", "vllm", "0.33.0", {"max_num_batched_tokens": mnbt},
              weights_gib=13.0)
    per = {b["family"]: b["blocks"] for b in out["request_blocks_by_group"]}
    assert per == {"full": 8192, "sliding": sliding_blocks}
    assert "2 x" in next(b["rule"] for b in out["request_blocks_by_group"]
                         if b["family"] == "sliding")


def test_gpt_oss_concurrency_falls_as_batched_tokens_grow():
    conc = [run("openai--gpt-oss-20b", "vllm", "0.33.0", {"max_num_batched_tokens": m},
                weights_gib=13.0)["max_concurrency"]["value"] for m in (2048, 8192, 32768)]
    assert conc[0] > conc[1] > conc[2]


def test_gpt_oss_reserve_is_capped_by_max_model_len_in_0_19():
    # v0.19 at 8,192 tokens: ceil(min(127 + 8,192, 8,192) / 16) + 1 = 513 (fixture log).
    out = run("openai--gpt-oss-20b", "vllm", "0.19.0", {"max_model_len": 8192}, tp=2, ctx=8192)
    assert {b["family"]: b["blocks"] for b in out["request_blocks_by_group"]} == {
        "full": 512, "sliding": 513}


def test_vllm_refuses_when_max_model_len_does_not_fit():
    # Qwen3-32B: 64 layers x 8 KV heads x 256 x 2 B = 262,144 B/token; 40,960 tokens need
    # 10 GiB; with 68 GiB of weights on one H100 about 2.6 GiB is left.
    out = run("Qwen--Qwen3-32B", "vllm", "0.33.0", {}, weights_gib=68.0, ctx=40960)
    ref = out["refusal"]
    assert ref and "To serve at least one request with the model's max seq len (40960)" in ref[
        "reason"]
    assert "kv_cache_planning.py:50-87" in ref["rule"]
    longest = ref["estimated_max_model_len"]
    assert 0 < longest < 40960
    per_block = out["bytes_per_block"]["value"]
    usable = out["memory"]["available_kv_bytes"]["value"] - per_block
    assert math.ceil(longest / 16) * per_block <= usable < (math.ceil(longest / 16) + 1) * per_block


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_refuses_a_context_beyond_the_config(engine):
    # Qwen3-32B declares max_position_embeddings 40,960.
    out = run("Qwen--Qwen3-32B", engine, None, {}, weights_gib=30.0, ctx=65536)
    assert "greater than the derived max_model_len (40960)" in out["refusal"]["reason"]


def test_vllm_refuses_when_weights_leave_nothing():
    out = run("Qwen--Qwen3-32B", "vllm", "0.33.0", {}, weights_gib=75.0, ctx=40960)
    assert "No available memory for the cache blocks" in out["refusal"]["reason"]


def test_sglang_refuses_when_rest_is_negative():
    out = run("Qwen--Qwen3-32B", "sglang", "0.5.23", {}, weights_gib=70.0, ctx=40960)
    assert "Increase --mem-fraction-static" in out["refusal"]["reason"]


def test_sglang_hybrid_recurrent_pool_caps_running_requests():
    # Qwen3.6 at TP=8: one recurrent slot = 30 GDN layers x (conv 8,192 / 8 x 3 x 2 B +
    # SSM 32 / 8 x 128 x 128 x 4 B) = 30 x 268,288 = 8,048,640 B; the pool gets 0.9 / 1.9 of
    # the rest; 5 slots per running request (radix cache with extra_buffer) cap the requests.
    out = run("Qwen--Qwen3.6-35B-A3B", "sglang", "0.5.23", {}, weights_gib=67.0 / 8, tp=8)
    assert out["cells"]["recurrent_bytes_per_slot"]["value"] == 8_048_640
    rest, slot = out["rest_bytes"]["value"], 8_048_640
    slots = out["mamba_cache_size"]["value"]
    assert slots == (rest * 0.9 / 1.9 - slot) // slot
    assert out["max_running_requests"]["value"] == slots // 5
    assert "/ 5 per request" in out["max_running_requests"]["basis"]
    radix_off = run("Qwen--Qwen3.6-35B-A3B", "sglang", "0.5.23", {"disable_radix_cache": True},
                    weights_gib=67.0 / 8, tp=8)
    assert radix_off["max_running_requests"]["value"] > out["max_running_requests"]["value"]


def _numbers(node, path=""):
    if isinstance(node, dict):
        if "value" in node and "basis" in node:
            yield path, node
        for k, v in node.items():
            yield from _numbers(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, f"{path}[{i}]")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_every_number_has_a_basis(engine):
    out = run("Qwen--Qwen3-32B", engine, None, {}, weights_gib=61.0 / 2, tp=2, ctx=32768)
    found = list(_numbers(out))
    assert len(found) > 10
    for path, n in found:
        assert n["basis"].startswith(("engine rule", "estimate (fitted to", "user", "log",
                                      "hardware spec", "plan", "kvfit state", "checkpoint",
                                      "not predicted", "needs", "GPU memory", "derived")), (path, n)


def test_sglang_backend_forces_page_size():
    # FlashMLA forces 64-token pages (overrides.py:1143-1200): tokens round down to 64.
    out = run("moonshotai--Kimi-K2-Thinking", "sglang", "0.5.23", {"attention_backend": "flashmla"},
              weights_gib=60.0, tp=8, ctx=32768)
    assert out["page_size"]["value"] == 64 and "flashmla" in out["page_size"]["basis"]
    assert out["max_total_num_tokens"]["value"] % 64 == 0


def test_engine_args_round_trip():
    p = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    engine_args(p)
    ns = vars(p.parse_args(["--engine", "vllm@0.33.0", "--max-num-batched-tokens", "2048",
                            "--no-enable-prefix-caching", "--cuda-graph-gib", "0.5"]))
    opts = pop_engine_args(ns)
    assert ns == {} and (opts["engine"], opts["version"]) == ("vllm", "0.33.0")
    assert opts["flags"] == {"max_num_batched_tokens": 2048, "enable_prefix_caching": False}
    assert opts["overrides"] == {"cudagraph": 0.5}


def test_print_command_spelling_by_version():
    from kvfit.engines.command import Launch, launch

    v = print_command("vllm", "0.33.0", "Qwen/Qwen3-32B", 2, 4, 32768, "bf16",
                      {"max_num_batched_tokens": 2048})
    assert v["launch"] == ("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 "
                           "--data-parallel-size 4 --max-model-len 32768 --kv-cache-dtype "
                           "bfloat16 --port 8000 --max-num-batched-tokens 2048")
    dpa = Launch("Qwen/Qwen3-32B", 32768, "fp8", parallelism="sglang-dpa", tp=8,
                 attention_dp=8, attention_tp=1)
    new, old = launch("sglang", "0.5.23", dpa), launch("sglang", "0.4.9", dpa)
    assert "--kv-cache-dtype fp8_e4m3" in new["launch"] and "--attn-dp-size 8" in new["launch"]
    assert "--enable-dp-attention --dp-size 8" in old["launch"]
    assert "sglang.benchmark.serving" in new["bench"] and "sglang.bench_serving" in old["bench"]


def test_plan_with_engine_adds_engine_sections_and_command():
    from kvfit.planner.build import plan
    from kvfit.planner.request import PlanRequest
    from kvfit.report.engine_text import render_text

    req = PlanRequest(model=str(CONFIGS / "Qwen--Qwen3-32B"), hardware="h100-80", gpus=2,
                      context="32k", weight_gib=61, engine="vllm", engine_version="0.33.0",
                      engine_flags={"max_num_seqs": 256}, print_command="vllm")
    report = plan(req)
    sections = [lay.engine for lay in report.layouts]
    assert sections and all(s.engine == "vllm" and s.version == "0.33.0" for s in sections)
    assert report.engine_command.launch.startswith("vllm serve ")
    assert "--max-num-seqs 256" in report.engine_command.launch
    text = render_text(report)
    assert "GPU KV cache size" in text and "(vllm 0.33.0" in text
