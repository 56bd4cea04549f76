"""GLM-5.3-Flash (glm5_next) as vLLM 0.33 allocates it, against vLLM's own record.

The expected numbers are worked by hand from the pinned config
(tests/architectures/glm5_next/configs/zai-org--GLM-5.3-Flash/config.json, text_config:
layer_types 34 x linear_attention (KDA) + 11 x deepseek_sparse_attention (DSA); kv_lora_rank 512,
qk_rope_head_dim 0; index_head_dim 128, index_kpool 4; linear_attn_config num_heads 64,
head_dim 128, short_conv_kernel_size 4, gate_lower_bound -5; dtype bfloat16) and vLLM 0.33's
rules, and checked against the record vLLM itself wrote (tests/engine_probe/vllm-0.33.0-kv.jsonl,
recorded by tests/engine_probe/record_vllm_kv.py).

The rule (vLLM file:line in specs/engines/vllm.yaml and specs/architectures/glm5_next.yaml):
  * rows per DSA layer: the latent, 512 values x 2 B (bf16) or x 1 B (fp8: on SM90 a 512-wide
    latent runs FLASHINFER_MLA_SPARSE_SM90 with raw E4M3 rows, not the 656 B fp8_ds_mla blob);
    one pooled indexer key of 128 fp8 + 4 B scale = 132 B per 4 tokens; the tail ring, a
    CircularBufferSpec of 4 slots x [key, gate] x 128 x 2 B = 2,048 B, one block per request;
  * KDA state per layer and rank: conv 3 x (64 / TP) x 128 x 3 x 2 B + recurrent (64 / TP) x
    128 x 128 x 4 B; FlashKDA (SM90, head_dim 128, a gate bound) exports a prefill checkpoint,
    so a request pins 3 state blocks per KDA group;
  * block = 128 x ceil(KDA state / (128 x latent row)) (one attention page holds one state;
    the KDA page is padded to it);
  * the tail's backend takes only block-outermost layouts, so vLLM packs: MLA + indexer one
    group (11 + 11 layers), KDA split to at most (11 x (latent + index page)) // KDA page = 11
    states per group -> 4 groups (9, 9, 8, 8), the ring its own 4-token group;
  * bytes per block = the MLA group's 11 x (latent + index page), rounded up to the lcm of the
    latent row (the sparse kernel reads flat rows) and the indexer's page of gcd(64 x 4, block)
    tokens (DeepGEMM's 64-entry kernel block; 1 when that is the block);
  * blocks per request = 4 x 3 + ceil(L / block) + 1; concurrency = blocks / that;
    "GPU KV cache size" = int(concurrency x L).
"""

from __future__ import annotations

import math

import engine_record_cases as cases
import pytest

from conftest import run_cli, run_json

FLASH = "zai-org--GLM-5.3-Flash"
DSA, KDA, KPOOL = 11, 34, 4
INDEX = 128 + 128 // 128 * 4          # 132 B per pooled key
RING = 4 * 2 * 128 * 2                # 2,048 B per DSA layer, one block per request
ROW = {"auto": 512 * 2, "fp8": 512 * 1}


def _kda_state(tp: int) -> int:
    heads = 64 // tp
    return 3 * heads * 128 * (4 - 1) * 2 + heads * 128 * 128 * 4


def _block(tp: int, kv: str) -> int:
    return 128 * math.ceil(_kda_state(tp) / (128 * ROW[kv]))


def _index_page(tokens: int) -> int:
    return tokens // KPOOL * INDEX


