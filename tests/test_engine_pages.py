"""kvfit's per-rank page bytes equal the engine's on every fixture log where they can be
derived. Each expected number is worked out by hand below from the pinned config and the
rule in engines.md, then checked against what the log printed.

Stand-in configs (see each provenance YAML): Llama-3.1-8B-Instruct and Llama-3.3-70B-Instruct-
fp8-dynamic (TP2 and TP4) use the pinned base / bf16 configs (same layers, KV heads and head size; the FP8
re-quant changes weights, not the cache); gemma-2-9b-it uses the base gemma-2-9b config (same
geometry; its float32 torch_dtype is served in 16 bits, so the test asks for bfloat16 like the
served -it checkpoint); the RTX 5090 log's local NVFP4 Qwen3.6 copy uses nvidia's
Qwen3.6-35B-A3B-NVFP4 config (same geometry; the log passes --kv-cache-dtype fp8); the
Llama-3.1-8B-Instruct qfp8 / dtf32 runs use the base config too; the Qwen2.5-7B-Instruct
W8A8 / FP8-dynamic re-quants use the bf16 Qwen2.5-7B-Instruct config; the W8A8
Mistral-Small-3.1-24B-Instruct-2503 (Mistral3, vision + text) uses the text-only
Devstral-Small-2507 config (same decoder: 40 layers, 8 KV heads, head size 128).
"""

from __future__ import annotations

import pytest
from engine_log_cases import CONFIGS, load_cases

from kvfit.checkpoint.local import load_local
from kvfit.engines.logparse import parse
from kvfit.engines.pages import group_pages, layer_pages
from kvfit.engines.spec import rules_for
from kvfit.engines.state import engine_state
from kvfit.engines.vllm import block_size, request_blocks
from kvfit.errors import UnsupportedArchitecture

GIB = 1024**3
CASES = {c.slug: c for c in load_cases()}


def _state(config: str, engine: str, version: str, kv: str | None, ctx: int,
           dtype: str | None = None):
    rules = rules_for(engine, version)
    try:
        return rules, engine_state(load_local(CONFIGS / config), rules, kv, ctx,
                                   model_dtype=dtype)
    except UnsupportedArchitecture as exc:  # a family spec still being written
        pytest.skip(f"{config}: {exc.message}")


def _vllm(slug: str, kv: str | None = None):
    """(grouping, block size, per-request groups, printed) for a vLLM fixture log."""
    case = CASES[slug]
    printed = parse(case.text).printed
    ctx = printed.get("concurrency_len") or printed.get("max_model_len") or 0
    flags = case.thread_flags | ({"kv_cache_dtype": kv} if kv else {})
    dtype = parse(case.text).flags.get("dtype") or flags.get("dtype")
    rules, st = _state(case.model_dir.name, "vllm", case.version, flags.get("kv_cache_dtype"),
                       ctx or 1, dtype)
    from kvfit.engines.common import Inputs

    pages = layer_pages(st.components, case.tp)
    bs, hybrid = block_size(rules, flags, Inputs(st.components, case.tp, ctx, None, 0), pages)
    prefix = flags.get("enable_prefix_caching", rules["prefix_caching_default"])
    align = bool(prefix) and hybrid is not None
    g = group_pages(pages, bs.value, rules["group_size_ratio"], bs.value if align else ctx)
    per = request_blocks(rules, g.groups, ctx, 8192, 1, 0, align) if ctx else []
    return g, bs.value, per, printed


