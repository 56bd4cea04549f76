"""Gemma 4's KV block size per GPU generation under vLLM 0.33, and its refused nvfp4 cache
(issue 24: "vLLM keeps 16-token blocks for fp8/NVFP4 KV where kvfit picks 64").

Where the sizes come from (vLLM 0.33.0, paths under the wheel's vllm/ package). All three
pinned Gemma 4 configs are multimodal prefix-LM models (text_config.use_bidirectional_attention
'vision': transformers_utils/model_arch_config_convertor.py:781-788), head_dim 256 on sliding
layers and global_head_dim 512 on full ones:
  * SM90 (H100): TRITON_FLASH_ATTN composite; FlashAttention 4's FP8-KV kernel takes 64-token
    pages for head 512 (v1/attention/backends/flash_attn.py:300-326): 64 with fp8, 16 with
    bf16 (rule attention_block_by_head_size row 1; the H100 record, test_vllm_kv_record.py);
  * SM100 (B200): TRITON_FLASHINFER first (platforms/cuda.py:160-168), a composite that takes
    only 64-token kernel blocks (v1/attention/backends/triton_flashinfer.py:12-22,
    composite.py:378-389), so 64 for bf16 and fp8 alike (row 2, new);
  * SM12x (RTX PRO 6000, RTX 50xx, GB10): FlashAttention 4 runs only on 9.x / 10.x / 11.x
    (vllm_flash_attn/flash_attn_interface.py:72-86), so Gemma4Config forces TRITON_ATTN for
    every layer (model_executor/models/config.py:334-367), MultipleOf(16)
    (triton_attn.py:339-340): 16 for fp8 too. This is the 16 the issue saw: an NVFP4 Gemma 4
    declares an fp8_e4m3 cache, and on these GPUs it keeps 16-token blocks;
  * --kv-cache-dtype nvfp4: no backend takes it with the prefix attention, on any of them
    (rule mm_prefix_kv_refused).

vLLM's figures are its own: tests/engine_probe/vllm-0.33.0-kv-b200.jsonl and
vllm-0.33.0-kv-rtx-pro-6000.jsonl, recorded by tests/engine_probe/record_vllm_kv.py --gpu ...
--kv auto,fp8,nvfp4 (vllm_gpu_emulation.py GPUS: capability 10.0 / 12.0).
"""

from __future__ import annotations

import json

import engine_record_cases as cases
import pytest

HARDWARE = {gpu: preset for gpu, (preset, _, _) in cases.GPU_RECORDS.items()}
ROWS = [(gpu, r) for gpu in HARDWARE for r in cases.record_rows(cases.gpu_record(gpu))]


def _kvfit(gpu: str, directory: str, tp: int, kv: str, length: int, avail: int) -> dict:
    """kvfit's engine section, planned as the record tests plan a point (on `gpu`'s preset)."""
    code, eng, err = cases.kvfit_plan(cases.Point(directory, tp, kv, length, avail, {}, {},
                                                  HARDWARE[gpu]))
    assert code in (0, 1, 5), err
    return eng


def test_records_cover_both_gpus_and_every_dtype():
    for gpu in HARDWARE:
        head = json.loads(cases.gpu_record(gpu).read_text().splitlines()[0])
        assert head["gpu"] == gpu and head["kv_cache_dtypes"] == ["auto", "fp8", "nvfp4"]
    assert len(ROWS) == 2 * 3 * 3 * 3          # GPUs x configs x TP sizes x KV dtypes


@pytest.mark.parametrize("gpu,row", ROWS, ids=[f"{g}-{r['dir'].split('/')[-1]}-tp{r['tp']}-"
                                                f"{r['kv_cache_dtype']}" for g, r in ROWS])