def _bytes_per_block(tp: int, kv: str) -> int:
    block = _block(tp, kv)
    widest = DSA * (block * ROW[kv] + _index_page(block))
    kernel = math.gcd(64 * KPOOL, block)
    align = math.lcm(ROW[kv], 1 if kernel == block else _index_page(kernel))
    return -(-widest // align) * align


def _blocks_per_request(tp: int, kv: str, length: int) -> int:
    return 4 * 3 + -(-length // _block(tp, kv)) + 1


def _point(tp: int, kv: str, length: int, avail: int) -> cases.Point:
    return next(p for p in cases.points() if p.dir.endswith(FLASH) and p.tp == tp
                and p.kv == kv and p.length == length and p.avail == avail)


def test_figures_by_hand():
    # TP 1: KDA 147,456 + 4,194,304 = 4,341,760 B; bf16 row 1,024 -> ceil(4,341,760 / 131,072)
    # = 34 -> 4,352 tokens; fp8 row 512 -> 67 -> 8,576. TP 8: 18,432 + 524,288 = 542,720 B
    # -> 640 (bf16) and 1,152 (fp8).
    assert (_kda_state(1), _kda_state(8)) == (4341760, 542720)
    assert [_block(tp, kv) for tp in (1, 8) for kv in ("auto", "fp8")] == [4352, 8576, 640, 1152]
    # TP 1 bf16: 11 x (4,352 x 1,024 + 1,088 x 132) = 11 x 4,600,064 = 50,600,704 B; gcd(256,
    # 4,352) = 256 < 4,352 -> index page of 256 tokens = 64 x 132 = 8,448; lcm(1,024, 8,448) =
    # 33,792; 50,600,704 -> 1,498 x 33,792 = 50,620,416 B (unaligned, 70 GiB would give 1,485).
    assert _bytes_per_block(1, "auto") == 50620416
    # TP 8 fp8: 11 x (1,152 x 512 + 288 x 132) = 6,906,240; gcd(256, 1,152) = 128 -> 32 x 132 =
    # 4,224; lcm(512, 4,224) = 16,896 -> 409 x 16,896 = 6,910,464 B.
    assert _bytes_per_block(8, "fp8") == 6910464
    # 42,949,672,960 // 50,620,416 = 848; at 4,096 tokens 12 + 1 + 1 = 14 blocks -> 60.5714x,
    # int(60.5714... x 4,096) = 248,100 tokens.
    assert (40 << 30) // 50620416 == 848 and int(848 / 14 * 4096) == 248100


@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("kv", ["auto", "fp8"])
@pytest.mark.parametrize("length", [4096, 8192, 32768, 1048576])
@pytest.mark.parametrize("gib", [40, 70])
def test_flash_matches_the_record_by_hand(tp, kv, length, gib):
    p = _point(tp, kv, length, gib << 30)
    block, bpb = _block(tp, kv), _bytes_per_block(tp, kv)
    blocks, need = (gib << 30) // bpb, _blocks_per_request(tp, kv, length)
    v = p.vllm
    # vLLM's own groups: 4 KDA groups, MLA + indexer, the ring.
    assert [(g["layers"], g["block_size"]) for g in v["worker_groups"]] == [
        (9, block), (9, block), (8, block), (8, block), (22, block), (11, 4)]
    assert [g["type"] for g in v["groups"]] == ["MambaSpec"] * 4 + ["MLAAttentionSpec",
                                                                    "CircularBufferSpec"]
    assert v["worker_groups"][4]["page_size_bytes"] == DSA * (block * ROW[kv] +
                                                              _index_page(block))
    assert [g["blocks_per_request"] for g in v["groups"]] == [3] * 4 + [-(-length // block), 1]
    assert (v["block_size"], v["num_blocks"]) == (block, blocks)
    assert v["kv_cache_tokens"] == int(blocks / need * length)
    assert abs(v["max_concurrency"] - blocks / need) < 1e-9
    # Per-token page bytes, vLLM's measure (page / block per non-Mamba layer):
    # 11 x (row + 132 / 4 + 2,048 / 4).
    assert cases.vllm_token_bytes(p.row) == DSA * (ROW[kv] + INDEX // KPOOL + RING // 4)
    result = cases.compare(p)
    assert not cases.misses(result), result
    assert result["num_blocks"][0] == blocks and result["block_size"][0] == block
    assert result["tokens"][0] == int(blocks / need * length)
    assert result["token_bytes"][0] == DSA * (ROW[kv] + INDEX // KPOOL + RING // 4)


def _plan(*extra):
    d = cases.ROOT / "tests/architectures/glm5_next/configs" / FLASH
    return (d, "--engine", "vllm@0.33.0", "--hardware", "h100-80", "--gpus", "8", "--tp", "8",
            "--context", "32768", "--kv-cache-memory-bytes", str(40 << 30), *extra)


@pytest.mark.parametrize("kv", ["auto", "fp8"])
def test_planner_state_is_the_engines_storage(kv):
    """One answer: under --engine vllm the plan's own state counts the rows the engine stores
    (fp8: 512 B raw E4M3, not the 656 B blob), and its per-rank state per sequence is the
    engine's layers at 32,768 tokens before block rounding: latent + pooled keys + tail ring
    whole on every rank, KDA split by 8 (TP 8)."""
    code, r = run_json(*_plan("--kv-dtype", kv))
    # the config-shape weights (73.09 GiB per rank at TP 8) and the stated 40 GiB pool exceed
    # h100-80's 81,089 MiB: vLLM skips its memory check for a stated pool
    # (gpu_worker.py:656-680), so no layout starts; the pool's figures stay the engine's
    assert code == 1
    comps = {c["name"]: c for c in r["state"]["components"]}
    assert comps["mla-latent"]["bytes_per_entry"] == ROW[kv]
    assert comps["pooled-index"]["bytes_per_entry"] == INDEX
    assert comps["index-tail"]["bytes_per_entry"] == RING
    lay = next(x for x in r["layouts"] if x["tp"] == 8)
    assert lay["per_rank"]["weights_bytes"] + (40 << 30) > 81_089 << 20
    assert lay["fits"] is False and "gpu_worker.py:656-680" in lay["reason"]
    per_rank = DSA * (32768 * ROW[kv] + 32768 // KPOOL * INDEX + RING) + KDA * _kda_state(8)
    assert lay["per_rank"]["state_bytes_per_sequence"] == per_rank
    e = lay["engine"]
    assert e["hybrid"]["attention_page_bytes_per_token"]["value"] == ROW[kv]
    assert e["hybrid"]["recurrent_page_bytes"]["value"] == _kda_state(8)
    assert e["num_gpu_blocks"]["value"] == (40 << 30) // _bytes_per_block(8, kv)
    groups = e["groups"]["value"]
    assert {g["family"] for g in groups} == {"full", "recurrent", "ring"}
    ring = next(g for g in groups if g["family"] == "ring")
    assert (ring["block_tokens"], ring["page_bytes"]) == (4, DSA * RING)
    assert e["warnings"] == []           # the pool is modelled, not indicative


def test_text_shows_the_same_rows_and_pool():
    code, out, _ = run_cli(*_plan("--kv-dtype", "fp8"))
    assert code == 1                     # weights + stated pool exceed the GPU (see above)
    latent = next(line for line in out.splitlines() if line.strip().startswith("mla-latent"))
    assert " 512 " in latent and "[vllm-fp8-e4m3-mla]" in latent
    # TP 8 fp8: 6,215 blocks; 12 + ceil(32,768 / 1,152) = 29 + 1 = 42 blocks per request.
    blocks = (40 << 30) // _bytes_per_block(8, "fp8")
    assert blocks == 6215 and _blocks_per_request(8, "fp8", 32768) == 42
    assert f"pool: {blocks:,} blocks x 1,152 tokens" in out
    assert "one request pins 42 blocks" in out
    assert "indicative" not in out
    # The engine section's own figures are the state table's rows: the 512 B latent row, and
    # the KDA state per rank (147,456 + 4,194,304) / 8 = 542,720 B, padded to 1,152 x 512.
    assert (f"attention {ROW['fp8']} B per token, recurrent state {_kda_state(8):,} B -> "
            f"{1152 * 512:,} B") in out
