"""DeepSeek-V4 as vLLM 0.33 allocates it (issue 11 rule 3), against vLLM's own record.

The expected numbers are worked by hand from the pinned config
(tests/architectures/deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash/config.json:
num_hidden_layers 43, head_dim 512, qk_rope_head_dim 64, index_head_dim 128,
sliding_window 128, compress_ratios [0, 0, then 4 / 128 alternating from layer 2, layer 42 = 4,
one MTP entry 0] -> 21 C4 layers, 20 C128 layers) and vLLM 0.33's rules, and checked against
the record vLLM itself wrote (tests/engine_probe/vllm-0.33.0-kv.jsonl, recorded by
tests/engine_probe/record_vllm_kv.py).

The rule (vLLM file:line in specs/architectures/deepseek_v4.yaml, layouts vllm-fp8-mla):
  * every row is fp8_ds_mla, 448 fp8 NoPE + 64 x 2 B RoPE + 8 B scales = 584 B, the indexer
    key 128 + 4 = 132 B; each block's page is rounded up to 576 B;
  * each cache fixes its own block: sliding window 64 tokens, compressed MLA and indexer 256
    tokens (64 C4 entries, 2 C128 entries), compressor rings 4 (C4) / 8 (C128) tokens;
  * the compressor states are sliding-window rings, not per-sequence recurrent state: C4
    window 2 x 4 = 8 of state_dim 2 x 2 x 512 fp32 (main) and 2 x 2 x 128 fp32 (indexer),
    C128 window 128 of 2 x 1 x 512 fp32, admitted like any sliding window (window - 1 +
    2 x max_num_batched_tokens in flight, capped at max_model_len, + 1 block);
  * the packed grouping (kv_cache_planning.py:914-1041) and one block = the widest group.
"""

from __future__ import annotations

import engine_record_cases as cases
import pytest

FLASH = "deepseek-ai--DeepSeek-V4-Flash"
GIB40 = 40 << 30

# Pages (bytes per block per layer), rounded up to 576 B:
SWA = -(-64 * 584 // 576) * 576          # 37,376 -> 37,440
C4 = -(-(256 // 4) * 584 // 576) * 576   # 64 entries: 37,376 -> 37,440
C128 = -(-(256 // 128) * 584 // 576) * 576    # 2 entries: 1,168 -> 1,728
INDEX = -(-(256 // 4) * 132 // 576) * 576     # 8,448 -> 8,640
RING_C4 = -(-4 * (2 * 2 * 512 * 4) // 576) * 576     # 32,768 -> 32,832
RING_C4_INDEX = -(-4 * (2 * 2 * 128 * 4) // 576) * 576   # 8,192 -> 8,640
RING_C128 = -(-8 * (2 * 1 * 512 * 4) // 576) * 576     # 32,768 -> 32,832
# Groups: the 43 window layers split 22 + 21 (repeats 22 pad least over 43, 21, 20 from 21);
# the 256-token MLA bucket is one group; the 4-token rings one; the 8-token rings one.
WIDEST = 21 * INDEX + 21 * C4 + 20 * C128     # 1,002,240 B: bytes per block


def _blocks_per_request(length: int) -> int:
    in_flight = 2 * 8192      # async scheduling: 2 batches of max_num_batched_tokens 8192
    swa = -(-min(128 - 1 + in_flight, length) // 64) + 1
    ring4 = -(-min(8 - 1 + in_flight, length) // 4) + 1
    ring8 = -(-min(128 - 1 + in_flight, length) // 8) + 1
    return 2 * swa + -(-length // 256) + ring4 + ring8


def _point(name: str, tp: int, length: int, kv: str = "auto") -> cases.Point:
    return next(p for p in cases.points() if p.dir.endswith(name) and p.tp == tp
                and p.kv == kv and p.length == length and p.avail == GIB40)


def test_pages_by_hand():
    assert (SWA, C4, C128, INDEX) == (37440, 37440, 1728, 8640)
    assert (RING_C4, RING_C4_INDEX, RING_C128, WIDEST) == (32832, 8640, 32832, 1002240)


@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("length", [4096, 8192, 32768])
def test_flash_matches_the_record_by_hand(tp, length):
    """V4-Flash, auto KV (vLLM forces fp8_ds_mla), 40 GiB per GPU: every cache is one shared
    head, replicated, so TP 8 equals TP 1. At 8,192: 2 x 129 + 32 + 2,049 + 1,025 = 3,364
    blocks per request; 42,949,672,960 // 1,002,240 = 42,853 blocks -> 12.7387x, 104,355
    tokens (kvfit planned 458,752 before this rule: 4.4x too many)."""
    p = _point(FLASH, tp, length)
    blocks = GIB40 // WIDEST
    need = _blocks_per_request(length)
    assert p.row["cache_dtype"] == "fp8_ds_mla"
    assert (p.vllm["num_blocks"], p.vllm["block_size"]) == (blocks, 4) == (42853, 4)
    assert [g["blocks_per_request"] for g in p.vllm["groups"]] == [
        -(-min(127 + 16384, length) // 64) + 1] * 2 + [-(-length // 256),
                                                       -(-min(7 + 16384, length) // 4) + 1,
                                                       -(-min(127 + 16384, length) // 8) + 1]
    assert p.vllm["kv_cache_tokens"] == int(blocks / need * length)
    result = cases.compare(p)
    assert not cases.misses(result), result
    assert result["num_blocks"][0] == blocks and result["tokens"][0] == int(blocks / need * length)


def test_flash_8k_figures():
    assert _blocks_per_request(8192) == 3364
    assert int(42853 / 3364 * 8192) == 104355
    assert _point(FLASH, 1, 8192).vllm["kv_cache_tokens"] == 104355


def test_rings_are_sliding_windows_in_the_engine_state():
    """Under --engine vllm the compressor states are the engine's rings: kind sliding, their
    window and block, and per sequence the same bytes as the logical state (8 x 8,192 B)."""
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    p = _point(FLASH, 1, 8192)
    state = engine_state(cases._checkpoint(p.dir), rules_for("vllm", "0.33.0"), "auto", 8192)
    by = {c.name: c for c in state.components}
    ring = by["c4-compressor-state"]
    assert (ring.kind, ring.window, ring.block_tokens, ring.page_alignment) == ("sliding", 8, 4, 576)
    assert ring.bytes_per_sequence == 21 * 8 * (2 * 2 * 512 * 4)
    assert (by["c128-compressor-state"].window, by["c128-compressor-state"].block_tokens) == (128, 8)
    assert by["swa"].block_tokens == 64 and by["c4-kv"].block_tokens == 256
