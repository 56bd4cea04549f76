"""`--engine vllm --kv-cache-memory-bytes N` without weight bytes: the pool is still predicted.

vLLM sizes its KV pool from the stated bytes and does not profile (kvfit.engines.vllm.memory:
"user: --kv-cache-memory-bytes"), so blocks, tokens and concurrency need no weights. The
verdict still does (do the weights fit beside the stated pool?) unless the pool alone misses
the target: then the plan does not fit whatever the weights (exit 1); otherwise exit 5.

The config: nvidia DeepSeek-V4-Flash-NVFP4 (tests/architectures/deepseek_v4/configs), whose
weight bytes kvfit cannot estimate (its quantization_config.ignore list). Its pages are
DeepSeek-V4-Flash's (tests/test_vllm_v4_record.py): one block = the widest packed group,
21 x 8,640 + 21 x 37,440 + 20 x 1,728 = 1,002,240 B.
"""

from __future__ import annotations

import engine_record_cases as cases

from conftest import run_cli, run_json

NAME = "nvidia--DeepSeek-V4-Flash-NVFP4"
DIR = cases.ROOT / "tests/architectures/deepseek_v4/configs" / NAME
GIB40 = 40 << 30
WIDEST = 21 * 8640 + 21 * 37440 + 20 * 1728


def _args(*extra):
    return (DIR, "--engine", "vllm@0.33.0", "--hardware", "h100-80", "--gpus", "1", "--tp", "1",
            "--context", "32768", *extra)


def _per_request() -> int:
    # 2 window groups x (ceil(min(127 + 2 x 8,192, 32,768) / 64) + 1 = 259), ceil(32,768 /
    # 256) = 128 MLA blocks, the 4-token rings ceil((7 + 16,384) / 4) + 1 = 4,099 and the
    # 8-token rings ceil((127 + 16,384) / 8) + 1 = 2,065: 6,810 blocks.
    return 2 * (-(-(127 + 16384) // 64) + 1) + 32768 // 256 + (-(-(7 + 16384) // 4) + 1) + (
        -(-(127 + 16384) // 8) + 1)


def test_engine_section_without_weights():
    code, r = run_json(*_args("--kv-cache-memory-bytes", str(GIB40)))
    assert r["weights"]["bytes"] is None
    lay = r["layouts"][0]
    e = lay["engine"]
    blocks = GIB40 // WIDEST
    assert (blocks, _per_request()) == (42853, 6810)
    assert e["memory"]["available_kv_bytes"]["value"] == GIB40
    assert e["num_gpu_blocks"]["value"] == blocks
    assert e["blocks_per_request"]["value"] == _per_request()
    assert e["kv_cache_tokens"]["value"] == int(blocks / _per_request() * 32768)
    # vLLM's own record for this config, TP 1, auto, 32,768 tokens, 40 GiB:
    point = next(p for p in cases.points() if p.dir.endswith(NAME) and p.tp == 1 and
                 p.kv == "auto" and p.length == 32768 and p.avail == GIB40)
    assert point.vllm["num_blocks"] == blocks
    assert point.vllm["kv_cache_tokens"] == e["kv_cache_tokens"]["value"]
    # 42,853 // 6,810 = 6 sequences: the target (1) is within the pool, the weights unknown.
    assert lay["max_sequences"] == blocks // _per_request() == 6
    assert lay["fits"] is None and r["fits"] is None and code == 5
    assert "not judged: weight bytes unknown" in lay["reason"]


def test_text_headline_states_the_pool_and_why_unjudged():
    code, out, _ = run_cli(*_args("--kv-cache-memory-bytes", str(GIB40)))
    head = out.splitlines()[1]
    assert code == 5
    assert head.startswith("WEIGHTS UNKNOWN (vLLM 0.33.0 prediction): TP=1 x DP=1:")
    assert "42,853 blocks / 6,810 per 32,768-token request" in head
    assert "--weight-gib" in head


def test_a_pool_that_misses_the_target_does_not_fit_whatever_the_weights():
    code, r = run_json(*_args("--kv-cache-memory-bytes", str(GIB40), "--concurrent-users", "7"))
    assert code == 1 and r["fits"] is False        # 6 sequences < 7
    assert r["layouts"][0]["fits"] is False


def test_no_stated_pool_no_engine_section():
    """Without --kv-cache-memory-bytes vLLM profiles: the budget needs the weights."""
    code, r = run_json(*_args())
    assert code == 5 and r["fits"] is None
    assert "engine" not in r["layouts"][0]