def _blocks_fit(printed: dict, per_block: int) -> range:
    """Blocks the printed available memory allows, given its 0.01 GiB rounding."""
    avail = printed["available_gib"]
    return range(int((avail - 0.005) * GIB // per_block), int((avail + 0.005) * GIB // per_block) + 1)


def test_llama_3_1_8b_tp1():
    # 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B/token; x 16 tokens = 2,097,152 B.
    g, bs, _, p = _vllm("vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1")
    assert (bs, g.bytes_per_block, g.kind) == (16, 2_097_152, "uniform")
    assert p["num_gpu_blocks"] in _blocks_fit(p, g.bytes_per_block)  # 29,751


def test_llama_3_3_70b_fp8_tp2():
    # 80 layers x (8 / 2) KV heads x 256 x 2 B = 163,840 B/token -> 2,621,440 B per block;
    # printed 244,304 tokens = 15,269 blocks.
    g, _, _, p = _vllm("vllm-0.19.0-llama-3.3-70b-fp8-dynamic-h100-tp2")
    assert g.bytes_per_block == 2_621_440
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)


def test_llama_3_3_70b_fp8_tp4():
    # Same checkpoint at TP=4: 80 layers x (8 / 4) KV heads x 256 x 2 B = 81,920 B/token ->
    # 1,310,720 B per block; printed 708,992 tokens = 44,312 blocks; 44,312 / 512 = 86.55x.
    g, _, per, p = _vllm("vllm-0.19.0-llama-3.3-70b-fp8-dynamic-h100-tp4")
    assert (g.bytes_per_block, g.kind) == (1_310_720, "uniform")
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)
    assert round(p["kv_tokens"] // 16 / sum(b.blocks for b in per), 2) == p["concurrency"]


def test_llama_4_scout_chunked_tp4():
    # (8 / 4) KV heads x (128 + 128) x 2 B = 1,024 B/token/layer; 36 chunked-local + 12 global
    # layers -> 4 groups of 12; block = 12 x 16 x 1,024 = 196,608 B. Old token formula:
    # 365,968 = num_blocks // 4 x 16. At 8,192 tokens (= the 8,192 chunk) each group pins
    # 512 blocks -> 2,048 per request.
    g, _, per, p = _vllm("vllm-0.19.0-llama-4-scout-17b-16e-instruct-h100-tp4")
    assert (g.bytes_per_block, len(g.groups), g.padding_layers) == (196_608, 4, 0)
    assert sorted(x.family for x in g.groups) == ["chunked", "chunked", "chunked", "full"]
    assert any(n // 4 * 16 == p["kv_tokens"] for n in _blocks_fit(p, g.bytes_per_block))
    assert sum(b.blocks for b in per) == 2048


def test_llama_3_1_8b_runtime_fp8_tp1():
    # '--quantization fp8' re-quantizes the weights only; the cache stays bf16:
    # 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B/token -> 2,097,152 B per block;
    # printed 529,248 tokens = 33,078 blocks; 33,078 / 512 = 64.61x.
    g, _, per, p = _vllm("vllm-0.19.0-llama-3.1-8b-instruct-qfp8-h100-tp1")
    assert (g.bytes_per_block, g.kind) == (2_097_152, "uniform")
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)
    assert round(p["kv_tokens"] // 16 / sum(b.blocks for b in per), 2) == p["concurrency"]


def test_llama_3_1_8b_dtype_float32_keeps_an_fp32_cache():
    # '--dtype float32' with kv_cache_dtype=auto stores the cache in fp32:
    # 32 x 8 x (128 + 128) x 4 B = 262,144 B/token -> 4,194,304 B per block; 42.8 GiB ->
    # printed 175,296 tokens = 10,956 blocks.
    g, _, _, p = _vllm("vllm-0.19.0-llama-3.1-8b-instruct-dtf32-h100-tp1")
    assert g.bytes_per_block == 4_194_304
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)


@pytest.mark.parametrize("slug", ["vllm-0.19.0-qwen2.5-7b-instruct-w8a8-h100-tp1",
                                  "vllm-0.19.0-qwen2.5-7b-instruct-fp8-dynamic-h100-tp1"])
def test_qwen2_5_7b_requant_tp1(slug):
    # INT8 / FP8 weight re-quants, bf16 cache: 28 layers x 4 KV heads x (128 + 128) x 2 B =
    # 57,344 B/token -> 917,504 B per block; 64.64 GiB allows 75,641 .. 75,653 blocks;
    # printed 1,210,272 (w8a8) = 75,642 and 1,210,304 (fp8) = 75,644 blocks; / 512 = 147.74x.
    g, _, per, p = _vllm(slug)
    assert (g.bytes_per_block, g.kind) == (917_504, "uniform")
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)
    assert round(p["kv_tokens"] // 16 / sum(b.blocks for b in per), 2) == p["concurrency"]


@pytest.mark.parametrize(("slug", "per_block"),
                         [("vllm-0.19.0-mistral-small-3.1-24b-w8a8-h100-tp1", 2_621_440),
                          ("vllm-0.19.0-mistral-small-3.1-24b-w8a8-h100-tp2", 1_310_720)])
def test_mistral_small_3_1_w8a8(slug, per_block):
    # Text decoder only (the vision encoder has no cache): 40 layers x 8 KV heads x
    # (128 + 128) x 2 B = 163,840 B/token -> 2,621,440 B per block at TP1 (48.73 GiB ->
    # 19,959 blocks = printed 319,344 tokens, 38.98x); (8 / 2) KV heads at TP2 -> 81,920 B/token,
    # 1,310,720 B per block (59.02 GiB -> 48,349 blocks = printed 773,584 tokens, 94.43x).
    g, _, per, p = _vllm(slug)
    assert (g.bytes_per_block, g.kind) == (per_block, "uniform")
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)
    assert round(p["kv_tokens"] // 16 / sum(b.blocks for b in per), 2) == p["concurrency"]


def test_gemma_2_2b_two_groups():
    # 4 KV heads x (256 + 256) x 2 B = 4,096 B/token/layer; 13 sliding + 13 full -> 2 groups
    # of 13; block = 13 x 16 x 4,096 = 851,968 B; 66.47 GiB allows 83,767 .. 83,778 blocks;
    # old token formula n // 2 x 16 = printed 670,160 for n = 83,770 or 83,771, and
    # n / (512 full + 513 sliding) = 81.73x.
    g, _, per, p = _vllm("vllm-0.19.0-gemma-2-2b-it-h100-tp1")
    assert (g.bytes_per_block, len(g.groups), g.padding_layers) == (851_968, 2, 0)
    assert sum(b.blocks for b in per) == 512 + 513
    assert any(n // 2 * 16 == p["kv_tokens"] and round(n / 1025, 2) == p["concurrency"]
               for n in _blocks_fit(p, g.bytes_per_block))


def test_gemma_3_27b_sliding_groups_and_padding():
    # 16 KV heads x (128 + 128) x 2 B = 8,192 B/token/layer. 52 sliding + 10 full: groups of
    # 10, sliding split in 6 (8 phantom layers) + 1 full; block = 10 x 16 x 8,192 = 1,310,720.
    g, _, per, p = _vllm("vllm-0.19.0-gemma-3-27b-it-h100-tp1")
    assert (g.bytes_per_block, g.padding_layers, len(g.groups)) == (1_310_720, 8, 7)
    assert p["padding_layers"] == 8 and p["num_gpu_blocks"] in _blocks_fit(p, g.bytes_per_block)
    # per request at 8,192: full 512 + 6 x (ceil(min(1023 + 8192, 8192) / 16) + 1 = 513)
    assert sum(b.blocks for b in per) == 512 + 6 * 513


def test_gemma_2_9b_two_groups():
    # 8 KV heads x (256 + 256) x 2 B = 8,192 B/token/layer; 21 sliding + 21 full -> 2 groups
    # of 21; block = 21 x 16 x 8,192 = 2,752,512 B; 54.12 GiB -> 21,111 blocks;
    # printed tokens 21,111 // 2 x 16 = 168,880.
    g, _, _, p = _vllm("vllm-0.19.0-gemma-2-9b-it-h100-tp1", kv="bfloat16")
    assert (g.bytes_per_block, len(g.groups), g.padding_layers) == (2_752_512, 2, 0)
    assert any(n // 2 * 16 == p["kv_tokens"] for n in _blocks_fit(p, g.bytes_per_block))


def test_gpt_oss_20b_tp2():
    # (8 / 2) KV heads x (64 + 64) x 2 B = 1,024 B/token/layer; 12 sliding + 12 full ->
    # block = 12 x 16 x 1,024 = 196,608 B; printed num_gpu_blocks 323,972.
    g, _, per, p = _vllm("vllm-0.19.0-gpt-oss-20b-h100-tp2")
    assert (g.bytes_per_block, len(g.groups)) == (196_608, 2)
    assert p["num_gpu_blocks"] in _blocks_fit(p, g.bytes_per_block)
    # concurrency 323,972 / (512 full + 513 sliding) = 316.07
    assert round(p["num_gpu_blocks"] / sum(b.blocks for b in per), 2) == p["concurrency"]


def test_qwen3_8b_rtxa5000():
    # 36 layers x 8 KV heads x 256 x 2 B = 147,456 B/token -> 2,359,296 B per block;
    # printed 46,368 tokens = 2,898 blocks.
    g, _, _, p = _vllm("vllm-0.21.0-qwen3-8b-rtxa5000")
    assert g.bytes_per_block == 2_359_296
    assert p["kv_tokens"] // 16 in _blocks_fit(p, g.bytes_per_block)


def test_qwen3_6_hybrid_nvfp4_rtx5090():
    # fp8 attention: 2 KV heads x (256 + 256) x 1 B = 1,024 B/token/layer. GDN state: conv
    # 8,192 x 3 x 2 B = 49,152 + SSM 32 x 128 x 128 x 4 B (config mamba_ssm_dtype float32) =
    # 2,097,152 -> 2,146,304 B. Block = 16 x ceil(2,146,304 / (16 x 1,024)) = 2,096 tokens;
    # 4 groups of 10; block = 10 x 2,096 x 1,024 = 21,463,040 B; 5.98 GiB -> 299 blocks;
    # a request pins ceil(131,072 / 2,096) = 63 + 3 groups x 2 (v0.24) = 69 blocks.
    g, bs, per, p = _vllm("vllm-0.24.0-qwen3.6-35b-a3b-nvfp4-rtx5090")
    assert (bs, g.bytes_per_block, len(g.groups)) == (2096, 21_463_040, 4)
    assert 299 in _blocks_fit(p, g.bytes_per_block)
    assert sum(b.blocks for b in per) == 69
    assert int(299 / 69 * 131_072) == p["kv_tokens"]


@pytest.mark.parametrize("slug", ["vllm-vunknown-kimi-k2-thinking-h200-tp8",
                                  "vllm-vunknown-kimi-k2-thinking-h200-tp8-dcp8"])
def test_kimi_k2_mla(slug):
    # MLA latent on every rank: 61 layers x (512 + 64) x 2 B = 70,272 B/token; FlashMLA
    # block 64 -> 4,497,408 B; 46.80 GiB -> 11,173 blocks = 715,072 tokens (x 8 with DCP 8).
    g, bs, _, p = _vllm(slug)
    assert (bs, g.bytes_per_block) == (64, 4_497_408)
    dcp = p.get("dcp", 1)
    assert any(n * 64 * dcp == p["kv_tokens"] or (n + 1) * 64 * dcp == p["kv_tokens"]
               for n in _blocks_fit(p, g.bytes_per_block))


def test_qwen3_235b_vllm_tp4():
    # 94 layers x (4 / 4) KV heads x 256 x 2 B = 48,128 B/token -> 770,048 B per block.
    # The printed 8.11 GiB (TP0) allows 11,308 blocks but 11,180 were used (-1.1 %): vLLM
    # takes the smallest rank's blocks; only TP0's line was quoted.
    g, _, _, p = _vllm("vllm-vunknown-qwen3-235b-a22b-fp8-h100-tp4")
    assert g.bytes_per_block == 770_048
    assert max(_blocks_fit(p, g.bytes_per_block)) * 16 >= p["kv_tokens"]


def _sglang_cells(slug: str, tp: int):
    case = CASES[slug]
    _, st = _state(case.model_dir.name, "sglang", case.version, None, 4096)
    pages = layer_pages(st.components, tp)
    full = sum(p.layers * p.token_bytes for p in pages if p.family == "full")
    swa = sum(p.layers * p.token_bytes for p in pages if p.family == "sliding")
    return full, swa, parse(case.text).printed


def test_sglang_qwen3_235b_tp4():
    # 94 layers x 1 KV head x (128 + 128) x 2 B = 48,128 B/token (K 24,064 + V 24,064);
    # (367,404 + 1 padding) x 48,128 B = 16.47 GiB = printed K 8.23 + V 8.23 GB.
    full, _, p = _sglang_cells("sglang-vunknown-qwen3-235b-a22b-fp8-h100-tp4", 4)
    assert full == 48_128
    assert round(float((p["pool_tokens"] + 1) * full / 2 / GIB), 2) == p["k_gib"]


def test_sglang_qwen3_14b():
    # 40 layers x 8 KV heads x 256 x 2 B = 163,840 B/token; (91,749 + 1) x 81,920 = 7.00 GiB K.
    full, _, p = _sglang_cells("sglang-vunknown-qwen3-14b-rtxa6000", 1)
    assert full == 163_840
    assert round(float((p["pool_tokens"] + 1) * full / 2 / GIB), 2) == p["k_gib"] == p["v_gib"]


def test_sglang_mimo_v2_flash_swa_tp4():
    # SWA: 39 layers x (8 / 4) KV heads x (192 + 128) x 2 B = 49,920 B/token (K 29,952,
    # V 19,968); (300,288 + 64-token padding page) x 29,952 B = 8.38 GB, x 19,968 = 5.59 GB.
    # Full: 9 layers x 1 KV head (4 / 4) x 320 x 2 B = 5,760 B/token.
    full, swa, p = _sglang_cells("sglang-main20260131-mimo-v2-flash-tp4-swa", 4)
    assert (full, swa) == (5_760, 49_920)
    # K and V are printed rounded separately, so their sum is within 0.01 GB.
    assert abs(float((p["pool_tokens"] + 64) * swa / GIB) - (p["k_gib"] + p["v_gib"])) <= 0.01
