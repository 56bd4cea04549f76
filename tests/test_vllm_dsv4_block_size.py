"""DeepSeek-V4 under vLLM 0.33 with the recipe's --block-size 256: the flag sets only the
compressed MLA and indexer layers' block (rule own_block_user_families).

Recorded from the engine's code: models/deepseek_v4/attention.py:869-870, 915-916 (the
compressed and indexer specs take cache_config.block_size); the SWA cache keeps its 64-token
block (v1/attention/backends/mla/sparse_swa.py:85; attention.py:349-356 passes none) and the
compressor states their 4 / 8 (compressor.py:163-171); the sparse V4 kernel takes only 256-token
blocks (sparse_mla.py:60-61), so 256 is the default answer and 64 has no kernel block.

Pinned config: tests/fixtures/model-configs/deepseek-ai--DeepSeek-V4-Flash (43 layers: 21 C4,
20 C128, window 128), fp8_ds_mla rows, TP 8 on H200 (batched tokens 8,192, two in flight),
30,000 tokens, a stated 40 GB pool. By hand (kvfit/engines/packed.py worked example): widest
group 21 x 8,640 + 21 x 37,440 + 20 x 1,728 = 1,002,240 B per block; per request
2 SWA groups x (ceil((128 - 1 + 16,384) / 64) + 1 = 259) + ceil(30,000 / 256) = 118 compressed
+ ceil((8 - 1 + 16,384) / 4) + 1 = 4,099 C4 states + ceil((128 - 1 + 16,384) / 8) + 1 = 2,065
C128 states = 6,800 blocks, 6.8 GB. Before, kvfit gave every layer 256-token blocks: 1,118
blocks x 41,944,320 B = 46.9 GB per request, 6.9 x what vLLM allocates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json

V4 = str(Path(__file__).parent / "fixtures/model-configs/deepseek-ai--DeepSeek-V4-Flash")
ARGS = (V4, "--hardware", "h200-141", "--gpus", "8", "--tp", "8", "--engine", "vllm@0.33.0",
        "--context", "30000", "--kv-cache-memory-bytes", "40000000000")


def _engine(*extra) -> dict:
    _, r = run_json(*ARGS, *extra)
    return r["layouts"][0]["engine"]


@pytest.mark.parametrize("extra", [(), ("--block-size", "256")])
def test_recipe_block_size_is_the_default_answer(extra):
    e = _engine(*extra)
    assert e["bytes_per_block"]["value"] == 21 * 8_640 + 21 * 37_440 + 20 * 1_728 == 1_002_240
    assert e["blocks_per_request"]["value"] == 2 * 259 + 118 + 4_099 + 2_065 == 6_800
    assert e["num_gpu_blocks"]["value"] == 40_000_000_000 // 1_002_240 == 39_910
    tokens = {g["components"]: g["block_tokens"] for g in e["groups"]["value"]}
    assert tokens["swa"] == 64 and tokens["c4-kv+c128-kv+c4-index"] == 256
    assert e["refusal"] is None


def test_a_block_without_a_kernel_block_is_refused():
    e = _engine("--block-size", "64")
    assert "not a multiple of the 256-token kernel block" in e["refusal"]["reason"]
    assert "sparse_mla.py:60-61" in e["refusal"]["rule"]
