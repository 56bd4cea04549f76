"""GLM-5.3-Flash's DSA cell and DeepSeek-V4's DSV4PoolConfigurator under `--engine sglang`,
checked by hand against SGLang 0.5.23's own recorded answer (issue 11, "SGLang likewise").

The record is tests/engine_probe/sglang-0.5.23-kv.jsonl (made by SGLang's own code, see
tests/engine_probe/record_sglang_kv.py); every expected figure below is arithmetic on the pinned
configs (tests/architectures/glm5_next/configs/zai-org--GLM-5.3-Flash, tests/architectures/
deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash and -Pro) with the SGLang file:line of the
rule, and is checked against the record where the record has the point. Paths below are under
SGLang's python/sglang/srt/.
"""

from __future__ import annotations

import math

import pytest
import sglang_record_cases as cases

GIB = 1 << 30
BUDGET = 40 * GIB            # the record's smaller per-GPU KV budget, 42,949,672,960 B


def _point(name: str, tp: int, kv: str = "auto", avail: int = BUDGET, context: int = 4096):
    return next(p for p in cases.points() if p.dir.endswith(name) and p.tp == tp and p.kv == kv
                and p.avail == avail and p.context == context)


def _engine(p, **flags) -> dict:
    """kvfit's SGLang section (JSON) for a record point, SGLang's mem_fraction_static stated,
    with extra SGLang flags (the budget stays the record's)."""
    from kvfit.engines import predict_inputs
    from kvfit.model.base import to_plain
    mfs = p.row["resolved"]["mem_fraction_static"]
    free = int(cases.header()["free_before_gib"] * GIB)
    inp = cases._inputs(p.dir, p.tp, p.kv, p.context, int(mfs * free) - p.avail)
    return to_plain(predict_inputs("sglang", cases.VERSION, {"kv_cache_dtype": p.kv,
                                                              "mem_fraction_static": mfs,
                                                              **flags}, inp))


def _v(x):
    return x["value"] if isinstance(x, dict) else x


# GLM-5.3-Flash: 45 layers, 11 deepseek_sparse_attention (DSA) + 34 linear_attention (KDA);
# kv_lora_rank 512, qk_rope_head_dim 0, index_head_dim 128, index_kpool 4; KDA 64 heads x 128,
# short_conv_kernel_size 4.
GLM = "zai-org--GLM-5.3-Flash"


