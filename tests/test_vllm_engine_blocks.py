"""vLLM 0.33 block sizes, pages and state blocks as its backends and kernels force them
(issue 11 rules 2, 4, 5; specs/engines/vllm.yaml, kvfit/engines/vllm_blocks.py), worked by hand
from the pinned configs and checked against vLLM's own record
(tests/engine_probe/vllm-0.33.0-kv.jsonl) where the recorder built the model.

Every point: TP as named, 40 GiB (42,949,672,960 B) available KV memory, H100 (SM90) as the
record emulates, max_model_len 4096 unless stated.
"""

from __future__ import annotations

import engine_record_cases as cases
import pytest

from conftest import run_json

AVAIL = 40 << 30


def _point(name: str, tp: int, kv: str = "auto", length: int = 4096) -> cases.Point:
    return next(p for p in cases.points() if p.dir.endswith(name) and p.tp == tp and p.kv == kv
                and p.length == length and p.avail == AVAIL)


def _engine(directory: str, tp: int, *args) -> tuple[dict, dict]:
    code, r = run_json(cases.ROOT / directory, "--engine", "vllm@0.33.0", "--gpus", str(tp),
                       "--tp", str(tp), "--context", "4096", "--kv-cache-memory-bytes",
                       str(AVAIL), "--weight-gib", "1", *args)
    return next(x for x in r["layouts"] if x["tp"] == tp)["engine"], r


# --- Gemma-4: an 8-bit cache on SM90 runs FA4's fp8 kernel with a 64-token page -----------
# Gemma-4-26B-A4B: 25 sliding layers x 8 KV heads x 256 x 2 (K, V) x 1 B = 4,096 B per token
# per layer, 5 full layers x 2 heads x 512 x 2 x 1 B = 2,048 B. The model's head size is
# max(256, 512) = 512, so the block is 64 tokens: sliding page 64 x 4,096 = 262,144 B, full
# page 131,072 B, unified by doubling the full block to 128 tokens. Groups of 5 slots (25 >=
# 1.5 x 5): 5 sliding + 1 full, bytes per block = 5 x 262,144 = 1,310,720 -> 42,949,672,960 /
# 1,310,720 = 32,768 blocks. A 4,096-token request: each sliding group ceil(min(1,023 + 2 x
# 8,192, 4,096) / 64) + 1 = 65, the full group 4,096 / 128 = 32 -> 5 x 65 + 32 = 357 blocks
# -> 32,768 / 357 = 91.787x, int(91.787 x 4,096) = 375,960 tokens.
@pytest.mark.parametrize(("name", "kv"), [("google--gemma-4-26B-A4B", "fp8"),
                                          ("nvidia--Gemma-4-26B-A4B-NVFP4", "auto")])
def test_gemma4_fp8_blocks_by_hand(name, kv):
    p = _point(name, 1, kv)
    assert (p.vllm["block_size"], p.vllm["num_blocks"], p.vllm["kv_cache_tokens"]) == \
        (64, 32768, 375960)
    r = cases.compare(p)
    assert (r["block_size"][0], r["num_blocks"][0], r["tokens"][0]) == (64, 32768, 375960)
    assert r["concurrency"][0] == round(32768 / 357, 4)


def test_gemma4_block_rule_by_kv_dtype_and_gpu():
    d = "tests/architectures/gemma4/configs/google--gemma-4-26B-A4B"
    bf16, _ = _engine(d, 1, "--hardware", "h100-80", "--kv-dtype", "bf16")
    assert bf16["block_size"]["value"] == 16                # FA4 for all layers, MultipleOf(16)
    sm90, _ = _engine(d, 1, "--hardware", "h100-80", "--kv-dtype", "fp8")
    assert sm90["block_size"]["value"] == 64 and "head size 512" in sm90["block_size"]["basis"]
    # SM100: TRITON_FLASHINFER takes only 64-token blocks, for bf16 too; SM120: TRITON_ATTN,
    # 16 (recorded: tests/test_vllm_gemma4_blackwell.py)
    sm100, _ = _engine(d, 1, "--hardware", "b200-180", "--kv-dtype", "fp8")
    assert sm100["block_size"]["value"] == 64 and "TRITON_FLASHINFER" in sm100["block_size"]["basis"]
    sm120, _ = _engine(d, 1, "--hardware", "rtx-pro-6000-96", "--kv-dtype", "fp8")
    assert sm120["block_size"]["value"] == 16


# --- DSA with a checkpoint-declared fp8_e4m3 cache: FLASHINFER_MLA_SPARSE_SM90 raw rows -----
# DeepSeek-V3.2-NVFP4 declares an FP8 kv_cache_quant_algo -> vLLM's fp8_e4m3, which
# FLASHMLA_SPARSE does not take; the SM90 FlashInfer sparse backend stores the raw latent,
# (512 + 64) x 1 B = 576 B, plus the 132 B indexer key (128 fp8 + one 4 B scale), on 61
# replicated layers: 61 x 708 = 43,188 B per token at any TP. A 64-token block of both specs:
# 61 x 64 x 708 = 2,764,032 B -> 42,949,672,960 // 2,764,032 = 15,538 blocks; 4,096 tokens =
# 64 blocks -> 242.78x.
@pytest.mark.parametrize("tp", [1, 8])
def test_dsa_declared_e4m3_rows_by_hand(tp):
    p = _point("nvidia--DeepSeek-V3.2-NVFP4", tp)
    assert cases.vllm_token_bytes(p.row) == 61 * (576 + 132)
    assert cases.kvfit_token_bytes(p) == 61 * (576 + 132)
    assert p.vllm["num_blocks"] == 15538
    r = cases.compare(p)
    assert not cases.misses(r), r
    assert r["num_blocks"][0] == 15538 and r["concurrency"][0] == round(15538 / 64, 4)


