"""phi-2 and llava-1.5-7b (the CONTRIBUTING worked examples): KV bytes per token on one rank
equal vLLM 0.33.0's at TP 1, 2 and 8, derived from vLLM's own code (the 0.33.0 wheel):

- vllm/model_executor/models/registry.py:764: PhiForCausalLM runs on the Transformers
  backend; :504 LlavaForConditionalGeneration -> llava.py, whose llava.py:569-573 builds the
  language model from config.text_config (LlamaForCausalLM; the CLIP tower has no KV cache).
- transformers/base.py:645-686: one Attention per decoder layer with
  head_size = model_arch_config.head_size and num_kv_heads = get_num_kv_heads(...).
- vllm/transformers_utils/model_arch_config_convertor.py:91-118: head_size = head_dim when
  the config has one, else hidden_size // num_attention_heads; :152-157: total KV heads
  default to the attention heads.
- vllm/config/model.py:1663-1681: KV heads per rank = max(1, total // tensor_parallel_size).
- vllm/v1/kv_cache_interface.py:586-594: a page holds num_kv_heads x block_size x
  (head_size + head_size_v) x dtype bytes; so per token per layer, heads x 2 x head_size x 2 B
  for float16 (KV cache dtype auto = the model's float16).
- vllm/v1/core/kv_cache_planning.py:681: num_blocks = available_memory // bytes_per_block.

phi-2: 32 layers, 32 KV heads, head_size 2560 // 32 = 80.
llava-1.5-7b: text_config omits the geometry -> LlamaConfig defaults: 32 layers, 32 heads,
hidden 4096 -> head_size 128, 32 KV heads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

HERE = Path(__file__).parent / "architectures"
AVAIL = 40 << 30     # 42,949,672,960 B of KV memory per GPU, as the vLLM record's points state

# (config folder, TP, vLLM bytes per token on one rank over every layer)
POINTS = [
    # 32 layers x (32 // 1) heads x (80 + 80) x 2 B = 327,680
    ("phi/configs/microsoft--phi-2", 1, 327680),
    # 32 x 16 x 160 x 2 = 163,840
    ("phi/configs/microsoft--phi-2", 2, 163840),
    # 32 x 4 x 160 x 2 = 40,960
    ("phi/configs/microsoft--phi-2", 8, 40960),
    # 32 layers x (32 // 1) heads x (128 + 128) x 2 B = 524,288
    ("llava/configs/llava-hf--llava-1.5-7b-hf", 1, 524288),
    # 32 x 16 x 256 x 2 = 262,144
    ("llava/configs/llava-hf--llava-1.5-7b-hf", 2, 262144),
    # 32 x 4 x 256 x 2 = 65,536
    ("llava/configs/llava-hf--llava-1.5-7b-hf", 8, 65536),
]


@pytest.mark.parametrize(("folder", "tp", "per_token"), POINTS,
                         ids=[f"{f.split('/')[0]}-tp{tp}" for f, tp, _ in POINTS])
def test_per_token_bytes_equal_vllm(folder, tp, per_token):
    code, out, err = run_cli(HERE / folder, "--engine", "vllm@0.33.0", "--hardware", "h100-80",
                             "--gpus", str(tp), "--tp", str(tp), "--context", "2048",
                             "--kv-cache-memory-bytes", str(AVAIL), "--json")
    assert code == 0, err
    layout = next(x for x in json.loads(out)["layouts"] if x["tp"] == tp)
    assert layout["per_rank"]["state_bytes_per_sequence"] == per_token * 2048
    # vLLM's block: 16 tokens x per_token B over every layer; blocks = 40 GiB // that.
    assert layout["engine"]["block_size"]["value"] == 16
    assert layout["engine"]["num_gpu_blocks"]["value"] == AVAIL // (16 * per_token)
