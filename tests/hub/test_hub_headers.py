"""Strict safetensors and GGUF header reading: local files, ranged remote reads, bad input."""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest
from hubserver import gguf_bytes, safetensors_bytes, split_gguf_bytes
from hubserver.repos import gguf_kv, gguf_tensors

from kvfit.errors import ConfigError, UnsupportedArchitecture
from kvfit.hub import gguf_header, parse_reference, resolve
from kvfit.hub.safetensors_header import local_reader, read_safetensors_headers
from kvfit.metadata import FileEntry


def _headers(tmp_path, name: str, data: bytes, size: int | None = -1):
    (tmp_path / name).write_bytes(data)
    entry = FileEntry(name, len(data) if size == -1 else size)
    return read_safetensors_headers([entry], local_reader(tmp_path))


def test_safetensors_writer_output_is_readable_by_the_safetensors_package(tmp_path):
    from safetensors import safe_open

    data = safetensors_bytes({"a": ("F32", [2, 3]), "b": ("F16", [4])})
    (tmp_path / "m.safetensors").write_bytes(data)
    with safe_open(tmp_path / "m.safetensors", "np") as handle:
        assert sorted(handle.keys()) == ["a", "b"]
    tensors = _headers(tmp_path, "m.safetensors", data)
    assert {n: (t.dtype, t.shape, t.nbytes) for n, t in tensors.items()} == {
        "a": ("F32", (2, 3), 24), "b": ("F16", (4,), 8)}


def test_header_larger_than_first_read_takes_a_second_read(tmp_path):
    tensors = {f"model.layers.{i}.w": ("BF16", [2]) for i in range(6000)}
    data = safetensors_bytes(tensors)
    assert struct.unpack("<Q", data[:8])[0] > 128 * 1024
    assert len(_headers(tmp_path, "big.safetensors", data)) == 6000


@pytest.mark.parametrize(("data", "size", "message"), [
    (b"\x01\x02", -1, "too short to be a safetensors file"),
    (struct.pack("<Q", 2**40) + b"{}", -1, "declares a 1,099,511,627,776-byte safetensors header"),
    (struct.pack("<Q", 100_000_001) + b"{}", 10**9, "expected 2 to 100,000,000 bytes"),
    (struct.pack("<Q", 0), -1, "declares a 0-byte"),
    (struct.pack("<Q", 500) + b'{"a": 1}', -1, "past the end of the 16-byte file"),
    (struct.pack("<Q", 500) + b'{"a": 1}', None, "header is truncated (8 of 500 bytes)"),
    (struct.pack("<Q", 8) + b'{"a": [1', -1, "not valid JSON"),
    (struct.pack("<Q", 2) + b"[]", -1, "not a JSON object"),
    (struct.pack("<Q", 4) + b'\xff\xfe{}', -1, "not valid JSON"),
])
def test_malformed_safetensors_headers(tmp_path, data, size, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        _headers(tmp_path, "bad.safetensors", data, size)


def _one(spec: dict, data_bytes: int) -> bytes:
    header = json.dumps(spec).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * data_bytes


@pytest.mark.parametrize(("spec", "data_bytes", "message"), [
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 64]}}, 16, "out of range"),
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [8, 4]}}, 16, "out of range"),
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [-1, 15]}}, 16, "integer"),
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0]}}, 16, "two integer data_offsets"),
    ({"w": {"dtype": "F32", "shape": ["4"], "data_offsets": [0, 16]}}, 16, "integer shape"),
    ({"w": {"dtype": "F32", "shape": [5], "data_offsets": [0, 16]}}, 16, "needs 20 bytes"),
    ({"w": [1, 2]}, 16, "is not an object"),
    ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, 16, "overlap"),
])
def test_inconsistent_tensor_entries(tmp_path, spec, data_bytes, message):
    with pytest.raises(ConfigError, match=message):
        _headers(tmp_path, "bad.safetensors", _one(spec, data_bytes))


def test_unknown_dtype_is_refused(tmp_path):
    spec = {"w": {"dtype": "F4_FUTURE", "shape": [7], "data_offsets": [0, 5]}}
    with pytest.raises(ConfigError, match="unknown dtype 'F4_FUTURE'"):
        _headers(tmp_path, "x.safetensors", _one(spec, 5))


def test_duplicate_tensor_across_files(tmp_path):
    data = safetensors_bytes({"w": ("F32", [1])})
    for name in ("a.safetensors", "b.safetensors"):
        (tmp_path / name).write_bytes(data)
    entries = [FileEntry("a.safetensors", len(data)), FileEntry("b.safetensors", len(data))]
    with pytest.raises(ConfigError, match="appears in both"):
        read_safetensors_headers(entries, local_reader(tmp_path))