@pytest.mark.parametrize("tp", [1, 8])
def test_glm53_flash_cell_by_hand(tp):
    """Per DSA layer: the latent row, bf16 512 x 2 = 1,024 B, or fp8 512 + 512 / 128 x 4 scales +
    0 x 2 rope = 528 B (mem_cache/kv_cache_configurator.py:3458-3473), plus the pooled index key
    priced per token, ceil((128 + 128 / 128 x 4) / 4) = 33 B (model_executor/pool_configurator.py:
    547-575). 11 x (1,024 + 33) = 11,627 B; 11 x (528 + 33) = 6,171 B, replicated on every rank."""
    for kv, cell in (("auto", 11 * (512 * 2 + math.ceil(132 / 4))),
                     ("fp8_e4m3", 11 * (512 + 512 // 128 * 4 + 0 * 2 + math.ceil(132 / 4)))):
        p = _point(GLM, tp, kv)
        assert p.row["cell_bytes"] == cell
        assert cases.compare(p)["cell_bytes"] == (cell, cell, True)


@pytest.mark.parametrize("tp, heads", [(1, 64), (8, 8)])
def test_glm53_flash_mamba_state_has_no_tail_ring(tp, heads):
    """SGLang's Mamba state per request is the KDA layers alone: 34 x (heads x 128 x 128 x 4 B
    recurrent + 3 x heads x 128 x (4 - 1) x 2 B conv). The indexer's tail ring is not in it (nor
    in the token cell): the DSA pool allocates it per request slot after the pools are sized
    (mem_cache/memory_pool.py:5409-5460), so under the SGLang layout it is kind none."""
    state = 34 * (heads * 128 * 128 * 4 + 3 * heads * 128 * 3 * 2)
    p = _point(GLM, tp)
    assert p.row["mamba_cache_per_req"] == state            # 147,619,840 B at TP 1
    assert cases.compare(p)["mamba_bytes"] == (state, state, True)
    tail = next(c for c in cases._state(p.dir, p.kv, p.context).components if c.name == "index-tail")
    assert (tail.kind, tail.layout, tail.bytes_per_sequence) == ("none", "sglang-dsa-scaled", 0)


def test_glm53_flash_tokens_tp1_bf16_by_hand():
    """TP 1, bf16, 40 GiB: Mamba slots floor((B x 0.9 / 1.9 - s) / s) = 136 for s = 147,619,840
    (kv_cache_configurator.py:3229-3409), 137 slots taken with the padding one; the multimodal
    reservation 100 MiB (kv_cache_configurator.py:202-219); (B - 137 s - 100 MiB) / 11,627 =
    1,945,548 -> 1,945,344 on the 256-token page; running min(2048, ...) capped by 136 // 5 = 27."""
    s, b = 147_619_840, BUDGET
    slots = math.floor((b * 0.9 / 1.9 - s) / s)
    tokens = int((b - (slots + 1) * s - 100 * (1 << 20)) / 11_627) // 256 * 256
    p = _point(GLM, 1)
    assert (slots, tokens) == (136, 1_945_344)
    assert (p.sglang["max_mamba_cache_size"], p.sglang["max_total_num_tokens"]) == (slots, tokens)
    r = cases.compare(p)
    assert (r["mamba_slots"][0], r["tokens"][0], r["running"][0]) == (136, 1_945_344, 27)


def test_glm53_flash_vllm_keeps_its_ring():
    """The SGLang layout is SGLang's: under vLLM the tail is still its CircularBufferSpec ring,
    4 x 2 x 128 x 2 = 2,048 B per DSA layer (tests/test_vllm_glm5_next_record.py)."""
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    st = engine_state(cases._checkpoint(_point(GLM, 1).dir), rules_for("vllm", "0.33.0"), None, 4096,
                      capability="9.0")
    tail = next(c for c in st.components if c.name == "index-tail")
    assert (tail.kind, tail.bytes_per_entry) == ("constant", 4 * 2 * 128 * 2)
    assert st.layout.startswith("vllm-")


# DeepSeek-V4: head_dim 512 (448 NoPE + 64 RoPE), index_head_dim 128, sliding_window 128.
# Flash: 43 layers, compress_ratios 21 x 4, 20 x 128, 2 x 0; Pro: 61 layers, 30 x 4, 31 x 128.
# A FlashMLA V4 slot is 448 + 64 x 2 + 8 = 584 B (pool_configurator.py:1108); a page of n slots
# is n x 584 rounded up to 576 B (KVLayout.V4, kernels/ops/attention/dsv4/kv_layout.py:50-106):
# 256 SWA slots 149,760 B (585 / token), 64 C4 entries 37,440 B (146.25 / token), 2 C128 entries
# 1,728 B (6.75 / token). C4 indexer 132 / 4 = 33 B per token. Compressor rings (fp32): C4 8 rows
# x 8,192 B + indexer 8 x 2,048 B per SWA page of 256; C128 128 rows x 4,096 B per request slot.
def _per_full_token(layers: int, c4: int, c128: int) -> float:
    swa = layers * 149_760 / 256 + c4 * (8 * 8_192 + 8 * 2_048) / 256      # :1372-1388
    return 0.1 * swa + c4 * (37_440 / 256 + 132 / 4) + c128 * 1_728 / 256  # :1390-1404, 1437-1455


def _c128_fixed(c128: int, running: int) -> int:
    rows = math.ceil(((running + 1) * 128 + 128 + 1) / 128) * 128            # :1504-1528
    return rows * 4_096 * c128


@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("name, layers, c4, c128, tokens, swa", [
    ("deepseek-ai--DeepSeek-V4-Flash", 43, 21, 20, 5_677_312, 567_552),
    ("deepseek-ai--DeepSeek-V4-Pro", 61, 30, 31, 3_829_760, 382_976),
])
def test_dsv4_pools_by_hand(tp, name, layers, c4, c128, tokens, swa):
    """DSV4PoolConfigurator at its CUDA defaults, 40 GiB: max_running_requests 256
    (arg_groups/deepseek_v4_hook.py:138-145) -> C128 rings for 257 slots, 33,152 rows; full tokens
    (B - fixed) / per-full-token bytes on the 256-token page (:1638-1660; Flash 7,086.75 B,
    2,715,811,840 B fixed; Pro 10,115.25 B, 4,209,508,352 B); SWA tokens x 0.1 on the page
    (:1457-1461), the V4 override's ratio counting as operator-set (ratio mode). Replicated: the
    same at TP 1 and 8. SGLang's record says the same for auto and fp8_e4m3."""
    per = _per_full_token(layers, c4, c128)
    mine = int((BUDGET - _c128_fixed(c128, 256)) / per) // 256 * 256
    assert (mine, int(mine * 0.1) // 256 * 256) == (tokens, swa)
    for kv in ("auto", "fp8_e4m3"):
        p = _point(name, tp, kv)
        assert p.row["resolved"]["kv_cache_dtype"] == "fp8_e4m3"
        assert (p.sglang["max_total_num_tokens"], p.sglang["swa_max_total_num_tokens"]) == (tokens, swa)
        e = _engine(p)
        assert (_v(e["max_total_num_tokens"]), _v(e["swa_tokens"])) == (tokens, swa)
        assert _v(e["bytes_per_full_token"]) == per
        assert _v(e["max_running_requests"]) == p.sglang["max_running_requests"] == 256
        assert _v(e["page_size"]) == 256 and not e.get("warnings")
        assert e["swa_full_tokens_ratio"] == 0.1      # the ratio the pool used, not 0.8


def test_dsv4_reports_the_ratio_its_pool_uses():
    """The V4 override sets swa_full_tokens_ratio 0.1 only when the operator left it unset
    (arg_groups/model_overrides/deepseek_v4.py:43-49); a stated ratio is used by the pool and
    reported alike. Flash at 40 GiB with 0.5: per full token 0.5 x 31,875 + 3,899.25 =
    19,836.75 B; (42,949,672,960 - 2,715,811,840) / 19,836.75 = 2,028,248.6 -> 2,028,032 on the
    page; SWA 1,014,016."""
    p = _point("deepseek-ai--DeepSeek-V4-Flash", 8)
    assert (_engine(p)["swa_full_tokens_ratio"], _v(_engine(p)["swa_tokens"])) == (0.1, 567_552)
    e = _engine(p, swa_full_tokens_ratio=0.5)
    assert e["swa_full_tokens_ratio"] == 0.5
    assert (_v(e["max_total_num_tokens"]), _v(e["swa_tokens"])) == (2_028_032, 1_014_016)


@pytest.mark.parametrize("flags, running", [({"max_running_requests": 64}, 64),
                                            ({"attn_dp_size": 8}, 256 // 8)])
def test_dsv4_fixed_pool_follows_running_requests(flags, running):
    """The C128 ring pool is sized for the requested running requests per attention-DP worker,
    max(1, requested // attn_dp) (:1141-1145), before the token pools: 64 requests -> 65 slots,
    8,576 rows, 702,545,920 B -> 5,961,216 tokens; attention-DP 8 -> 256 // 8 = 32 per worker,
    4,480 rows, 367,001,600 B -> 6,008,576 tokens (Flash, 40 GiB, the record's budget)."""
    per = _per_full_token(43, 21, 20)
    tokens = int((BUDGET - _c128_fixed(20, running)) / per) // 256 * 256
    e = _engine(_point("deepseek-ai--DeepSeek-V4-Flash", 8), **flags)
    assert _v(e["fixed_state_bytes"]) == _c128_fixed(20, running)
    assert (_v(e["max_total_num_tokens"]), _v(e["max_running_requests"])) == (tokens, running)
    assert tokens == {64: 5_961_216, 32: 6_008_576}[running]


def test_dsv4_mtp_is_not_modelled_and_says_so():
    """Speculative decoding changes SGLang's V4 sizing ((T + 1) / T inflation, rings 16 / 256,
    pool_configurator.py:1227-1240): kvfit leaves the MTP layer's window out and warns."""
    from kvfit.engines import predict_inputs
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    p = _point("deepseek-ai--DeepSeek-V4-Flash", 8)
    st = engine_state(cases._checkpoint(p.dir), rules_for("sglang", cases.VERSION), None, 4096,
                      mtp=True, capability="9.0")
    assert st.kv.name == "fp8_e4m3" and st.layout == "sglang-dsv4"
    inp = cases._inputs(p.dir, p.tp, p.kv, p.context, 10 * GIB)
    inp.components = list(st.components)
    e = predict_inputs("sglang", cases.VERSION, {}, inp)
    assert any("mtp-swa" in w and "speculative" in w for w in e.warnings)


def test_dsv4_fixed_pool_larger_than_the_budget_refuses():
    """--max-running-requests 8192: C128 rings for 8,193 slots, ceil((8,193 x 128 + 129) / 128) =
    8,195 x 128 = 1,048,960 rows x 4,096 B x 20 layers = 85,930,803,200 B, more than the 40 GiB
    budget: no token fits and SGLang's MemoryPoolConfig refuses max_total_num_tokens <= 0
    (model_executor/pool_configurator.py:94-99)."""
    assert _c128_fixed(20, 8192) == 1_048_960 * 4_096 * 20 == 85_930_803_200 > BUDGET
    e = _engine(_point("deepseek-ai--DeepSeek-V4-Flash", 8), max_running_requests=8192)
    assert _v(e["max_total_num_tokens"]) == 0
    assert "pool_configurator.py:94-99" in e["refusal"]["rule"]
    assert "--max-running-requests" in e["refusal"]["reason"]