def test_kvfit_equals_the_blackwell_record(gpu, row):
    if row["kv_cache_dtype"] == "nvfp4":       # vLLM refuses: no backend (both GPUs)
        assert "No valid attention backend" in row["error"] or \
            "TRITON_ATTN is not valid" in row["error"]
        eng = _kvfit(gpu, row["dir"], row["tp"], "nvfp4", 4096, 40 << 30)
        assert eng["refusal"] and "No valid attention backend" in eng["refusal"]["reason"]
        return
    assert row["block_size"] == {"b200": 64, "rtx-pro-6000": 16}[gpu]
    for p in row["plans"]:
        eng = _kvfit(gpu, row["dir"], row["tp"], row["kv_cache_dtype"], p["max_model_len"],
                     p["available_bytes"])
        assert eng["refusal"] is None
        assert (eng["block_size"]["value"], eng["num_gpu_blocks"]["value"]) == \
            (p["block_size"], p["num_blocks"])
        assert abs(eng["kv_cache_tokens"]["value"] - p["kv_cache_tokens"]) <= \
            cases.TOLERANCE * p["kv_cache_tokens"]


def _plan(gpu: str, kv: str) -> dict:
    row = next(r for g, r in ROWS if g == gpu and r["dir"].endswith("google--gemma-4-26B-A4B")
               and r["tp"] == 1 and r["kv_cache_dtype"] == kv)
    return next(p for p in row["plans"] if p["max_model_len"] == 4096
                and p["available_bytes"] == 40 << 30)


def test_b200_bf16_by_hand():
    """google/gemma-4-26B-A4B, B200, TP 1, auto (bf16), 40 GiB, max_model_len 4,096.
    text_config: 30 layers, 25 sliding (8 KV heads x head_dim 256, window 1,024) and 5 full
    (num_global_key_value_heads 2 x global_head_dim 512). Block 64 (TRITON_FLASHINFER).
    Sliding page 64 x 8 x (256 + 256) x 2 B = 524,288; full 64 x 2 x 1,024 x 2 = 262,144,
    doubled to 128 tokens to match (the hybrid page rule): 524,288. Six groups of 5 layers:
    a block is 5 x 524,288 = 2,621,440 B -> 42,949,672,960 // 2,621,440 = 16,384 blocks.
    Per request: a sliding group cdiv(min(1,023 + 2 x 16,384, 4,096), 64) + 1 = 65 (the
    B200's 16,384 batched tokens, two in flight), x 5 = 325; full 4,096 / 128 = 32: 357.
    16,384 / 357 = 45.8936x; int(45.8936 x 4,096) = 187,980 tokens."""
    p = _plan("b200", "auto")
    assert (p["block_size"], p["num_blocks"], p["kv_cache_tokens"]) == (64, 16_384, 187_980)
    assert p["max_concurrency"] == 16_384 / 357
    eng = _kvfit("b200", "tests/architectures/gemma4/configs/google--gemma-4-26B-A4B", 1, "auto",
                 4096, 40 << 30)
    assert (eng["block_size"]["value"], eng["num_gpu_blocks"]["value"],
            eng["kv_cache_tokens"]["value"]) == (64, 16_384, 187_980)


def test_rtx_pro_6000_fp8_keeps_16_by_hand():
    """The same model on an RTX PRO 6000 (SM120), fp8, TP 1, 40 GiB, 4,096: TRITON_ATTN, block
    16. Sliding page 16 x 8 x 512 x 1 B = 65,536; full 16 x 2 x 1,024 x 1 = 32,768, doubled to
    32 tokens: 65,536. A block 5 x 65,536 = 327,680 B -> 131,072 blocks. Per request: sliding
    cdiv(min(1,023 + 2 x 8,192, 4,096), 16) + 1 = 257, x 5 = 1,285; full 4,096 / 32 = 128:
    1,413. 131,072 / 1,413 = 92.7615x; 379,951 tokens. On an H100 the same request gets 64."""
    p = _plan("rtx-pro-6000", "fp8")
    assert (p["block_size"], p["num_blocks"], p["kv_cache_tokens"]) == (16, 131_072, 379_951)
    assert p["max_concurrency"] == 131_072 / 1_413
    eng = _kvfit("rtx-pro-6000", "tests/architectures/gemma4/configs/google--gemma-4-26B-A4B", 1,
                 "fp8", 4096, 40 << 30)
    assert (eng["block_size"]["value"], eng["num_gpu_blocks"]["value"],
            eng["kv_cache_tokens"]["value"]) == (16, 131_072, 379_951)
    h100 = next(p for p in cases.points() if p.dir.endswith("google--gemma-4-26B-A4B")
                and p.tp == 1 and p.kv == "fp8")
    assert h100.vllm["block_size"] == 64