@pytest.mark.parametrize(("name", "message"), [
    ("absurd.safetensors", "declares a 1,099,511,627,776-byte safetensors header"),
    ("beyond.safetensors", "past the end of the 106-byte file"),
    ("badjson.safetensors", "not valid JSON"),
    ("offsets.safetensors", "out of range"),
])
def test_remote_malformed_safetensors_fail_cleanly(hub, name, message):
    ref = parse_reference(f"{hub.url}/kvfit-test/broken/blob/main/{name}")
    with pytest.raises(ConfigError, match=message) as info:
        resolve(ref, read_headers=True)
    assert "Traceback" not in info.value.render()


@pytest.mark.parametrize(("name", "error", "message"), [
    ("truncated.gguf", ConfigError, "is truncated: its tensors need"),
    ("cut-header.gguf", ConfigError, "truncated or corrupt"),
    ("unknown-arch.gguf", UnsupportedArchitecture, "general.architecture = 'mamba9'"),
])
def test_remote_bad_gguf_fail_cleanly(hub, name, error, message):
    with pytest.raises(error, match=message):
        resolve(parse_reference(f"hf://kvfit-test/broken/{name}"))


def test_local_gguf_file_and_split_parts(tmp_path):
    parts = split_gguf_bytes("m.gguf", "qwen3", gguf_kv(), gguf_tensors(), max_tensors=4)
    for name, data in parts.items():
        (tmp_path / name).write_bytes(data)
    meta = resolve(parse_reference(str(tmp_path / "m-00002-of-00003.gguf")), read_headers=True)
    assert meta.origin == "gguf" and meta.revision is None
    assert meta.source == "m-00001-of-00003.gguf"
    assert [f.path for f in meta.files] == sorted(parts)
    assert sum(f.size for f in meta.files) == sum(len(d) for d in parts.values())
    assert meta.tensor_bytes["token_embd.weight"] == 8 * 64 * 2
    assert meta.config["num_key_value_heads"] == 2


def test_local_split_gguf_with_a_missing_part(tmp_path):
    parts = split_gguf_bytes("m.gguf", "qwen3", gguf_kv(), gguf_tensors(), max_tensors=4)
    for name, data in list(parts.items())[:2]:
        (tmp_path / name).write_bytes(data)
    with pytest.raises(ConfigError, match="1 part\\(s\\) are missing: m-00003-of-00003.gguf"):
        resolve(parse_reference(str(tmp_path / "m-00001-of-00003.gguf")))


@pytest.mark.parametrize(("data", "message"), [
    (b"", "not a GGUF file"),
    (b"NOPE" + b"\0" * 40, "not a GGUF file"),
    (b"GGUF" + struct.pack("<IQQ", 3, 2**40, 1), "implausible GGUF header"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + b"\xff" * 30, "truncated or corrupt"),
])
def test_corrupt_local_gguf(tmp_path, data, message):
    (tmp_path / "bad.gguf").write_bytes(data)
    with pytest.raises(ConfigError, match=message):
        resolve(parse_reference(str(tmp_path / "bad.gguf")))


def test_remote_gguf_header_grows_past_the_first_read(hub, monkeypatch):
    big = gguf_bytes("qwen3", gguf_kv(vocab=20_000), gguf_tensors())
    sha = hub.state.add_commit("kvfit-test/big-vocab", {"big-Q8_0.gguf": big})
    monkeypatch.setattr(gguf_header, "FIRST_READ_BYTES", 16 * 1024)
    meta = resolve(parse_reference(f"hf://kvfit-test/big-vocab@{sha}/big-Q8_0.gguf"))
    assert meta.config["vocab_size"] == 20_000
    ranges = [h.range for h in hub.state.log if h.kind == "resolve"]
    assert ranges[0] == "bytes=0-16383" and len(ranges) >= 3


def test_remote_gguf_header_over_the_cap_is_refused(hub, monkeypatch):
    big = gguf_bytes("qwen3", gguf_kv(vocab=20_000), gguf_tensors())
    hub.state.add_commit("kvfit-test/big-vocab", {"big-Q8_0.gguf": big})
    monkeypatch.setattr(gguf_header, "FIRST_READ_BYTES", 16 * 1024)
    monkeypatch.setattr(gguf_header, "MAX_PREFIX_BYTES", 64 * 1024)
    with pytest.raises(ConfigError, match="larger than 65,536 bytes"):
        resolve(parse_reference("hf://kvfit-test/big-vocab/big-Q8_0.gguf"))


def test_per_layer_kv_heads_that_vary_are_rejected(tmp_path):
    kv = {**gguf_kv(), "qwen3.attention.head_count_kv": [2, 2, 1, 1]}
    (tmp_path / "v.gguf").write_bytes(gguf_bytes("qwen3", kv, {"w": np.zeros(4, np.float32)}))
    with pytest.raises(ConfigError, match="varies per layer"):
        resolve(parse_reference(str(tmp_path / "v.gguf")))
