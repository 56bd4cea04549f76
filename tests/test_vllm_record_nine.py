"""Nine models against vLLM 0.33's own KV-cache record at TP 1 and 8, by hand (issue 11).

For each model the rule that decides vLLM's storage is stated with vLLM 0.33.0's own file:line
(read in the installed wheel, /work/vllm-venv; paths below are under its vllm/ package), the
figures are derived from the pinned config.json (tests/architectures/*/configs/NAME), and the
test asserts (a) vLLM's recorded row (tests/engine_probe/vllm-0.33.0-kv.jsonl, written by vLLM's
own code: tests/engine_probe/record_vllm_kv.py) equals the hand figures and (b) kvfit equals
them, both through the record comparison (engine_record_cases.compare) and in the planner's
JSON under plain `--engine vllm` (default version 0.33.0), whose own per-sequence state figure
must be the engine's storage (no second answer). None of the nine is refused at TP 8
by vLLM (every TP 8 row in the record is built), so no refusal is asserted here.

Shared rules (v1/ is vllm/v1/):
  * pages: an attention spec's page is block_size x heads x (head_size + head_size_v) x dtype
    bytes (kv_cache_interface.py:586-602); KV heads per rank max(1, heads // TP)
    (config/model.py:1663-1683); an MLA latent or indexer cache has one head, replicated;
  * num_blocks = available // bytes per block, a block being the largest group's sum of its
    layers' (padded) pages (v1/core/kv_cache_planning.py:574-586, 681);
  * blocks per request: per group cdiv(max memory, page), summed (kv_cache_utils.py:1061-1093):
    full attention cdiv(len, block) (kv_cache_interface.py:641-648); a sliding window
    cdiv(min(W - 1 + in-flight, len), block) + 1 (:918-944) with in-flight = 2 batches x
    max_num_batched_tokens 8192 under async scheduling (config/vllm.py:588-609); a Mamba state
    in prefix-caching align mode 2 + spec 0 + 1 prefill checkpoint = 3 (:1135-1141);
  * max concurrency = num_blocks / blocks per request, "GPU KV cache size" = int(concurrency x
    max_model_len) (kv_cache_utils.py:1120-1128).
"""

from __future__ import annotations

from fractions import Fraction as F

import engine_record_cases as cases
import pytest

from conftest import run_json

GIB40 = 40 << 30
IN_FLIGHT = 2 * 8192


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _point(name: str, tp: int, kv: str = "auto", length: int = 4096) -> cases.Point:
    return next(p for p in cases.points() if p.dir.endswith("/" + name) and p.tp == tp
                and p.kv == kv and p.length == length and p.avail == GIB40)


def _check(p: cases.Point, *, pages, token_bytes, block, groups, per_block, state):
    """pages: (layers, page bytes) per recorded spec; groups: (layers, blocks per request) per
    vLLM KV-cache group in vLLM's order; per_block: bytes per block; state: the stored bytes
    of one sequence of p.length tokens on one rank (no page padding). The rest follows."""
    blocks = p.avail // per_block
    need = sum(b for _, b in groups)
    conc = blocks / need                                  # vLLM's own float arithmetic
    tokens = int(conc * p.length)
    # (a) vLLM's recorded row equals the hand figures
    v = p.vllm
    assert sorted((s["layers"], s["page_size_bytes"]) for s in p.row["specs"]) == sorted(pages)
    assert cases.vllm_token_bytes(p.row) == token_bytes
    assert [(g["layers"], g["blocks_per_request"]) for g in v["groups"]] == groups
    assert (v["block_size"], v["num_blocks"], v["kv_cache_tokens"]) == (block, blocks, tokens)
    assert v["max_concurrency"] == conc
    # (b) kvfit, through the record comparison ...
    r = cases.compare(p)
    assert not cases.misses(r), r
    assert (r["token_bytes"][0], r["block_size"][0], r["num_blocks"][0], r["tokens"][0]) == \
        (token_bytes, block, blocks, tokens)
    assert r["concurrency"][0] == round(conc, 4)
    # ... and the planner's JSON under plain --engine vllm: its own state figure per sequence
    # is the engine's storage (unpadded), and its engine section the figures above
    # (exit 5 where the checkpoint's weights are unknown: the pool is still stated and sized)
    code, layout, _ = cases.kvfit_layout(p, engine="vllm")
    eng = layout["engine"]
    assert code in (0, 1, 5) and eng["version"] == "0.33.0"
    assert layout["per_rank"]["state_bytes_per_sequence"] == state
    assert sorted(g["layers"] for g in eng["groups"]["value"]) == sorted(n for n, _ in groups)
    assert (eng["bytes_per_block"]["value"], eng["num_gpu_blocks"]["value"]) == (per_block, blocks)
    assert (eng["blocks_per_request"]["value"], eng["kv_cache_tokens"]["value"]) == (need, tokens)
    assert eng["max_concurrency"]["value"] == round(conc, 4)


