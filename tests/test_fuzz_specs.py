"""Mutated architecture specs never crash `kvfit specs check`: exit 0 or a located exit 2."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import run_cli

SPECS = Path(__file__).resolve().parents[1] / "specs" / "architectures"
NAMES = ["qwen3", "gemma3", "deepseek_v4", "nemotron_h", "glm_moe_dsa"]
SNIPPETS = ["", "null", "[", "{a: 1}", "- x", "9**9**9", "'", "&x", "*x", "1e999", "-1",
            "kv_heads.__class__", "\t", ": :", "!!python/object:os.system 'id'", "0x10"]


def _mutate(lines: list[str], rng: random.Random) -> str:
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(out))
        action = rng.random()
        if action < 0.3:
            del out[i]
        elif action < 0.6 and ":" in out[i]:
            head = out[i].split(":", 1)[0]
            out[i] = f"{head}: {rng.choice(SNIPPETS)}"
        else:
            out.insert(i, rng.choice(SNIPPETS))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name", NAMES)
def test_mutated_specs_are_checked_cleanly(name, tmp_path):
    lines = (SPECS / f"{name}.yaml").read_text().splitlines()
    rng = random.Random(f"kvfit-spec-{name}")
    codes = set()
    for _ in range(40):
        path = tmp_path / f"{name}.yaml"
        path.write_text(_mutate(lines, rng))
        code, out, err = run_cli("specs", "check", path)
        assert code in (0, 2), err
        assert "Traceback" not in out + err
        if code == 2:
            assert f"{name}.yaml:" in out, out
        codes.add(code)
    assert 2 in codes
