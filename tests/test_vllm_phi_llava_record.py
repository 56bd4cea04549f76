"""phi-2 and llava-1.5-7b: per-token KV bytes equal vLLM 0.33's at TP 1, 2 and 8 (issue 24).

vLLM's figures are its own: tests/engine_probe/vllm-0.33.0-kv.jsonl rows recorded by
tests/engine_probe/record_vllm_kv.py (vllm_kv_probe.py: GPUModelRunner.get_kv_cache_spec on
the model vLLM builds). The hand figures below come from the pinned config.json files.
Rules, vLLM 0.33.0 (paths under the wheel's vllm/ package):
  * phi-2 (PhiForCausalLM) runs on the Transformers backend (model_executor/models/
    registry.py:764): one Attention per layer with head_size from the arch config and
    get_num_kv_heads (model_executor/models/transformers/base.py:645-686);
  * llava-1.5 builds its text_config as a registered LlamaForCausalLM (model_executor/models/
    llava.py:568-573); its CLIP tower keeps no KV cache;
  * head_size without head_dim = hidden_size // num_attention_heads
    (transformers_utils/model_arch_config_convertor.py:104-118);
  * KV heads per rank = max(1, total // TP) (config/model.py:1663-1683);
  * a page holds block_size x heads x (head_size + head_size_v) x dtype bytes
    (v1/kv_cache_interface.py:586-602), so per token: 2 x heads x head_size x dtype bytes a
    layer. auto is the config's float16 (2 B), fp8 1 B.
"""

from __future__ import annotations

import engine_record_cases as cases
import pytest

# microsoft/phi-2 config.json: num_hidden_layers 32, num_attention_heads 32,
# num_key_value_heads 32, hidden_size 2560 -> head 2560 // 32 = 80, torch_dtype float16.
#   TP 1: 32 layers x 2 x 32 heads x 80 x 2 B = 327,680 B/token; TP 2 (16 heads) 163,840;
#   TP 8 (4 heads) 40,960. fp8 halves each: 163,840 / 81,920 / 20,480.
# llava-hf/llava-1.5-7b-hf config.json: text_config is llama with only max_position_embeddings
# and vocab_size stated, so transformers' LlamaConfig defaults hold (configuration_llama.py:
# hidden_size 4096, num_hidden_layers 32, num_attention_heads 32, num_key_value_heads None ->
# num_attention_heads): head 4096 // 32 = 128, torch_dtype float16.
#   TP 1: 32 x 2 x 32 x 128 x 2 B = 524,288 B/token; TP 2 262,144; TP 8 65,536.
#   fp8: 262,144 / 131,072 / 32,768.
HAND = {
    ("microsoft--phi-2", "auto"): {1: 327_680, 2: 163_840, 8: 40_960},
    ("microsoft--phi-2", "fp8"): {1: 163_840, 2: 81_920, 8: 20_480},
    ("llava-hf--llava-1.5-7b-hf", "auto"): {1: 524_288, 2: 262_144, 8: 65_536},
    ("llava-hf--llava-1.5-7b-hf", "fp8"): {1: 262_144, 2: 131_072, 8: 32_768},
}


@pytest.mark.parametrize("tp", [1, 2, 8])
@pytest.mark.parametrize("name,kv", sorted(HAND))
def test_per_token_bytes_equal_vllm(name, kv, tp):
    expected = HAND[name, kv][tp]
    pts = [p for p in cases.points() if p.dir.endswith("/" + name) and p.tp == tp and p.kv == kv]
    assert len(pts) == 2            # one max_model_len (the derived one) x 40 and 70 GiB
    for p in pts:
        assert cases.vllm_token_bytes(p.row) == expected          # vLLM's own spec
        r = cases.compare(p)
        assert not cases.misses(r), r
        assert r["token_bytes"][0] == expected                    # kvfit's


def test_derived_lengths_and_block_counts_by_hand():
    """At 40 GiB, TP 1, auto: a block is 16 tokens (config/cache.py:185) of every layer, so
    phi-2 holds 42,949,672,960 // (16 x 327,680) = 8,192 blocks and, at its derived 2,048
    (max_position_embeddings), 2,048 / 16 = 128 per request: 64x; llava 40 GiB // (16 x
    524,288) = 5,120 blocks, 4,096 / 16 = 256 per request: 20x."""
    for name, length, blocks, conc in (("microsoft--phi-2", 2048, 8192, 64.0),
                                       ("llava-hf--llava-1.5-7b-hf", 4096, 5120, 20.0)):
        p = next(p for p in cases.points() if p.dir.endswith("/" + name) and p.tp == 1
                 and p.kv == "auto" and p.avail == 40 << 30)
        assert (p.length, p.vllm["num_blocks"], p.vllm["max_concurrency"]) == (length, blocks, conc)
        r = cases.compare(p)
        assert (r["num_blocks"][0], r["concurrency"][0]) == (blocks, conc)
