"""Run under a vLLM interpreter: print vLLM's own view of each config's attention geometry.

    $KVFIT_VLLM_PYTHON tests/engine_probe/vllm_probe.py DIR [DIR ...]

For every checkpoint directory, vLLM's ModelConfig parses config.json (no weights, no GPU,
trust_remote_code off) and we print one JSON line: layers, head size, KV heads per rank at
TP=1 and TP=8 (when vLLM accepts TP=8), MLA, sliding window, and the per-layer sliding flags
when the text config declares layer_types. kvfit's tests compare these with its specs.
"""

from __future__ import annotations

import json
import sys


def probe(path: str) -> dict:
    from vllm.config import ModelConfig, ParallelConfig

    mc = ModelConfig(model=path, tokenizer=None, skip_tokenizer_init=True,
                     trust_remote_code=False)
    out = {"dir": path, "layers": mc.get_num_layers(ParallelConfig(tensor_parallel_size=1)),
           "head_size": mc.get_head_size(), "use_mla": bool(getattr(mc, "use_mla", False)),
           "sliding_window": mc.get_sliding_window(), "kv_heads": {}}
    for tp in (1, 8):
        try:
            out["kv_heads"][str(tp)] = mc.get_num_kv_heads(ParallelConfig(tensor_parallel_size=tp))
        except Exception as exc:  # vLLM refuses this TP for the model
            out["kv_heads"][str(tp)] = f"refused: {type(exc).__name__}"
    types = getattr(mc.hf_text_config, "layer_types", None)
    if isinstance(types, list):
        out["sliding_layers"] = sum(1 for t in types if "sliding" in str(t))
    return out


def main() -> None:
    for path in sys.argv[1:]:
        try:
            print(json.dumps(probe(path)), flush=True)
        except Exception as exc:
            print(json.dumps({"dir": path, "error": f"{type(exc).__name__}: {exc}"[:300]}),
                  flush=True)


if __name__ == "__main__":
    main()
