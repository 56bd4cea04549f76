"""An MTP draft's attention layer joins vLLM's KV pool and pads the hybrid groups.

Public log: tests/fixtures/engine_logs/vllm-0.24.0-qwen3.6-27b-fp8-mtp-2x3090-tp2 (Qwen3.6-27B,
MTP 3 tokens, fp8 KV, TP 2, 5.33 GiB per rank; stand-in config nvidia--Qwen3.6-27B-NVFP4, the
same geometry), and https://github.com/vllm-project/vllm/issues/49011 ('Add 3 padding layers'
for Qwen3.6-27B with MTP). vLLM groups layers by the smallest bucket, or the largest when it is
below 1.5 x the smallest, and pads short groups (v1/core/kv_cache_planning.py:521-541).

By hand, per rank at TP 2, fp8 (1 B): attention page 2 KV heads x (256 + 256) x 1 B = 1,024 B per
token per layer; GDN state conv 5,120 x 3 x 2 B + SSM 24 x 128 x 128 x 4 B = 1,603,584 B; block
16 x ceil(1,603,584 / (16 x 1,024)) = 1,568 tokens. 16 full-attention layers + 1 MTP draft layer
= 17 < 1.5 x 48, so the group size is 17: the 48 GDN layers fill 3 groups of 17 with 3 padding
layers; block 17 x 1,568 x 1,024 = 27,295,744 B; int(5.33 GiB) / that = 209 blocks; per request
ceil(262,144 / 1,568) = 168 + 3 x (2 + 3 speculative) = 183; int(209 / 183 x 262,144) = 299,388
tokens (the log prints 300,220: -0.28 %, the 5.33 GiB being rounded). Without the draft layer
(kvfit before: --num-speculative-tokens alone) groups of 16, no padding, 318,010 tokens (+5.9 %).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json

Q36 = str(Path(__file__).parent / "fixtures/model-configs/nvidia--Qwen3.6-27B-NVFP4")
LOG = ("--hardware", "custom:24", "--gpus", "2", "--tp", "2", "--engine", "vllm@0.24.0",
       "--kv-cache-dtype", "fp8", "--context", "262144", "--max-num-seqs", "2",
       "--max-num-batched-tokens", "8192", "--kv-cache-memory-bytes", str(int(5.33 * 2**30)))


@pytest.mark.parametrize("speculative", [("--num-speculative-tokens", "3"),
                                         ("--mtp", "--num-speculative-tokens", "3")])
def test_mtp_draft_pads_the_groups(speculative):
    _, r = run_json(Q36, *LOG, *speculative, "--print-command", "vllm")
    e = r["layouts"][0]["engine"]
    groups = e["groups"]["value"]
    assert groups[0]["components"] == "kv+kv-mtp" and groups[0]["layers"] == 17
    assert [g["layers"] for g in groups[1:]] == [17, 17, 14]
    assert e["padding_layers"]["value"] == 3
    assert e["bytes_per_block"]["value"] == 17 * 1568 * 1024 == 27_295_744
    assert (e["num_gpu_blocks"]["value"], e["blocks_per_request"]["value"]) == (209, 183)
    assert e["kv_cache_tokens"]["value"] == int(209 / 183 * 262_144) == 299_388
    # the launch command runs the draft the prediction counts
    assert '"method": "mtp", "num_speculative_tokens": 3' in r["engine_command"]["launch"]
