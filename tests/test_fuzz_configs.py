"""Mutated real configs never crash kvfit: every run answers or ends with a clean exit 2.

Deterministic (seeded) mutations of pinned configs from several families: a field's value is
replaced by a value of another type, a huge or negative number, null, or removed; nested
text_config fields are mutated too. Any Python exception escaping the CLI fails the test.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parent / "architectures"
MODELS = ["qwen3/configs/Qwen--Qwen3-32B", "gemma3/configs/google--gemma-3-27b-it",
          "deepseek_v32/configs/deepseek-ai--DeepSeek-V3.2", "qwen3_5/configs/Qwen--Qwen3.6-35B-A3B",
          "nemotron_h/configs/nvidia--Nemotron-H-56B-Base-8K", "gpt_oss/configs/openai--gpt-oss-120b",
          "deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash", "glm_moe_dsa/configs/zai-org--GLM-5.2"]
ODD_VALUES = [None, "64", -1, 0, 10**12, 2.5, True, [], {}, [1, "x"], "full_attention",
              float("inf"), {"a": 1}, "", 7]


def _mutate(config: dict, rng: random.Random) -> dict:
    out = copy.deepcopy(config)
    for _ in range(rng.randint(1, 3)):
        target = out
        if isinstance(out.get("text_config"), dict) and rng.random() < 0.5:
            target = out["text_config"]
        if not target:
            break
        key = rng.choice(sorted(target))
        if rng.random() < 0.2:
            del target[key]
        else:
            target[key] = rng.choice(ODD_VALUES)
    return out


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.split("/")[0])
def test_mutated_configs_exit_cleanly(model, tmp_path):
    base = json.loads((ROOT / model / "config.json").read_text())
    rng = random.Random(f"kvfit-{model}")
    outcomes = set()
    for n in range(60):
        folder = tmp_path / f"m{n}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(_mutate(base, rng)))
        code, _, err = run_cli(folder, "--context", "4096", "--allow-context-overflow",
                               "--hardware", "h100-80", "--gpus", "8", "--weight-gib", "100")
        assert code in (0, 1, 2), err
        assert "Traceback" not in err
        if code == 2:
            assert err.startswith("kvfit: ") and err.count("\n") == 1, err
        outcomes.add(code)
    assert 2 in outcomes and outcomes & {0, 1}     # both paths were exercised
