"""SGLang's recurrent-state pool without the radix cache and under speculative decoding.

Recorded from SGLang 0.5.23's code (python/sglang/srt/):
- mem_cache/kv_cache_configurator.py:3325-3348: with --disable-radix-cache and a running-request
  count, the pool holds one slot per running request (max(1, requests // attn_dp)), not
  r/(1+r) of the rest; the KV gets the rest less (slots + 1) x the slot bytes (:3403-3409);
- arg_groups/speculative_hook.py:1086-1094: EAGLE-family speculative decoding without
  --max-running-requests sets it to 48;
- mem_cache/kv_cache_configurator.py:3346-3380: under speculative decoding (D draft tokens) the
  ratio mode solves K = (budget - slot x (1 + D)) // (slot x (1 + D / ratio)) slots and reserves
  slot x (min(requests, K // ratio) + 1) x D intermediate states from the rest; ratio: 5 slots
  per running request with the radix cache (3 + 2 extra-buffer slots, :3062-3088), 1 without.
  kvfit's SGLang command runs --speculative-num-draft-tokens N + 1 (D = 2 for N = 1).

Pinned config: tests/architectures/qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking at TP 4.
By hand, per rank: a recurrent slot is 36 GDN layers x (conv (32 x 128 + 2 x 16 x 128) / 4 x 3 x
2 B = 12,288 + SSM 32 / 4 x 128 x 128 x 4 B = 524,288) = 19,316,736 B; a full-attention token
12 layers x 1 KV head (2 heads, TP 4, replicated) x (256 + 256) x 2 B = 12,288 B; page 1. The
rest (free x mem_fraction_static - weights) is the engine block's own rest_bytes, checked
elsewhere (tests/test_sglang_kv_record.py).
"""

from __future__ import annotations

import math
from pathlib import Path

from conftest import run_json

Q = str(Path(__file__).parent / "architectures/qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking")
BASE = (Q, "--hardware", "h100-80", "--gpus", "4", "--tp", "4", "--context", "4k",
        "--engine", "sglang@0.5.23", "--weight-gib", "149")
SLOT, CELL = 19_316_736, 12_288


def _engine(*extra) -> dict:
    _, r = run_json(*BASE, *extra)
    e = r["layouts"][0]["engine"]
    assert e["cells"]["recurrent_bytes_per_slot"]["value"] == SLOT
    assert e["cells"]["full_bytes_per_token"]["value"] == CELL
    return e


def _v(e, key):
    return e[key]["value"]


def test_without_radix_cache_one_slot_per_running_request():
    e = _engine("--disable-radix-cache", "--max-running-requests", "64")
    rest = _v(e, "rest_bytes")
    assert _v(e, "mamba_cache_size") == 64
    assert _v(e, "max_total_num_tokens") == int((rest - 65 * SLOT) / CELL)
    assert _v(e, "max_running_requests") == 64


def test_speculative_decoding_caps_requests_and_reserves_intermediate_states():
    plain = _engine()
    e = _engine("--num-speculative-tokens", "1")       # EAGLE, D = 2 draft tokens
    rest = _v(e, "rest_bytes")
    assert rest == _v(plain, "rest_bytes")              # the memory fraction is sized before
    budget = rest * 0.9 / 1.9                           # r = 0.9: r / (1 + r) of the rest
    k = math.floor((budget - SLOT * 3) // (SLOT * (1 + 2 / 5)))
    inter = SLOT * (min(48, k // 5) + 1) * 2
    assert _v(e, "mamba_cache_size") == k
    assert _v(e, "max_total_num_tokens") == int((rest - inter - (k + 1) * SLOT) / CELL)
    assert _v(e, "max_running_requests") == min(48, k // 5) == 48
    assert "speculative_hook.py:1086-1094" in e["max_running_requests"]["basis"]


def test_speculative_without_radix_cache_uses_the_48_requests():
    e = _engine("--disable-radix-cache", "--num-speculative-tokens", "1")
    rest = _v(e, "rest_bytes")
    assert _v(e, "mamba_cache_size") == 48
    # 49 slots plus 49 x 2 intermediate states
    assert _v(e, "max_total_num_tokens") == int((rest - 49 * SLOT * 2 - 49 * SLOT) / CELL)
