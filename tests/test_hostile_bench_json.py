"""Regression cases found by the bench_json fuzz kind: a benchmark result file is untrusted
input. Counts are whole numbers >= 0, latencies finite and >= 0, nesting is bounded, and a
value no benchmark could report reads as "not reported", so the point fails closed."""

from __future__ import annotations

import json

import pytest

from kvfit.calibrate.bench import read_result
from kvfit.calibrate.qualify import judge

PROMPTS, PER_REQUEST = 4, 128          # 4 prompts x 128 input tokens = 512 tokens requested


def _point(tmp_path, text: str, slo: dict | None = None) -> dict:
    path = tmp_path / "bench.json"
    path.write_text(text)
    result, problem = read_result(path)
    metrics = {"max_running": 2, "max_waiting": 0, "waiting_samples": 0, "max_kv_usage": 0.5,
               "samples": 4, "errors": 0, "last_error": None, "implausible": [],
               "metrics": {"running": "r", "waiting": "w", "kv_usage": "k"}}
    want = PROMPTS * PER_REQUEST
    raw = {"offered_concurrency": 2, "num_prompts": PROMPTS, "command": ["bench"],
           "exit_status": 0, "timed_out": False, "duration_s": 1.0, "result": result,
           "result_problem": problem, "output_tail": [], "metrics": metrics, "oom": [],
           "prompt_counter": {"metric": "p", "names": ["p"], "before": 0, "after": want,
                              "delta": want, "error": None}}      # the server saw every token
    point = judge(raw, PER_REQUEST, slo or {})
    json.dumps(point, allow_nan=False)
    return point


def _result(**changes) -> str:
    doc = {"total_input_tokens": 512, "completed": PROMPTS, "failed": 0, "p99_ttft_ms": 100.0}
    return json.dumps(doc | changes)


def test_a_clean_result_qualifies(tmp_path):
    assert _point(tmp_path, _result())["qualified"]


def test_negative_input_tokens_are_not_a_special_token_shortfall(tmp_path):
    # 512 - (-512) = 1,024 short = 256 per request... and -32 tokens with 1 token per
    # request read as "1 to 4 special tokens fewer" with the server counter vouching
    point = _point(tmp_path, _result(total_input_tokens=-512))
    assert not point["qualified"] and point["tokens"]["reported_total"] is None


@pytest.mark.parametrize("raw", ["1" + "0" * 400, "1e999", "NaN", "Infinity"])
def test_a_huge_or_non_finite_reading_is_not_reported(tmp_path, raw):
    # 10**400 made math.isfinite() raise OverflowError (and float() in the latency reader)
    text = _result().replace('"p99_ttft_ms": 100.0', f'"p99_ttft_ms": {raw}')
    text = text.replace('"total_input_tokens": 512', f'"total_input_tokens": {raw}')
    point = _point(tmp_path, text, {"max_ttft_ms": 500.0})
    assert point["latency"]["ttft_ms"] is None and not point["qualified"]
    assert point["slo"]["failures"] == ["p99 ttft_ms not reported (limit 500 ms)"]


def test_a_negative_latency_does_not_meet_an_slo(tmp_path):
    point = _point(tmp_path, _result(p99_ttft_ms=-1.0), {"max_ttft_ms": 500.0})
    assert point["latency"]["ttft_ms"] is None and point["slo"]["qualified"] is False


def test_a_fractional_count_is_not_a_count(tmp_path):
    point = _point(tmp_path, _result(completed=3.5))
    assert not point["qualified"] and point["completions"]["completed"] is None
    assert _point(tmp_path, _result(completed=4.0))["qualified"]      # 4.0 is the count 4


def test_a_result_nested_past_the_stack_is_no_result(tmp_path):
    # json.loads raised RecursionError (not ValueError) on 5,000 nested arrays
    point = _point(tmp_path, "[" * 5000 + "]" * 5000)
    assert not point["qualified"]
    assert "not a JSON object" in " ".join(point["reasons"])
