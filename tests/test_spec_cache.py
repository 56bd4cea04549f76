"""The validated-spec cache: hits skip parsing, edits miss, bad entries are discarded and
revalidated, the shipped data answers a first run, and KVFIT_CACHE_DIR=off creates nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from kvfit.cli import ship
from kvfit.engines import spec as engine_spec
from kvfit.hub.cache import MetadataCache, cache_root
from kvfit.specs import cache, checked
from kvfit.specs.registry import load_architecture_file

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
QWEN3 = ROOT / "specs" / "architectures" / "qwen3.yaml"
QWEN_CFG = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
ARCH = "architecture.v1.schema.json"


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    """A private user cache and no shipped data: every spec goes through parse + validate."""
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(cache, "SHIPPED", tmp_path / "no-shipped.json")
    cache.shipped.cache_clear()
    yield tmp_path / "c" / "specs"
    cache.shipped.cache_clear()


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _no_parsing(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("the spec was parsed although its validated data was cached")
    monkeypatch.setattr(checked, "load_file", refuse)


def test_cache_round_trip_and_miss_on_edit(user_cache, tmp_path, monkeypatch):
    arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems
    assert len(_entries(user_cache)) == 1
    with monkeypatch.context() as m:
        _no_parsing(m)
        again, _ = load_architecture_file(QWEN3)
    assert again.fields.keys() == arch.fields.keys()
    edited = tmp_path / "qwen3.yaml"
    shutil.copyfile(QWEN3, edited)
    edited.write_text(edited.read_text().replace("kv_heads * head_dim * kv_bytes",
                                                 "kv_head * head_dim * kv_bytes", 1))
    broken, problems = load_architecture_file(edited)
    assert broken is None and problems[0].code == "KV201"
    assert len(_entries(user_cache)) == 1                  # failures not cached


def test_corrupt_entry_is_ignored(user_cache):
    key = cache.key(QWEN3.read_bytes(), ARCH)
    user_cache.mkdir(parents=True)
    (user_cache / f"{key}.json").write_text("{not json")
    arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems
    assert json.loads((user_cache / f"{key}.json").read_text())["key"] == key   # rewritten


@pytest.mark.parametrize("junk", [[], 5, {"format": 2}, {"format": 2, "data": {"id": "x"}},
                                  {"format": 1, "data": {}}, {"format": 2, "key": "k",
                                                              "sha256": 7, "data": {}}])
def test_entry_of_the_wrong_shape_is_discarded_not_fatal(user_cache, junk):
    key = cache.key(QWEN3.read_bytes(), ARCH)
    user_cache.mkdir(parents=True)
    (user_cache / f"{key}.json").write_text(json.dumps(junk))
    assert cache.get(key) is None
    assert not (user_cache / f"{key}.json").exists()
    arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems
    assert cache.get(key) is not None


def test_edited_expression_in_a_cached_spec_is_not_trusted(user_cache):
    arch, _ = load_architecture_file(QWEN3)
    key = cache.key(QWEN3.read_bytes(), ARCH)
    path = user_cache / f"{key}.json"
    text = path.read_text()
    assert "kv_heads * head_dim * kv_bytes" in text
    path.write_text(text.replace("kv_heads * head_dim * kv_bytes",
                                 "kv_heads * head_dim * kv_bytes * 1000", 1))
    assert cache.get(key) is None                          # checksum of the validated form
    again, problems = load_architecture_file(QWEN3)
    assert not problems
    texts = [c.bytes.text for c in arch.components]
    assert [c.bytes.text for c in again.components] == texts   # the YAML's, not the edit
    assert not any("1000" in t for t in texts)
    assert "* 1000" not in path.read_text()


def test_shipped_data_answers_without_parsing_and_bad_shipped_entries_are_ignored(
        user_cache, tmp_path, monkeypatch):
    load_architecture_file(QWEN3)
    key = cache.key(QWEN3.read_bytes(), ARCH)
    good = json.loads((user_cache / f"{key}.json").read_text())
    shutil.rmtree(user_cache)
    shipped = tmp_path / "shipped.json"
    shipped.write_text(json.dumps({"format": cache.FORMAT, "entries": {key: good}}))
    monkeypatch.setattr(cache, "SHIPPED", shipped)
    cache.shipped.cache_clear()
    with monkeypatch.context() as m:
        _no_parsing(m)
        arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems
    assert not user_cache.exists()                        # nothing written on a first run
    tampered = dict(good, data=dict(good["data"], summary="edited"))
    shipped.write_text(json.dumps({"format": cache.FORMAT, "entries": {key: tampered}}))
    cache.shipped.cache_clear()
    arch, problems = load_architecture_file(QWEN3)
    assert arch.summary != "edited" and not problems
    assert len(_entries(user_cache)) == 1                 # revalidated into the user cache


def test_one_file_checksum_stands_for_the_entries_until_the_file_is_edited(
        user_cache, tmp_path, monkeypatch):
    """ship.render writes the sha256 of the entries into the first line: with it intact the
    entries are used as they are; an entry edited afterwards breaks it, and then each entry's
    own checksum decides (the edited one is revalidated from the YAML)."""
    load_architecture_file(QWEN3)
    key = cache.key(QWEN3.read_bytes(), ARCH)
    good = json.loads((user_cache / f"{key}.json").read_text())
    shutil.rmtree(user_cache)
    shipped = tmp_path / "shipped.json"
    text = ship.render({"format": cache.FORMAT, "entries": {key: good}})
    shipped.write_text(text)
    monkeypatch.setattr(cache, "SHIPPED", shipped)
    cache.shipped.cache_clear()
    assert cache.shipped()[1] is True
    with monkeypatch.context() as m:
        _no_parsing(m)
        arch, problems = load_architecture_file(QWEN3)
    assert arch is not None and not problems and not user_cache.exists()
    shipped.write_text(text.replace(json.dumps(good["data"]["summary"]),
                                    json.dumps("edited"), 1))
    cache.shipped.cache_clear()
    assert cache.shipped()[1] is False
    arch, problems = load_architecture_file(QWEN3)
    assert arch.summary != "edited" and not problems
    assert len(_entries(user_cache)) == 1                 # revalidated into the user cache


def test_committed_shipped_data_is_well_formed():
    doc = json.loads(cache.SHIPPED.read_text(encoding="utf-8"))
    assert doc["format"] == cache.FORMAT and doc["entries"]
    for key, entry in doc["entries"].items():
        assert cache._trusted(key, entry)[0], key


def test_ship_builds_every_bundled_spec_from_the_yaml(monkeypatch, tmp_path):
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "unused"))
    monkeypatch.setattr(cache, "SHIPPED", cache.SHIPPED)
    bundle = ship.build()
    cache.shipped.cache_clear()
    keys = set(bundle["entries"])
    assert cache.key(QWEN3.read_bytes(), ARCH) in keys
    vllm = (ROOT / "specs" / "engines" / "vllm.yaml").read_bytes()
    assert cache.key(vllm, "engine.v1.schema.json") in keys               # --engine
    assert cache.key(vllm, "engine.v1.schema.json", True) in keys         # specs check
    yamls = [p for p in (ROOT / "specs").rglob("*.yaml") if p.name != "_template.yaml"]
    assert len(keys) >= len(yamls)
    text = ship.render(bundle)
    rendered = json.loads(text)
    assert rendered.pop("sha256") == hashlib.sha256(text.partition("\n")[2].encode()).hexdigest()
    assert rendered == bundle
    shipped = tmp_path / "shipped.json"
    ship.write(shipped, text)
    assert ship.stale(shipped, text) is None
    shipped.write_text(json.dumps({"format": cache.FORMAT, "entries": {"gone": {}}}))
    assert ship.stale(shipped, text) == (len(keys), 1)
    assert all(cache._trusted(k, e)[0] for k, e in bundle["entries"].items())


def test_engine_spec_goes_through_the_cache(user_cache, monkeypatch):
    engine_spec.load_spec.cache_clear()
    first = engine_spec.load_spec("vllm")
    assert len(_entries(user_cache)) == 1
    engine_spec.load_spec.cache_clear()
    with monkeypatch.context() as m:
        _no_parsing(m)
        assert engine_spec.load_spec("vllm") == first
    engine_spec.load_spec.cache_clear()


def test_cache_off_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KVFIT_CACHE_DIR", "off")
    monkeypatch.setattr(cache, "SHIPPED", tmp_path / "no-shipped.json")
    cache.shipped.cache_clear()
    try:
        assert cache.cache_dir() is None
        assert load_architecture_file(QWEN3)[0] is not None
        code, out, err = run_cli(QWEN_CFG, "--context", "32k")
        assert code == 5 and "Traceback" not in err      # state only: not judged
        store = MetadataCache()
        store.save("org/name", "a" * 40, "config", {"x": 1})
        store.remember_ref("org/name", "main", "a" * 40)
        assert store.load("org/name", "a" * 40, "config") is None
        assert store.recall_ref("org/name", "main") is None
        assert str(cache_root()).startswith(os.devnull)
    finally:
        cache.shipped.cache_clear()
    assert list(tmp_path.iterdir()) == []


def test_unwritable_cache_still_loads(tmp_path, monkeypatch, user_cache):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(blocker))      # a file, not a folder
    assert load_architecture_file(QWEN3)[0] is not None
    assert blocker.read_text() == "x"
    assert not list(tmp_path.glob("**/.tmp-*"))


@pytest.mark.parametrize("where", ["empty", "off"])
def test_a_cold_run_parses_each_spec_once(where, user_cache, monkeypatch):
    from kvfit.specs import registry

    if where == "off":
        monkeypatch.setenv("KVFIT_CACHE_DIR", "off")
    parsed = []
    real = checked.load_file
    monkeypatch.setattr(checked, "load_file", lambda path, *a: parsed.append(path) or real(path, *a))
    for memo in (registry.builtin_matchers, registry.builtin_architecture):
        memo.cache_clear()
    monkeypatch.setattr(registry, "_compiled", {})
    try:
        registry.builtin_matchers()
        arch = registry.builtin_architecture("qwen3")
    finally:
        for memo in (registry.builtin_matchers, registry.builtin_architecture):
            memo.cache_clear()
    assert arch.id == "qwen3"
    assert sorted(parsed) == registry.spec_files()          # every spec, each exactly once
