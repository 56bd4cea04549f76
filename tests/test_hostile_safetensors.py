"""Hostile safetensors headers (deep nesting, huge integers, duplicate keys, NaN, unknown
dtypes) and Hub file entries (negative, NaN, null or non-integer sizes and names): exit 2."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from conftest import run_cli

QWEN = Path(__file__).parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
W = '"model.layers.0.w"'


def _checkpoint(tmp_path: Path, header: bytes, data: int = 4) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_bytes((QWEN / "config.json").read_bytes())
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * data)
    return d


@pytest.mark.parametrize(("header", "needle"), [
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests too deeply"),
    ('{' + W + ': {"dtype": "F32", "shape": [' + "9" * 5000 + '], "data_offsets": [0, 4]}}',
     "an integer has thousands of digits"),
    ('{' + W + ': {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
     + W + ': {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', "duplicate key"),
    ('{' + W + ': {"dtype": "F32", "shape": [1], "data_offsets": [0, NaN]}}', "NaN is not"),
    ('{' + W + ': {"dtype": "Q4_WHAT", "shape": [1], "data_offsets": [0, 4]}}', "unknown dtype"),
    ('{' + W + ': {"dtype": "F32", "shape": [1], "data_offsets": [0, 4.0]}}', "two integer"),
    ('{' + W + ': {"dtype": "F32", "shape": [1], "data_offsets": [0, null]}}', "two integer"),
    ('{' + W + ': {"dtype": "F32", "shape": [' + str(2**70) + ', 0], "data_offsets": [0, 0]}}',
     "past 2^64"),
    ('{"__metadata__": {"format": {"deep": 1}}}', "__metadata__ must map"),
])
def test_hostile_safetensors_header(tmp_path, header, needle):
    d = _checkpoint(tmp_path, header.encode())
    code, _, err = run_cli(d, "--context", "1k", "--verify-headers")
    assert code == 2, err
    assert needle in err and "model.safetensors" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_genuine_header_still_verifies(tmp_path):
    layers = json.loads((QWEN / "config.json").read_text())["num_hidden_layers"]
    spec = {f"model.layers.{i}.w": {"dtype": "BF16", "shape": [2], "data_offsets": [4 * i, 4 * i + 4]}
            for i in range(layers)}
    d = _checkpoint(tmp_path, json.dumps(spec).encode(), data=4 * layers)
    code, out, err = run_cli(d, "--context", "1k", "--verify-headers", "--json")
    assert code in (0, 1, 5), err
    headers = json.loads(out)["headers"]
    assert headers["tensors"] == layers and headers["tensor_bytes"] == 4 * layers


@pytest.mark.parametrize("weight_map", [{"model.layers.0.w": ["x"]}, {"model.layers.0.w": 7},
                                        {"model.layers.0.w": None}, {"a": {"b": 1}}])
def test_an_index_naming_shards_with_non_strings_is_not_a_crash(tmp_path, weight_map):
    d = _checkpoint(tmp_path, b'{"model.layers.0.w": {"dtype": "BF16", "shape": [2], '
                              b'"data_offsets": [0, 4]}}')
    (d / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 4}, "weight_map": weight_map}))
    code, out, err = run_cli(d, "--context", "1k")
    assert code == 5 and err == "", err          # answered (state only; no hardware) ...
    assert "The safetensors index maps no tensors for declared layer(s)" in out  # ... warned
