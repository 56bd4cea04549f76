"""MiniCPM3 under vLLM: the latent is decompressed into per-head K and V in an ordinary
attention layer (vllm/model_executor/models/minicpm3.py:126-134, V padded at :169-178), so
vLLM's cache is 26.7 x the latent SGLang keeps and is sharded by heads, in 16-token blocks
(the default block size, vllm/config/cache.py:185), not MLA's 64.

Pinned config: tests/architectures/minicpm3/configs/openbmb--MiniCPM3-4B (62 layers, 40 heads,
qk_nope 64 + qk_rope 32 = 96, kv_lora_rank 256)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_json

M = str(Path(__file__).parent / "architectures/minicpm3/configs/openbmb--MiniCPM3-4B")
ARGS = (M, "--hardware", "h100-80", "--gpus", "2", "--context", "32k", "--weight-gib", "7.5")


def test_vllm_stores_per_head_kv_by_default():
    _, r = run_json(*ARGS, "--engine", "vllm")
    c = r["state"]["components"][0]
    assert (c["kind"], c["layout"], c["bytes_per_entry"]) == ("full", "vllm-expanded-kv", 15360)
    tp2 = next(x for x in r["layouts"] if x["tp"] == 2)
    # a page: 16 tokens x (2 x 20 heads x 96 x 2 B) = 16 x 7,680 = 122,880 B per layer
    assert tp2["engine"]["block_size"]["value"] == 16
    assert [g["page_bytes"] for g in tp2["engine"]["groups"]["value"]] == [122880]
    # per rank: 62 x 32,768 x 7,680 = 15,602,810,880 B
    assert tp2["per_rank"]["state_bytes_per_sequence"] == 15602810880


def test_without_an_engine_and_under_sglang_the_latent_stays():
    for extra in ((), ("--engine", "sglang")):
        _, r = run_json(*ARGS, *extra)
        c = r["state"]["components"][0]
        # (256 + 32) x 2 B = 576 B per token per layer, replicated on every rank
        assert (c["kind"], c["bytes_per_entry"]) == ("latent", 576), extra
