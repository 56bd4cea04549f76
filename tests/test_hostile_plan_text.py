"""Hostile text in a config never reaches the terminal raw, never breaks JSON, and a derived
field below its minimum is refused rather than counted as zero state."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

QWEN = Path(__file__).parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"


def _config(tmp_path: Path, **changes) -> Path:
    cfg = json.loads((QWEN / "config.json").read_text())
    cfg.update(changes)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return tmp_path


def test_derived_head_dim_of_zero_is_refused(tmp_path):
    # head_dim absent -> hidden // q_heads = 64 // 128 = 0, below the spec's min: 1
    cfg = json.loads((QWEN / "config.json").read_text())
    del cfg["head_dim"]
    cfg |= {"hidden_size": 64, "num_attention_heads": 128, "num_key_value_heads": 8}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code, out, err = run_cli(tmp_path, "--context", "1k")
    assert code == 2 and "head_dim" in err and "below the minimum" in err and not out


def test_escape_codes_in_inputs_are_not_printed_raw(tmp_path):
    d = tmp_path / "m\x1b[31mred\x07"          # the report's first line names the source
    d.mkdir()
    _config(d)
    code, out, err = run_cli(d, "--context", "1k", "--hardware", "h100-80")
    assert code == 0 and "\\x1b[31mred" in out.splitlines()[0]
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err


def test_lone_surrogate_in_a_config_gives_valid_json(tmp_path):
    d = tmp_path
    text = (QWEN / "config.json").read_text().rstrip().rstrip("}") + ', "note": "\\ud800"}'
    (d / "config.json").write_text(text)
    code, out, err = run_cli(d, "--context", "1k", "--hardware", "h100-80", "--json")
    assert code in (0, 1, 5) and "Traceback" not in err
    json.loads(out)


def test_a_path_part_over_255_bytes_is_a_usage_error():
    code, out, err = run_cli("x" * 300, "--context", "1k", "--offline")
    assert code == 2 and "internal error" not in err