@pytest.mark.parametrize("tp", [1, 8])
def test_gemma_2_9b(tp):
    """google/gemma-2-9b: 42 layers, 8 KV heads, head_dim 256, sliding_window 4096, float32.
    Rule: --dtype auto serves a float32 config in the first platform dtype the model accepts,
    bf16 (gemma2 refuses fp16): config/model.py:2398-2403, 2423-2446; platforms/cuda.py:257-260;
    so auto KV is bf16. Even layers slide (transformers' Gemma2Config layer_types;
    model_executor/models/gemma2.py:155-156): 21 SlidingWindowSpec + 21 FullAttentionSpec of
    one page, two groups of 21 (kv_cache_planning.py:486, 521-555); block 16 (config/cache.py:185).
    TP 1: page 16 x 8 x (256 + 256) x 2 = 131,072; 42 x 8 x 512 x 2 = 344,064 B/token; block
    21 x 131,072 = 2,752,512 B -> 42,949,672,960 // 2,752,512 = 15,603 blocks; at 4,096 the
    window holds cdiv(min(4,095 + 16,384, 4,096), 16) + 1 = 257 blocks, full 256 -> 513:
    30.4152x, 124,580 tokens. TP 8: 1 KV head: page 16,384, 43,008 B/token, 344,064 per block
    -> 124,830 blocks, 243.33x, 996,693 tokens."""
    heads = max(1, 8 // tp)
    page = 16 * heads * 512 * 2
    _check(_point("google--gemma-2-9b", tp), pages=[(21, page), (21, page)],
           token_bytes=42 * heads * 512 * 2, block=16, groups=[(21, 257), (21, 256)],
           per_block=21 * page, state=42 * heads * 512 * 2 * 4096)    # the window holds 4,096


@pytest.mark.parametrize("tp", [1, 8])
def test_minicpm3_4b(tp):
    """openbmb/MiniCPM3-4B: 62 layers, 40 heads, qk_nope 64 + qk_rope 32, kv_lora_rank 256, bf16.
    Rule: vLLM decompresses the latent into per-head K (64 + 32 = 96) and V (padded to 96) in an
    ordinary Attention layer, num_kv_heads = the local heads (model_executor/models/minicpm3.py:
    126-134, 169-174): a head-sharded FullAttentionSpec in 16-token blocks, not a 576 B latent.
    TP 1: 40 x (96 + 96) x 2 = 15,360 B per token per layer (26.7 x 576), page 245,760;
    62 x 15,360 = 952,320 B/token; 62 x 245,760 = 15,237,120 per block -> 2,818 blocks; 256
    per request -> 11.0078x, 45,088 tokens. TP 8: 5 heads: 1,920 B, page 30,720, 119,040
    B/token, 1,904,640 per block -> 22,550 blocks, 88.09x, 360,800 tokens."""
    per_tok = (40 // tp) * 192 * 2
    _check(_point("openbmb--MiniCPM3-4B", tp), pages=[(62, 16 * per_tok)],
           token_bytes=62 * per_tok, block=16, groups=[(62, 256)], per_block=62 * 16 * per_tok,
           state=62 * per_tok * 4096)


@pytest.mark.parametrize("kv", ["auto", "fp8"])
@pytest.mark.parametrize("tp", [1, 8])
def test_kimi_k26_nvfp4(tp, kv):
    """nvidia/Kimi-K2.6-NVFP4 (DeepseekV3 text: 61 layers, kv_lora_rank 512, qk_rope 64).
    Rule: auto KV is fp8: config.json's quantization_config (quant_method modelopt) declares
    kv_cache_scheme {dynamic false, num_bits 8, type float} -> fp8_e4m3, though an
    hf_quant_config.json also ships (transformers_utils/config.py:951-962 reads config.json
    first; utils/torch_utils.py:443-495, 498-516). 8-bit dense MLA on SM90: FLASH_ATTN_MLA
    takes 16-bit only (v1/attention/backends/mla/flashattn_mla.py:40-50), next FLASHMLA, 64-token
    blocks (platforms/cuda.py:137-153; flashmla.py:57-58); one latent head, replicated at TP 8.
    61 x (512 + 64) x 1 B = 35,136 B/token; page 64 x 576 = 36,864; 61 x 36,864 = 2,248,704
    per block -> 19,099 blocks; 4,096 / 64 = 64 per request -> 298.42x, 1,222,336 tokens."""
    p = _point("nvidia--Kimi-K2.6-NVFP4", tp, kv)
    assert p.row["cache_dtype"] == {"auto": "fp8_e4m3", "fp8": "fp8"}[kv]
    _check(p, pages=[(61, 64 * 576)], token_bytes=61 * 576, block=64, groups=[(61, 64)],
           per_block=61 * 64 * 576, state=61 * 576 * 4096)


@pytest.mark.parametrize("kv", ["auto", "fp8"])
@pytest.mark.parametrize("tp", [1, 8])
def test_nemotron_3_super_fp8(tp, kv):
    """nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8: hybrid_override_pattern 40 M (Mamba2) and 8 *
    (attention) layers; 2 KV heads x 128; Mamba 128 heads x 64, n_groups 8, ssm_state_size 128,
    conv_kernel 4, mamba_ssm_cache_dtype float32.
    Rule: auto stays bf16: the FP8 kv_cache_quant_algo is only in an hf_quant_config.json with no
    producer, so there is no quant_method modelopt and it is not applied
    (transformers_utils/model_arch_config_convertor.py:240-270; utils/torch_utils.py:452-495).
    Prefix caching sets Mamba align mode (model_executor/models/config.py:763-765); the
    attention block is the smallest multiple of 16 whose page holds one Mamba state, the state
    padded to it (platforms/interface.py:1068-1109). State per rank: 3 x (128 x 64 + 2 x 8 x
    128) / TP x 2 B conv + 128 / TP x 64 x 128 x 4 B ssm (layers/mamba/mamba_utils.py:186-211;
    ssm dtype from the config: models/config.py:817-830). Groups of 8: five Mamba and one
    attention (kv_cache_planning.py:521-555); a Mamba group pins 3 blocks (align mode with one
    prefill checkpoint: layers/mamba/mamba_mixer2.py:1108-1118).
    TP 1 auto: 61,440 + 4,194,304 = 4,255,744 B; 2 x 256 x 2 = 1,024 B/token/layer -> 16 x
    cdiv(4,255,744, 16,384) = 4,160 tokens, page 4,259,840; 8 x 4,259,840 = 34,078,720 per block
    -> 1,260 blocks; 5 x 3 + cdiv(4,096, 4,160) = 16 per request -> 78.75x, 322,560 tokens.
    TP 8 auto: 7,680 + 524,288 = 531,968; 1 KV head, 512 B -> 1,040 tokens, page 532,480 ->
    10,082 blocks; 15 + 4 = 19 -> 530.63x. fp8 halves the attention row: 8,320 (TP 1, 16 per
    request) and 2,080 tokens (TP 8, 15 + 2 = 17), the same pages."""
    state = 3 * (10240 // tp) * 2 + (128 // tp) * 64 * 128 * 4
    per_tok = max(1, 2 // tp) * 256 * (1 if kv == "fp8" else 2)
    block = 16 * cdiv(state, 16 * per_tok)
    page = block * per_tok
    assert (block, page) == {(1, "auto"): (4160, 4259840), (8, "auto"): (1040, 532480),
                             (1, "fp8"): (8320, 4259840), (8, "fp8"): (2080, 532480)}[tp, kv]
    p = _point("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", tp, kv)
    assert (p.row["cache_dtype"], p.row["mamba_cache_mode"]) == (kv, "align")
    _check(p, pages=[(40, page), (8, page)], token_bytes=8 * per_tok, block=block,
           groups=[(8, 3)] * 5 + [(8, cdiv(4096, block))], per_block=8 * page,
           state=8 * per_tok * 4096 + 40 * state)    # one unpadded state per Mamba layer


@pytest.mark.parametrize("tp", [1, 8])
def test_qwen36_35b_a3b(tp):
    """Qwen/Qwen3.6-35B-A3B text: 40 layers, full_attention_interval 4 -> 10 attention layers
    (2 KV heads x 256) and 30 Gated DeltaNet (16 key heads x 128, 32 value heads x 128, conv
    kernel 4, mamba_ssm_dtype float32), bf16.
    Rule: as Nemotron-H, the attention block grows until its page holds one GDN state; on SM90
    the GDN prefill is FlashInfer (layers/mamba/gdn/qwen_gdn_linear_attn.py:245-250), which
    exports align-mode checkpoints at 64 tokens (:689-700; v1/attention/backends/gdn_attn.py:34),
    so the block is a multiple of lcm(16, 64) = 64 (platforms/interface.py:1090-1101) and a GDN
    group pins 3 blocks (qwen_gdn_linear_attn.py:739-750; kv_cache_interface.py:1135-1141).
    ssm float32 from the config (models/config.py:953-977), conv at the model dtype. State per
    rank: 3 x (16 x 128 x 2 + 32 x 128) / TP x 2 B + 32 / TP x 128 x 128 x 4 B
    (mamba_utils.py:272-293). Groups of 10: three GDN and one attention.
    TP 1: 49,152 + 2,097,152 = 2,146,304 B; 2 x 512 x 2 = 2,048 B/token/layer -> 64 x
    cdiv(2,146,304, 131,072) = 1,088 tokens, page 2,228,224; 22,282,240 per block -> 1,927
    blocks; 9 + cdiv(4,096, 1,088) = 13 -> 148.23x, 607,153 tokens. TP 8: 6,144 + 262,144 =
    268,288; 1 KV head, 1,024 B -> 320 tokens, page 327,680 -> 13,107 blocks; 9 + 13 = 22."""
    state = 3 * (8192 // tp) * 2 + (32 // tp) * 128 * 128 * 4
    per_tok = max(1, 2 // tp) * 512 * 2
    block = 64 * cdiv(state, 64 * per_tok)
    page = block * per_tok
    assert (block, page) == {1: (1088, 2228224), 8: (320, 327680)}[tp]
    _check(_point("Qwen--Qwen3.6-35B-A3B", tp), pages=[(30, page), (10, page)],
           token_bytes=10 * per_tok, block=block, groups=[(10, 3)] * 3 + [(10, cdiv(4096, block))],
           per_block=10 * page, state=10 * per_tok * 4096 + 30 * state)


DSA = {"deepseek-ai--DeepSeek-V3.2": (61, 61), "zai-org--GLM-5.3": (78, 21)}  # MLA, indexer layers


@pytest.mark.parametrize("kv", ["auto", "fp8"])
@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("name", DSA)
def test_dsa_v32_and_glm53(name, tp, kv):
    """DeepSeek-V3.2 (61 layers) and GLM-5.3 (78 layers, index_topk_freq 4, index_skip_topk_offset
    3): latent kv_lora_rank 512 + qk_rope 64, index_head_dim 128.
    Rule (the default under --engine vllm): the indexer key is fp8 plus a fp32 scale per 128
    values, 128 + 4 = 132 B whatever the KV dtype (model_executor/models/deepseek_v2.py:724-736);
    GLM-5.3 builds an indexer only where max(layer - 3 + 1, 0) % 4 == 0 (deepseek_v2.py:
    1144-1168): layers 0, 1, 2, 6, 10, ..., 74 = 21. auto: the bf16 latent on
    FLASH_ATTN_MLA_SPARSE (platforms/cuda.py:137-153; flashattn_mla_sparse.py:40-51), 1,152 B;
    fp8: FLASHMLA_SPARSE rewrites a quantized dtype to fp8_ds_mla (layers/attention/
    mla_attention.py:359-376): 512 fp8 + 16 B scales + 64 x 2 B rope = 656 B
    (v1/attention/backends/mla/flashmla_sparse.py:77-87). Block 64 (MultipleOf(64); indexer
    [64], indexer.py:285-286); one-head caches, replicated at TP 8, one group
    (kv_cache_planning.py:1143-1147).
    V3.2 auto: 61 x (1,152 + 132) = 78,324 B/token; 64 x 78,324 = 5,012,736 per block -> 8,568
    blocks; 64 per request -> 133.875x, 548,352 tokens; fp8 61 x (656 + 132) = 48,068 B/token
    -> 13,961 blocks. GLM-5.3 auto: 78 x 1,152 + 21 x 132 = 92,628 B/token -> 5,928,192 per
    block -> 7,244 blocks, 113.19x; fp8 78 x 656 + 2,772 = 53,940 -> 12,441 blocks."""
    mla, index = DSA[name]
    row = 656 if kv == "fp8" else 1152
    p = _point(name, tp, kv)
    assert p.row["cache_dtype"] == ("fp8_ds_mla" if kv == "fp8" else "auto")
    pages = [(index, 64 * 132), (index, 64 * row)] + ([(mla - index, 64 * row)] if mla > index else [])
    token = mla * row + index * 132
    _check(p, pages=pages, token_bytes=token, block=64, groups=[(mla + index, 64)],
           per_block=64 * token, state=token * 4096)


@pytest.mark.parametrize("kv", ["auto", "fp8"])
@pytest.mark.parametrize("tp", [1, 8])
def test_minimax_m3_nvfp4(tp, kv):
    """nvidia/MiniMax-M3-NVFP4 text: 60 layers, 4 KV heads x 128; sparse_attention_freq 0 for
    layers 0-2 then 1 (57 sparse layers), sparse_index_dim 128.
    Rule: auto stays bf16 (quant_method modelopt, kv_cache_quant_algo null: utils/torch_utils.py:
    452-495 gives none). Each sparse layer adds a one-head index-key cache that stays bf16 even
    under --kv-cache-dtype fp8 (models/minimax_m3/nvidia/model.py:505-507, resolve_indexer_kv_dtype
    ("bf16"); common/indexer.py:118-123); K/V heads shard (4 / 8 -> 1). The sparse and indexer
    backends take only 128-token blocks (common/sparse_attention.py:164-167, indexer.py:93-95),
    the smallest size all backends accept, for every layer (platforms/interface.py:700-737); all
    full-attention type: one group of 60 + 57 = 117 layers (kv_cache_planning.py:1143-1147).
    TP 1 auto: KV page 128 x 4 x 256 x 2 = 262,144, index page 128 x 128 x 2 = 32,768;
    60 x 2,048 + 57 x 256 = 137,472 B/token; 60 x 262,144 + 57 x 32,768 = 17,596,416 per block
    -> 2,440 blocks; 32 per request -> 76.25x, 312,320 tokens. fp8 halves only the KV page
    (9,732,096 per block -> 4,413). TP 8: 1 KV head, 65,536 -> 5,799,936 -> 7,405 blocks.
    (These rows also carry a `bytes_per_block` field from an earlier probe, 3 x these sums; the
    recorded num_blocks is available // the sum, which is what vLLM divides by.)"""
    kv_tok = max(1, 4 // tp) * 256 * (1 if kv == "fp8" else 2)
    token = 60 * kv_tok + 57 * 256
    p = _point("nvidia--MiniMax-M3-NVFP4", tp, kv)
    _check(p, pages=[(3, 128 * kv_tok), (57, 128 * kv_tok), (57, 128 * 256)], token_bytes=token,
           block=128, groups=[(117, 32)], per_block=128 * token, state=token * 4096)


# DeepSeek-V4-Flash (config.json: 43 layers, head_dim 512, qk_rope_head_dim 64, index_head_dim
# 128, sliding_window 128, compress_ratios 0, 0, then 4 / 128 alternating, layer 42 = 4: 21 C4
# and 20 C128 layers). Pages per block per layer, each rounded up to 576 B:
V4_SWA = cdiv(64 * 584, 576) * 576                 # 64-token window block: 37,376 -> 37,440
V4_C4 = cdiv(256 // 4 * 584, 576) * 576            # 64 C4 entries per 256 tokens: 37,440
V4_C128 = cdiv(256 // 128 * 584, 576) * 576        # 2 entries: 1,168 -> 1,728
V4_INDEX = cdiv(256 // 4 * 132, 576) * 576         # 8,448 -> 8,640
V4_RING_C4 = cdiv(4 * 2 * 2 * 512 * 4, 576) * 576  # 32,768 -> 32,832
V4_RING_C4_INDEX = cdiv(4 * 2 * 2 * 128 * 4, 576) * 576  # 8,192 -> 8,640
V4_RING_C128 = cdiv(8 * 2 * 1 * 512 * 4, 576) * 576      # 32,768 -> 32,832
# One 8,192-token sequence as stored, unpadded: 43 x 128 window rows + 21 x 2,048 C4 and
# 20 x 64 C128 rows of 584 B, 21 x 2,048 index keys of 132 B, and the rings: C4 21 x 8 x
# (8,192 + 2,048) B, C128 20 x 128 x 4,096 B = 46,961,664 B.
V4_STATE_8K = ((43 * 128 + 21 * 8192 // 4 + 20 * 8192 // 128) * 584 + 21 * 8192 // 4 * 132
               + 21 * 8 * (2 * 2 * 512 * 4 + 2 * 2 * 128 * 4) + 20 * 128 * (2 * 1 * 512 * 4))


@pytest.mark.parametrize("kv", ["auto", "fp8"])
@pytest.mark.parametrize("tp", [1, 8])
def test_deepseek_v4_flash(tp, kv):
    """deepseek-ai/DeepSeek-V4-Flash at 8,192 tokens.
    Rule: the fp8_ds_mla layout is forced even for auto (models/deepseek_v4/attention.py:94-130):
    448 fp8 NoPE + 64 x 2 B RoPE + 8 B UE8M0 scales = 584 B per row, pages rounded up to 576 B,
    64-token window blocks (v1/attention/backends/mla/sparse_swa.py:76-90, 114-135); compressed
    MLA and indexer in 256-token blocks (C4 64 entries, C128 2), the indexer key 128 + 4 = 132 B;
    the compressor states are sliding-window rings of fp32 state_dim 2 x coff x head_dim: C4
    window 8 in 4-token blocks, C128 window 128 in 8-token blocks. Packed grouping
    (v1/core/kv_cache_planning.py:914-1041, 1159-1165): the window layers split 22 + 21, the
    256-token bucket one group of 62, the 4-token rings 42, the 8-token rings 20; one block =
    the widest group: 21 x 8,640 + 21 x 37,440 + 20 x 1,728 = 1,002,240 B -> 42,853 blocks.
    Per request at 8,192: windows 2 x (cdiv(min(127 + 16,384, 8,192), 64) + 1) = 2 x 129,
    32, rings cdiv(8,192, 4) + 1 = 2,049 and cdiv(8,192, 8) + 1 = 1,025: 3,364 -> 12.7387x,
    104,355 tokens. Every cache is one shared head, replicated: TP 8 equals TP 1."""
    assert (V4_SWA, V4_C4, V4_C128, V4_INDEX) == (37440, 37440, 1728, 8640)
    assert (V4_RING_C4, V4_RING_C4_INDEX, V4_RING_C128, V4_STATE_8K) == (32832, 8640, 32832, 46961664)
    p = _point("deepseek-ai--DeepSeek-V4-Flash", tp, kv, 8192)
    assert p.row["cache_dtype"] == "fp8_ds_mla"
    pages = [(43, V4_SWA), (21, V4_C4), (20, V4_C128), (21, V4_INDEX), (21, V4_RING_C4),
             (21, V4_RING_C4_INDEX), (20, V4_RING_C128)]
    token = (43 * F(V4_SWA, 64) + 21 * F(V4_C4 + V4_INDEX, 256) + 20 * F(V4_C128, 256)
             + 21 * F(V4_RING_C4 + V4_RING_C4_INDEX, 4) + 20 * F(V4_RING_C128, 8))
    swa = cdiv(min(127 + IN_FLIGHT, 8192), 64) + 1
    _check(p, pages=pages, token_bytes=token, block=4,
           groups=[(22, swa), (21, swa), (62, 8192 // 256), (42, 8192 // 4 + 1), (20, 8192 // 8 + 1)],
           per_block=21 * V4_INDEX + 21 * V4_C4 + 20 * V4_C128, state=V4_STATE_8K)


def test_v4_rings_are_sliding_windows_in_the_engine_state():
    """Under --engine vllm the compressor states are the engine's rings: kind sliding, their
    window and block, and per sequence the same bytes as the logical state (8 x 8,192 B)."""
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    p = _point("deepseek-ai--DeepSeek-V4-Flash", 1, "auto", 8192)
    state = engine_state(cases._checkpoint(p.dir), rules_for("vllm", "0.33.0"), "auto", 8192)
    by = {c.name: c for c in state.components}
    ring = by["c4-compressor-state"]
    assert (ring.kind, ring.window, ring.block_tokens, ring.page_alignment) == ("sliding", 8, 4, 576)
    assert ring.bytes_per_sequence == 21 * 8 * (2 * 2 * 512 * 4)
    assert (by["c128-compressor-state"].window, by["c128-compressor-state"].block_tokens) == (128, 8)
    assert by["swa"].block_tokens == 64 and by["c4-kv"].block_tokens == 256


@pytest.mark.parametrize(("name", "kv"), [("google--gemma-2-9b", "bf16"),
                                          ("nvidia--Kimi-K2.6-NVFP4", "fp8_e4m3"),
                                          ("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "bf16")])
def test_planner_resolves_auto_kv_as_vllm(name, kv):
    """The planner's own --kv-dtype auto, with and without --engine vllm, is the dtype vLLM
    allocated in the tests above (one resolver: no second answer)."""
    d = cases.ROOT / _point(name, 1).dir
    for extra in ((), ("--engine", "vllm")):
        _, report = run_json(d, "--hardware", "h100-80", "--gpus", "1", "--context", "4096", *extra)
        assert report["dtypes"]["kv"]["name"] == kv, extra
