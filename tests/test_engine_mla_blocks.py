"""vLLM 0.33's MLA block size follows the backend it selects for the GPU's compute capability
and the KV width (vllm/platforms/cuda.py:84-153 and each backend's kernel block sizes), so the
blocks per request are right on Hopper, Blackwell and consumer parts.

DeepSeek-V3 (dense MLA) at 32,768 tokens: blocks per request = 32,768 / block size.
"""

from __future__ import annotations

import pytest

from conftest import run_json

V3 = ("deepseek-ai/DeepSeek-V3", "--context", "32k", "--offline", "--engine", "vllm",
      "--gpus", "8")


def _block(*args) -> tuple[int, int]:
    code, r = run_json(*V3, *args)
    e = next(x for x in r["layouts"] if x["tp"] == 8)["engine"]
    return e["block_size"]["value"], e["blocks_per_request"]["value"]


@pytest.mark.parametrize(("hardware", "kv", "block"), [
    ("h100-80", "bf16", 16),      # SM90: FLASH_ATTN_MLA (16-bit only, MultipleOf(16))
    ("h200-141", "fp8", 64),      # SM90 + fp8: FLASHMLA ([64])
    ("b200-180", "bf16", 32),     # SM100: FLASHINFER_MLA ([32, 64]; 16 unsupported -> 32)
    ("b200-180", "fp8", 32),
    ("a100-80", "bf16", 16),      # SM80: only TRITON_MLA accepts the capability
])
def test_dense_mla_block_size_by_capability(hardware, kv, block):
    size, blocks = _block("--hardware", hardware, "--kv-dtype", kv)
    assert size == block and blocks == 32768 // block


def test_sparse_mla_keeps_the_sparse_block():
    # weights are unknown offline for V3.2: a stated size lets the engine section exist
    code, r = run_json("deepseek-ai/DeepSeek-V3.2", "--hardware", "h200-141", "--gpus", "8",
                       "--context", "32k", "--offline", "--engine", "vllm", "--weight-gib", "640")
    e = next(x for x in r["layouts"] if x["tp"] == 8)["engine"]
    assert e["block_size"]["value"] == 64          # FLASHMLA_SPARSE / FA MLA sparse: 64


def test_fp8_ds_mla_spelling_selects_vllm_and_its_656_byte_row():
    code, r = run_json("deepseek-ai/DeepSeek-V3.2", "--hardware", "h200-141", "--gpus", "8",
                       "--context", "32k", "--offline", "--kv-cache-dtype", "fp8_ds_mla",
                       "--weight-gib", "640")
    assert r["capacity_model"]["name"] == "vllm" and "fp8_ds_mla" in r["capacity_model"][
        "selected_by"]
    latent = next(c for c in r["state"]["components"] if c["kind"] == "latent")
    # fp8_ds_mla: 512 fp8 latent + 4 x 4 B scales + 64 x 2 B rope = 656 B per token per layer
    assert latent["bytes_per_entry"] == 656
