"""`kvfit explain-log`: real vLLM and SGLang start-up logs -> side-by-side tables
(snapshots), every fixture log explained, and unreadable input -> exit 2."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest
from engine_log_cases import CONFIGS, LOGS, load_cases

from kvfit.cli.explain_log import main
from kvfit.engines.explain import explain

CASES = {c.slug: c for c in load_cases()}


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_vllm_log_table(snap_text):
    # The Instruct log, planned from the pinned base config (same geometry: 32 layers,
    # 8 KV heads, head_dim 128).
    code, out, err = cli(LOGS / "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log",
                         "--model-dir", CONFIGS / "meta-llama--Llama-3.1-8B")
    assert code == 0, err
    assert "available KV memory" in out and "58.11 GiB" in out
    assert out == snap_text


def test_vllm_hybrid_log_table(snap_text):
    # Local NVFP4 copy of Qwen3.6-35B-A3B; nvidia's NVFP4 config has the same geometry.
    code, out, err = cli(LOGS / "vllm-0.24.0-qwen3.6-35b-a3b-nvfp4-rtx5090.log",
                         "--model-dir", CONFIGS / "nvidia--Qwen3.6-35B-A3B-NVFP4",
                         "--engine-version", "0.24.0", "--hardware", "rtx-5090-32")
    assert code == 0, err
    assert "567,978" in out and "2,096" in out
    assert out == snap_text


def test_sglang_log_table(snap_text):
    code, out, err = cli(LOGS / "sglang-vunknown-qwen3-14b-rtxa6000.log",
                         "--model-dir", CONFIGS / "Qwen--Qwen3-14B", "--engine-version", "0.4.6",
                         "--tp", "1")
    assert code == 0, err
    assert "max_total_num_tokens" in out and "91,749" in out
    assert out == snap_text


def test_json_output():
    code, out, _ = cli(LOGS / "vllm-0.19.0-gpt-oss-20b-h100-tp2.log", "--model-dir",
                       CONFIGS / "openai--gpt-oss-20b", "--json")
    data = json.loads(out)
    assert (data["engine"], data["version"], data["version_basis"], data["tp"]) == (
        "vllm", "0.19.0", "log", 2)
    row = next(r for r in data["rows"] if r["number"] == "GPU KV cache size, from the printed memory")
    assert abs(row["diff_pct"]) < 0.01


# Fixture logs kept on purpose although kvfit cannot reproduce them yet; each YAML's
# `known_miss` says why. The tests below assert that they still miss, so fixing the gap
# shows up here (move the slug to END_TO_END then).
KNOWN_MISSES: set[str] = set()


@pytest.mark.parametrize("slug", sorted(CASES))
def test_every_fixture_log_is_explained(slug):
    c = CASES[slug]
    res = explain(c.text, model_dir=str(c.model_dir), engine_version=c.version, tp=c.tp,
                  hardware=c.hardware, flags=c.thread_flags)
    checks = [r for r in res["rows"] if "from the printed" in r["number"]
              and r["diff_pct"] is not None]
    assert checks, "no rule check against the printed memory"
    if slug in KNOWN_MISSES:
        assert c.meta.get("known_miss") and all(abs(r["diff_pct"]) > 5 for r in checks), checks
        return
    # the paging rules rebuild the printed token counts within 5% (all but one within 0.1%;
    # the vLLM Qwen3-235B log is 1.1% off because only TP0's memory was quoted)
    assert all(abs(r["diff_pct"]) <= 5 for r in checks), checks


# Logs kvfit predicts end to end within 5% (the weights come from the log itself, else from
# the spec's config-shape estimate; the GPU is known). The other fixture logs miss an input
# (no weights line and no estimate for the spec/checkpoint, or an unknown GPU), are
# KNOWN_MISSES, or are predicted but off (E2E_MISSES); bench/engine_accuracy.py keeps them all
# in its table with the reason.
END_TO_END = {
    # weights from the config estimate (no weights line in these excerpts):
    "vllm-0.21.0-qwen3-8b-rtxa5000",
    "sglang-vunknown-qwen3-235b-a22b-fp8-h100-tp4",
    "sglang-vunknown-qwen3-14b-rtxa6000",
    "vllm-0.19.0-llama-3.1-8b-instruct-dtf32-h100-tp1",
    "vllm-0.19.0-gemma-2-9b-it-h100-tp1",
    "vllm-0.19.0-gemma-3-27b-it-h100-tp1",
    "vllm-0.19.0-gpt-oss-20b-h100-tp2",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1",
    "vllm-0.19.0-llama-3.3-70b-fp8-dynamic-h100-tp2",
    "vllm-0.19.0-llama-3.3-70b-fp8-dynamic-h100-tp4",  # held out: added after the fits
    "vllm-0.19.0-llama-4-scout-17b-16e-instruct-h100-tp4",  # held out: added after the fits
    # held out, added in the second evidence round (same v0.19.0 sweep, new checkpoints):
    "vllm-0.19.0-gemma-2-2b-it-h100-tp1",
    "vllm-0.19.0-llama-3.1-8b-instruct-qfp8-h100-tp1",
    "vllm-0.19.0-mistral-small-3.1-24b-w8a8-h100-tp1",
    "vllm-0.19.0-mistral-small-3.1-24b-w8a8-h100-tp2",
    "vllm-0.19.0-qwen2.5-7b-instruct-fp8-dynamic-h100-tp1",
    "vllm-0.19.0-qwen2.5-7b-instruct-w8a8-h100-tp1",
    # held out, added in session 6 (the same sweep; the pinned Llama-2-7b is a stand-in config):
    "vllm-0.19.0-codellama-7b-h100-tp1",
    # session 11: every other log of the llm-d-planner v0.19.0 sweep whose served checkpoint's
    # config (or a same-geometry stand-in) is pinned, the two failed starts that sized the KV
    # pool before running out of memory included (weights from the log; the two PP runs
    # from the config estimate split over the stages, tests/test_explain_pp.py)
    "vllm-0.19.0-gemma-7b-h100-tp1",
    "vllm-0.19.0-phi-2-h100-tp1-len2048",
    "vllm-0.19.0-granite-3.1-8b-instruct-h100-tp1",
    "vllm-0.19.0-granite-3.3-8b-instruct-h100-tp1",
    "vllm-0.19.0-phi-4-h100-tp1",
    "vllm-0.19.0-deepseek-v2-lite-chat-h100-tp1",
    "vllm-0.19.0-llama-3.1-8b-instruct-kvfp8-h100-tp1",
    "vllm-0.19.0-llama-3.1-8b-instruct-dtbf16-h100-tp1",
    "vllm-0.19.0-llama-3.1-8b-instruct-dtf16-h100-tp1",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-pp2",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-pp4",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1-len2048",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1-len4096",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1-len8192",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1-len32768",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp2",
    "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp4",
    "vllm-0.19.0-llama-3.1-8b-instruct-w4a16-dtf16-h100-tp1",
    "vllm-0.19.0-llama-3.1-8b-instruct-w8a8-dtf16-h100-tp1",
    "vllm-0.19.0-llama-3.3-70b-instruct-w8a8-h100-tp2",
    "vllm-0.19.0-mistral-small-3.1-24b-instruct-h100-tp1",
    "vllm-0.19.0-mixtral-8x7b-instruct-h100-tp2",
    "vllm-0.19.0-kimi-dev-72b-h100-tp2",
    "vllm-0.19.0-kimi-dev-72b-h100-tp4",
    "vllm-0.19.0-qwen2.5-72b-instruct-h100-tp2",
    "vllm-0.19.0-qwen2.5-7b-instruct-kvfp8-h100-tp1",
    "vllm-0.19.0-qwen2.5-7b-instruct-dtbf16-h100-tp1",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp1-len2048",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp1-len4096",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp1-len8192",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp1-len16384",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp1-len32768",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp2",
    "vllm-0.19.0-qwen2.5-7b-instruct-h100-tp4",
    "vllm-0.19.0-qwen3-30b-a3b-h100-tp1",
    "vllm-0.19.0-qwen3-8b-h100-tp1",
    "vllm-0.19.0-gpt-oss-20b-h100-tp1-failed",
    "vllm-0.19.0-gpt-oss-20b-h100-tp2-failed",
}
# Predicted end to end but more than 5% off; each YAML's `end_to_end_miss` says what is known.
# The MTP run misses from session 11, once its activation peak comes from the engine's code.
E2E_MISSES = {"vllm-vunknown-qwen3-235b-a22b-fp8-h100-tp4",
              "vllm-0.24.0-qwen3.6-35b-a3b-nvfp4-rtx5090",
              "vllm-0.24.0-qwen3.6-27b-fp8-mtp-2x3090-tp2"}
_MEMORY = ("available KV memory", "KV pool bytes (K+V, per GPU)", "SWA pool bytes (K+V, per GPU)")
_TOKENS = ("GPU KV cache size", "max_total_num_tokens")


def test_end_to_end_predictions_within_5_percent():
    errors = {}
    for slug, c in CASES.items():
        res = explain(c.text, model_dir=str(c.model_dir), engine_version=c.version, tp=c.tp,
                      hardware=c.hardware, flags=c.thread_flags)
        rows = [r for r in res["rows"] if r["number"] in _MEMORY + _TOKENS
                and r["printed"] is not None]
        if rows and all(r["predicted"] is not None for r in rows):
            errors[slug] = {r["number"]: r["diff_pct"] for r in rows}
    assert set(errors) == END_TO_END | KNOWN_MISSES | E2E_MISSES
    assert all(CASES[s].meta.get("end_to_end_miss") for s in E2E_MISSES)
    assert all(any(abs(d) > 5 for d in errors[s].values()) for s in E2E_MISSES), errors
    # the issue-6 bar: both numbers within 5% on at least three quarters of ALL fixture logs
    assert len(END_TO_END) / len(CASES) >= 0.75, (len(END_TO_END), len(CASES))
    assert all(len(e) == 2 and all(abs(d) <= 5 for d in e.values())
               for s, e in errors.items() if s in END_TO_END), errors
    # the known misses are predicted but still off (tokens ~2x for the fp32 cache)
    assert all(any(abs(d) > 5 for d in errors[s].values()) for s in KNOWN_MISSES), errors


def test_unknown_format_exits_2(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("INFO starting\nlistening on :8080\n")
    code, out, err = cli(log, "--model-dir", CONFIGS / "Qwen--Qwen3-8B")
    assert code == 2 and not out
    assert "not a vLLM or SGLang start-up log" in err and "Available KV cache memory" in err
    assert "Traceback" not in err


def test_vllm_log_without_capacity_lines_exits_2(tmp_path):
    log = tmp_path / "partial.log"
    log.write_text("(EngineCore pid=1) INFO 01-01 00:00:00 [core.py:1] vllm starting\n")
    code, _, err = cli(log, "--model-dir", CONFIGS / "Qwen--Qwen3-8B")
    assert code == 2 and "no KV-cache sizing line" in err


def test_missing_model_config_exits_2():
    # The RTX 5090 log names a local path, so there is no Hub id to look up.
    code, _, err = cli(LOGS / "vllm-0.24.0-qwen3.6-35b-a3b-nvfp4-rtx5090.log")
    assert code == 2 and "--model-dir" in err and "config is missing" in err


def test_missing_file_exits_2(tmp_path):
    code, _, err = cli(tmp_path / "nope.log", "--model-dir", CONFIGS / "Qwen--Qwen3-8B")
    assert code == 2 and "no such log file" in err
