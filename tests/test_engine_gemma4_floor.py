"""vLLM 0.33 raises the default max_num_batched_tokens of a multimodal prefix-LM model to its
largest multimodal item, so one item fits in one batch (rule mm_prefix_batched_tokens_floor).

Recorded from the engine's code: vllm/engine/arg_utils.py:3190-3216 (only when the flag is not
given, and only upwards); Gemma 4 is prefix-LM when text_config.use_bidirectional_attention is
"vision" (transformers_utils/model_arch_config_convertor.py:781-788); its largest item is a video
of 32 frames x (70 soft tokens + 2 + 6) = 2,496 tokens (model_executor/models/gemma4_mm.py:
124-126, 272-296; an image is 280).

Pinned config: tests/fixtures/model-configs/google--gemma-4-26B-A4B (sliding_window 1024,
use_bidirectional_attention "vision"). The sliding groups then hold more blocks per request:
ceil(min(1,024 - 1 + 2 x batched tokens, L) / 16) + 1 (kv_cache_interface.py:918-944, two
batches in flight with async scheduling, config/vllm.py:586-609).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

from conftest import run_json

G4 = Path(__file__).parent / "fixtures/model-configs/google--gemma-4-26B-A4B"
ARGS = ("--gpus", "1", "--engine", "vllm@0.33.0", "--weight-gib", "48", "--context", "32k")


def _engine(model, hardware: str, *extra) -> dict:
    _, r = run_json(str(model), "--hardware", hardware, *ARGS, *extra)
    return r["layouts"][0]["engine"]


def _sliding_blocks(e: dict) -> int:
    return next(g["blocks"] for g in e["request_blocks_by_group"] if g["family"] == "sliding")


def test_a100_default_2048_is_raised_to_one_video():
    e = _engine(G4, "a100-80")             # the 2,048 tier (arg_utils.py:2940-3039)
    assert e["max_num_batched_tokens"]["value"] == 2496
    assert "arg_utils.py:3190-3216" in e["max_num_batched_tokens"]["basis"]
    assert _sliding_blocks(e) == math.ceil((1024 - 1 + 2 * 2496) / 16) + 1 == 377


def test_a_stated_value_and_a_larger_default_are_kept():
    e = _engine(G4, "a100-80", "--max-num-batched-tokens", "2048")
    assert e["max_num_batched_tokens"] == {"value": 2048, "basis": "user"}
    assert _sliding_blocks(e) == math.ceil((1024 - 1 + 2 * 2048) / 16) + 1 == 321
    assert _engine(G4, "h100-80")["max_num_batched_tokens"]["value"] == 8192


def test_text_only_gemma4_is_not_prefix_lm(tmp_path):
    model = tmp_path / "gemma4-text"
    shutil.copytree(G4, model)
    cfg = json.loads((model / "config.json").read_text())
    cfg["text_config"]["use_bidirectional_attention"] = None
    (model / "config.json").write_text(json.dumps(cfg))
    assert _engine(model, "a100-80")["max_num_batched_tokens"]["value"] == 2048