def test_dsa_plan_counts_the_engine_rows():
    """One answer: the planner's own state under --engine vllm is the engine's storage."""
    d = "tests/architectures/deepseek_v32/configs/nvidia--DeepSeek-V3.2-NVFP4"
    _, r = _engine(d, 8, "--hardware", "h100-80")
    assert r["state"]["bytes_per_sequence"] == 4096 * 61 * (576 + 132)
    assert {c["layout"] for c in r["state"]["components"]} == {"vllm-fp8-e4m3-mla"}
    # an explicit fp8 is a spelling FLASHMLA_SPARSE takes: the 656 B fp8_ds_mla row
    _, fp8 = _engine(d, 8, "--hardware", "h100-80", "--kv-dtype", "fp8")
    assert fp8["state"]["bytes_per_sequence"] == 4096 * 61 * (656 + 132)


# --- MiniMax-M3: 128-token blocks (its sparse backends), a bf16 indexer under fp8 KV -------
# nvidia MiniMax-M3-NVFP4, --kv-cache-dtype fp8, TP 1: 60 layers keep 4 KV heads x 128 x 2 x
# 1 B = 1,024 B per token; the 57 sparse layers add a 128-value indexer key in bf16 = 256 B:
# 60 x 1,024 + 57 x 256 = 76,032 B per token. A 128-token block: 128 x 76,032 = 9,732,096 B
# -> 42,949,672,960 // 9,732,096 = 4,413 blocks; 4,096 tokens = 32 blocks -> 137.91x.
def test_minimax_m3_blocks_and_indexer_by_hand():
    p = _point("nvidia--MiniMax-M3-NVFP4", 1, "fp8")
    assert cases.vllm_token_bytes(p.row) == 60 * 1024 + 57 * 256
    assert cases.kvfit_token_bytes(p) == 60 * 1024 + 57 * 256
    assert (p.vllm["block_size"], p.vllm["num_blocks"]) == (128, 4413)
    r = cases.compare(p)
    assert not cases.misses(r), r
    assert (r["block_size"][0], r["num_blocks"][0]) == (128, 4413)
    _, report = _engine(p.dir, 1, "--hardware", "h100-80", "--kv-dtype", "fp8")
    assert report["dtypes"]["index"]["name"] == "bf16"      # the planner counts the same


# --- Rule 5: recurrent state blocks per request follow the prefill kernel -------------------
# In prefix-caching align mode a recurrent group pins 2 + (1 if its prefill kernel exports a
# checkpoint) blocks (vLLM kv_cache_interface.py:1135-1141). Kimi-K3's KDA declares a full-rank
# gate, gate_lower_bound -5 and head_dim 128: FlashKDA on capability 9 / 10 / 12, which exports
# one (3); on an A100 (8.0) Triton, which does not (2). Kimi-Linear declares no full-rank gate:
# the shared Triton-only Kimi GDN layer, 2 even on an H100.
@pytest.mark.parametrize(("name", "hardware", "blocks"), [
    ("moonshotai--Kimi-K3", "h100-80", 3),
    ("moonshotai--Kimi-K3", "b200-180", 3),
    ("moonshotai--Kimi-K3", "a100-80", 2),
    ("moonshotai--Kimi-Linear-48B-A3B-Base", "h100-80", 2),
])
def test_kda_state_blocks_by_kernel(name, hardware, blocks):
    e, _ = _engine(f"tests/architectures/kimi_linear/configs/{name}", 8, "--hardware", hardware)
    rec = [g for g in e["request_blocks_by_group"] if g["family"] == "recurrent"]
    assert rec and {g["blocks"] for g in rec} == {blocks}


def test_gdn_state_blocks_follow_the_record():
    """Qwen3.5-27B on SM90: FlashInfer GDN exports a checkpoint, 3 blocks per GDN group (the
    record's blocks_per_request for its MambaSpec groups)."""
    p = _point("Qwen--Qwen3.5-27B", 1)
    recorded = {g["blocks_per_request"] for g in p.vllm["groups"] if g["type"] == "MambaSpec"}
    assert recorded == {3}
    e, _ = _engine(p.dir, 1, "--hardware", "h100-80")
    assert {g["blocks"] for g in e["request_blocks_by_group"] if g["family"] == "recurrent"} \
        == {3}


def test_block_rules_name_real_components():
    """Every component a vLLM block rule keys on exists in the architecture it names."""
    from kvfit.engines.spec import rules_for
    from kvfit.specs.registry import builtin_architecture as load_architecture
    rules = rules_for("vllm", "0.33.0")
    for row in rules.values["component_block_size"]["value"]:
        arch = load_architecture(row["architecture"])
        assert row["component"] in {c.name for c in arch.components}
    prefixes = {r["component_prefix"] for r in rules.values["recurrent_blocks_by_kernel"]["value"]}
    for arch_id, prefix in (("kimi_linear", "kda-"), ("qwen3_5", "gdn-"), ("nemotron_h", "mamba-")):
        names = {c.name for c in load_architecture(arch_id).components if c.kind == "constant"}
        assert prefix in prefixes and names and all(n.startswith(prefix) for n in names)
