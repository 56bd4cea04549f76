"""The rotary-embedding cos/sin cache vLLM builds with the model: part of what its
"Model loading took X GiB" line counts, beside the checkpoint's weights.

vLLM 0.33.0: RotaryEmbedding computes a [max_position, rotary_dim] cache
(model_executor/layers/rotary_embedding/base.py:94-103) and registers it as a buffer in the
model dtype on the model's device (base.py:58-63); get_rope returns one shared instance per
distinct (head size, rotary dim, max position, parameters, dtype) key
(rotary_embedding/__init__.py:74-85), so a model whose layers share one RoPE holds one cache on
every rank (not split by TP). The loading figure is the allocated memory after load_model
(utils/mem_utils.py:82-98 DeviceMemoryProfiler, platforms/cuda.py:369-374), buffers included.
The same cache is in the 0.19 fixture logs: Llama-4-Scout's 10,485,760 positions x 128 x 2 B =
2.5 GiB is the gap between its printed 53.12 GiB per rank and the checkpoint's share.

Only the two RoPE kinds whose cache is exactly max_position x rotary_dim are modelled
("default" without mrope_section, and "llama3", whose class only changes the frequencies:
llama3_rope.py:11-40); other kinds (yarn, linear, longrope, mrope, ...) size their caches
otherwise and get no term, said so.
"""

from __future__ import annotations

_KINDS = ("default", "llama3")


def rope_cache_bytes(config: dict | None, model_bytes: float) -> tuple[int | None, str]:
    """(bytes of vLLM's RoPE cos/sin cache on each rank, basis) or (None, why not)."""
    if not isinstance(config, dict):
        return None, "no config"
    params = config.get("rope_parameters") or config.get("rope_scaling") or {}
    if not isinstance(params, dict):
        return None, "rope_scaling is not an object"
    kind = params.get("rope_type") or params.get("type") or "default"
    if kind not in _KINDS or "mrope_section" in params:
        return None, f"RoPE kind {kind!r} sizes its cache otherwise (not modelled)"
    max_pos, heads = config.get("max_position_embeddings"), config.get("num_attention_heads")
    head = config.get("head_dim") or (config.get("hidden_size") // heads
                                      if isinstance(heads, int) and heads > 0
                                      and isinstance(config.get("hidden_size"), int) else None)
    factor = params.get("partial_rotary_factor", config.get("partial_rotary_factor", 1.0))
    if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in (max_pos, head)) \
            or not isinstance(factor, (int, float)) or not 0 < factor <= 1:
        return None, "max_position_embeddings, head size or partial_rotary_factor not usable"
    rotary = int(head * factor)
    size = int(max_pos * rotary * model_bytes)
    return size, (f"vLLM RoPE cos/sin cache {max_pos:,} positions x {rotary} x {float(model_bytes):g} B "
                  "on every rank (rotary_embedding/base.py:58-63, 94-103 in 0.33.0)")
