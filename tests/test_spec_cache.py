"""The validated-spec cache: hits skip parsing, edits miss, junk entries are ignored."""

from __future__ import annotations

import shutil
from pathlib import Path

from kvfit.specs import cache
from kvfit.specs.registry import load_architecture_file

QWEN3 = Path(__file__).resolve().parents[1] / "specs" / "architectures" / "qwen3.yaml"


def test_cache_round_trip_and_miss_on_edit(tmp_path, monkeypatch):
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "c"))
    arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems
    entries = list((tmp_path / "c" / "specs").glob("*.json"))
    assert len(entries) == 1
    again, _ = load_architecture_file(QWEN3)
    assert again.fields.keys() == arch.fields.keys()
    edited = tmp_path / "qwen3.yaml"
    shutil.copyfile(QWEN3, edited)
    edited.write_text(edited.read_text().replace("kv_heads * head_dim * kv_bytes",
                                                 "kv_head * head_dim * kv_bytes", 1))
    broken, problems = load_architecture_file(edited)
    assert broken is None and problems[0].code == "KV201"
    assert len(list((tmp_path / "c" / "specs").glob("*.json"))) == 1   # failures not cached


def test_corrupt_entry_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path))
    key = cache.key(QWEN3.read_bytes(), "architecture.v1.schema.json")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / f"{key}.json").write_text("{not json")
    arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems


def test_cache_can_be_disabled_or_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv("KVFIT_CACHE_DIR", "off")
    assert cache.cache_dir() is None
    assert load_architecture_file(QWEN3)[0] is not None
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(blocker))      # a file, not a folder
    assert load_architecture_file(QWEN3)[0] is not None
