"""#11 rule 7: decode context parallel (KV tokens split over the DCP ranks) and MTP draft KV
under vLLM 0.33, derived by hand from the pinned configs and vLLM's own code."""

from __future__ import annotations

from pathlib import Path

from conftest import run_json

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "model-configs"
KIMI = str(CONFIGS / "moonshotai--Kimi-K2-Thinking")
LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B")
QWEN36 = str(CONFIGS / "Qwen--Qwen3.6-35B-A3B")


def test_dcp8_splits_the_replicated_latent_over_the_ranks():
    code, r = run_json(KIMI, "--offline", "--hardware", "h200-141", "--gpus", "8", "--tp", "8",
                       "--context", "32k", "--weight-gib", "594",
                       "--decode-context-parallel-size", "8")
    lay = r["layouts"][0]
    # latent row 512 + 64 values x 2 B = 1,152 B per layer per token, replicated on every TP
    # rank; 61 layers x 32,768 tokens x 1,152 B = 2,302,672,896 B, split over 8 DCP ranks
    # (ceil(len / dcp), vllm/v1/kv_cache_interface.py:643-648) = 287,834,112 B per rank
    assert lay["per_rank"]["state_bytes_per_sequence"] == 61 * 32768 * 1152 // 8 == 287_834_112
    e = lay["engine"]
    # SM90 16-bit MLA -> 16-token blocks; a request holds ceil(32,768 / 8 / 16) = 256 blocks
    assert e["block_size"]["value"] == 16 and e["blocks_per_request"]["value"] == 256


def test_dcp_with_gqa_needs_replicated_kv_heads():
    # vllm/config/model.py:1578-1598: GQA DCP needs TP > KV heads (8) and DCP <= TP // 8
    code, r = run_json(LLAMA, "--offline", "--hardware", "h100-80", "--gpus", "8", "--context",
                       "8k", "--weight-gib", "16", "--decode-context-parallel-size", "2")
    assert all(not x["valid"] for x in r["layouts"])
    assert "needs TP > 8" in next(x for x in r["layouts"] if x["tp"] == 8)["reason"]


def test_qwen36_mtp_layer_joins_the_attention_group_and_adds_a_spec_block():
    code, r = run_json(QWEN36, "--offline", "--hardware", "h100-80", "--gpus", "1", "--context",
                       "32k", "--mtp", "--engine", "vllm@0.33.0", "--weight-gib", "67",
                       "--print-command", "vllm")
    e = r["layouts"][0]["engine"]
    groups = e["groups"]["value"]
    # 10 full-attention layers + 1 MTP layer (mtp_num_hidden_layers 1, qwen3_5_mtp.py:82)
    # share one spec (is_draft is compare=False, kv_cache_interface.py:215), so the hybrid
    # group size is 11 and the 30 GDN layers fill ceil(30 / 11) = 3 groups
    assert groups[0]["components"] == "kv+kv-mtp" and groups[0]["layers"] == 11
    assert [g["layers"] for g in groups[1:]] == [11, 11, 8]
    # one speculative token (no nextn declared): 3 align-mode state blocks + 1 per group
    # (kv_cache_interface.py:1135-1141)
    assert [b["blocks"] for b in e["request_blocks_by_group"][1:]] == [4, 4, 4]
    assert '"num_speculative_tokens": 1' in r["engine_command"]["launch"]


def test_dcp_must_divide_tp():
    # vllm/config/parallel.py:594-600: DCP reuses the TP ranks, tp % dcp == 0 (MLA: no head rule)
    code, r = run_json(KIMI, "--offline", "--hardware", "h200-141", "--gpus", "8", "--context",
                       "8k", "--weight-gib", "594", "--decode-context-parallel-size", "4")
    by_tp = {x["tp"]: x for x in r["layouts"]}
    assert not by_tp[2]["valid"] and "not divisible by --decode-context-parallel-size 4" in \
        by_tp[2]["reason"]
    assert by_tp[4]["valid"] and by_tp[8]["valid"]


def test_qwen36_mtp_module_weights_under_mtp():
    def weights(*extra):
        code, r = run_json(QWEN36, "--offline", "--hardware", "h100-80", "--context", "8k",
                           *extra)
        return r["weights"]["bytes"]

    # text_config: hidden 2,048, 16 query / 2 KV heads of 256, 256 experts of 512, a shared
    # expert of 512, mtp_num_hidden_layers 1 (vLLM qwen3_5_mtp.py:66-145), 2 B per element:
    # fc 2 x 2,048 x 2,048 = 8,388,608; pre-fc norms + final norm 3 x 2,048 = 6,144;
    # the layer's two norms 4,096; q_proj (with gate) 2 x 16 x 256 x 2,048 = 16,777,216;
    # k_proj + v_proj 2 x 2 x 256 x 2,048 = 2,097,152; o_proj 2,048 x 4,096 = 8,388,608;
    # q/k norms 512; router 256 x 2,048 = 524,288; experts 256 x 3 x 512 x 2,048 =
    # 805,306,368; shared expert 3 x 512 x 2,048 = 3,145,728; shared gate 2,048
    # -> 844,640,768 parameters; embed_tokens / lm_head are shared with the target at PP=1
    params = (8_388_608 + 6_144 + 4_096 + 16_777_216 + 2_097_152 + 8_388_608 + 512 + 524_288
              + 805_306_368 + 3_145_728 + 2_048)
    assert params == 844_640_768
    assert weights("--mtp") - weights() == 2 * params
