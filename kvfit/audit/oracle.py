"""An independent formula for the per-sequence cache of the simplest architectures.

It reads config.json directly (not through the specs) and covers two shapes only:
  - dense grouped-query attention on every layer with no window, no hybrid/linear layers:
    layers x 2 x kv_heads x head_dim x bytes x context;
  - latent (MLA) attention with no sparse indexer: layers x (kv_lora_rank + qk_rope_head_dim)
    x bytes x context.
Anything else returns None ("no oracle"). Agreement is evidence the spec engine evaluates
these shapes as the textbook says; it can share a mistaken reading of a config field.
"""

from __future__ import annotations

from fractions import Fraction

_NOT_SIMPLE = ("layer_types", "sliding_window", "attention_chunk_size", "hybrid_override_pattern",
               "linear_attn_config", "layers_block_type", "index_topk", "compress_ratios",
               "attn_type_list", "block_configs", "full_attention_interval", "global_head_dim",
               "sparse_attention_config", "mamba_num_heads", "num_kv_shared_layers",
               "linear_num_value_heads", "swa_num_attention_heads", "use_sliding_window")


def _root(config: dict) -> dict:
    text = config.get("text_config")
    return text if isinstance(text, dict) else config


def _int(d: dict, key: str) -> int | None:
    v = d.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def state_bytes(config: dict, ctx: int, kv_bytes: Fraction) -> tuple[int | None, str]:
    """(bytes per sequence, which formula) or (None, why there is no oracle)."""
    root = _root(config)
    busy = [k for k in _NOT_SIMPLE if root.get(k) not in (None, False, 0, [], {})]
    layers = _int(root, "num_hidden_layers")
    if busy or layers is None:
        return None, "no oracle (not a plain full-attention model)"
    if _int(root, "kv_lora_rank"):
        width = _int(root, "kv_lora_rank") + (_int(root, "qk_rope_head_dim") or 0)
        return int(layers * width * kv_bytes * ctx), "oracle: latent"
    heads = _int(root, "num_attention_heads")
    kv = _int(root, "num_key_value_heads") or heads
    head_dim = _int(root, "head_dim") or (
        _int(root, "hidden_size") // heads if heads and _int(root, "hidden_size") else None)
    if not (heads and kv and head_dim):
        return None, "no oracle (geometry incomplete)"
    return int(layers * 2 * kv * head_dim * kv_bytes * ctx), "oracle: gqa"
