"""Hostile and malformed input: a one-paragraph error, exit 2, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli

QWEN = Path(__file__).parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"


def _config_dir(tmp_path: Path, text: str | bytes) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    return d


def _qwen_with(tmp_path: Path, **changes) -> Path:
    cfg = json.loads((QWEN / "config.json").read_text())
    cfg.update(changes)
    return _config_dir(tmp_path, json.dumps(cfg))


def _assert_clean(code, err, needle, exit_code=2):
    assert code == exit_code, err
    assert needle in err, err
    assert "Traceback" not in err
    assert err.startswith("kvfit: ") and err.count("\n") == 1, err


@pytest.mark.parametrize(("content", "needle"), [
    ("{not json", "is not valid JSON"),
    ('{"model_type": "qwen3", "model_type": "llama"}', "duplicate key"),
    ("[1, 2, 3]", "must hold a JSON object"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    ("", "not valid JSON"),
    ("[" * 100000 + "]" * 100000, "config.json"),
])
def test_malformed_config(tmp_path, content, needle):
    code, _, err = run_cli(_config_dir(tmp_path, content), "--context", "1024")
    _assert_clean(code, err, needle)


@pytest.mark.parametrize(("changes", "needle"), [
    ({"num_hidden_layers": "64"}, "should be int"),
    ({"num_hidden_layers": -3}, "below the minimum"),
    ({"num_hidden_layers": 10**9}, "layer count"),
    ({"num_key_value_heads": 0}, "below the minimum"),
    ({"num_key_value_heads": 7}, "multiple of KV heads"),
    ({"head_dim": True}, "should be int"),
    ({"num_hidden_layers": float("nan")}, "should be int"),
    ({"head_dim": float("inf")}, "should be int"),
    ({"model_type": 42}, "model_type must be a string"),
    ({"model_type": "qwen9"}, "model_type 'qwen9' is not covered"),
    ({"use_sliding_window": True}, "sliding_window is not set"),
    ({"max_position_embeddings": None}, "lacks max_position_embeddings"),
])
def test_wrong_types_and_values(tmp_path, changes, needle):
    args = ["--kv-dtype", "bf16"] + ([] if "max_position_embeddings" in changes else
                                     ["--context", "1024"])
    code, _, err = run_cli(_qwen_with(tmp_path, **changes), *args)
    _assert_clean(code, err, needle)


def test_auto_map_only_architecture_is_refused(tmp_path):
    cfg = {"model_type": "acme_decoder", "architectures": ["AcmeForCausalLM"],
           "auto_map": {"AutoModelForCausalLM": "modeling_acme.AcmeForCausalLM"},
           "num_hidden_layers": 4, "num_attention_heads": 4, "hidden_size": 64}
    code, _, err = run_cli(_config_dir(tmp_path, json.dumps(cfg)))
    _assert_clean(code, err, "modeling_acme.AcmeForCausalLM")
    assert "custom remote code" in err


def test_unknown_model_type_names_the_cause(tmp_path):
    code, _, err = run_cli(_config_dir(tmp_path, '{"model_type": "zebra", "layers": 3}'))
    _assert_clean(code, err, "model_type 'zebra' is not covered")


def test_hybrid_fields_of_unknown_type_are_named(tmp_path):
    cfg = {"model_type": "jamba", "attn_layer_period": 8, "mamba_d_state": 16}
    code, _, err = run_cli(_config_dir(tmp_path, json.dumps(cfg)))
    _assert_clean(code, err, "attn_layer_period, mamba_d_state")


def test_unmodelled_state_field_on_a_known_type_is_refused(tmp_path):
    code, _, err = run_cli(_qwen_with(tmp_path, kv_lora_rank=512), "--context", "1024")
    _assert_clean(code, err, "kv_lora_rank")


@pytest.mark.parametrize(("args", "needle"), [
    (["--context", "12q"], "is not a token count"),
    (["--context", "0"], "must be between 1"),
    (["--context", "99999999999999"], "must be between 1"),
    (["--kv-dtype", "fp4"], "ambiguous"),
    (["--kv-dtype", "fp3"], "not a known cache dtype"),
    (["--hardware", "h100-80", "--gpus", "8", "--tp", "3"], "must divide --gpus"),
    (["--hardware", "h100-80", "--tp", "x"], "must be auto or a whole number"),
    (["--hardware", "h100-80", "--utilization", "1.5"], "must be a number in (0, 1]"),
    (["--hardware", "h100-80", "--gpus", "-2"], "whole number from 1"),
    (["--hardware", "nosuch-gpu"], "unknown hardware 'nosuch-gpu'"),
    (["--hardware", "custom:0"], "above 0 and at most 100000"),
    (["--gpus", "2"], "need --hardware"),
    (["--weight-gib", "-1", "--hardware", "h100-80"], "--weight-gib must be a number in (0,"),
    (["--concurrent-users", "0", "--hardware", "h100-80"], "whole number from 1"),
    (["--no-such-flag"], "unrecognized arguments"),
    (["--gpus", "many"], "--gpus must be a whole number from 1"),
])
def test_bad_flags(args, needle):
    code, _, err = run_cli(QWEN, "--context", "1024", *args)
    _assert_clean(code, err, needle)


def test_missing_model_paths(tmp_path):
    code, _, err = run_cli(tmp_path)
    _assert_clean(code, err, "has no config.json")
    code, _, err = run_cli()
    _assert_clean(code, err, "no model given")


@pytest.mark.parametrize(("toml", "needle"), [
    ("model = ", "not valid TOML"),
    ("model = 'x'\ncolour = 'blue'", "unknown key 'colour'"),
    ("gpus = '8'", "should be int"),
    ("gpus = true", "wrong type"),
    ("[serving]\ncheck = 'vllm'", "unknown table [serving]"),
    ("[output]\njson = 1", "'output.json' should be bool"),
    ("[output]\ncolour = true", "unknown key 'output.colour'"),
])
def test_bad_presets(tmp_path, toml, needle):
    preset = tmp_path / "p.toml"
    preset.write_text(toml)
    code, _, err = run_cli(preset)
    _assert_clean(code, err, needle)


def test_nothing_is_written_on_error(tmp_path):
    d = _qwen_with(tmp_path, num_hidden_layers="x")
    before = sorted(p.name for p in d.iterdir())
    run_cli(d, "--context", "1k")
    assert sorted(p.name for p in d.iterdir()) == before


def test_json_mode_errors_are_json(tmp_path):
    code, out, err = run_cli(_config_dir(tmp_path, "{bad"), "--json")
    assert code == 2
    assert json.loads(out)["error"]["kind"] == "config error"


def test_absurd_index_total_size(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(QWEN, d)
    (d / "model.safetensors.index.json").write_text('{"metadata": {"total_size": -5}}')
    code, _, err = run_cli(d, "--context", "1k", "--hardware", "h100-80")
    _assert_clean(code, err, "metadata.total_size")


@pytest.mark.parametrize("make", ["device", "huge", "folder"])
def test_a_preset_that_is_not_a_small_regular_file_is_refused_before_reading(tmp_path, make):
    if make == "device":
        path = Path("/dev/zero")            # reading it would never end
    elif make == "huge":
        path = tmp_path / "huge.toml"
        path.write_bytes(b"#" * (2**20 + 1))
    else:
        path = tmp_path / "dir.toml"
        path.mkdir()
    code, _, err = run_cli("--config", path)
    _assert_clean(code, err, "is not a regular file of at most 1,048,576 bytes")
