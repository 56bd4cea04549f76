"""Cache entries that are valid JSON of the wrong shape are discarded and refetched, never
fatal; temporary files are removed on every failure path."""

from __future__ import annotations

import errno
import json

import pytest

from kvfit.hub import cache as cache_mod
from kvfit.hub.cache import MetadataCache

from conftest import run_cli

REPO = "kvfit-test/tiny-qwen3"


def _entries(tmp_path, pattern: str):
    return sorted((tmp_path / "hf-home" / "kvfit").rglob(pattern))


@pytest.mark.parametrize("data", [
    {"files": "oops", "config": None, "quant_config": None, "index": None},
    {"files": [["config.json", -5]], "config": {}, "quant_config": None, "index": None},
    {"files": [["config.json", 10]], "config": [1, 2], "quant_config": None, "index": None},
    [1, 2, 3],
    "just a string",
])
def test_wrong_shaped_snapshot_is_discarded_and_refetched(hub, tmp_path, data):
    sha = hub.state.repos[REPO].refs["main"]
    code, first, err = run_cli(f"{REPO}@{sha}", "--context", "1k", "--json")
    assert code in (0, 1, 5), err
    (entry,) = _entries(tmp_path, "snapshot.json")
    entry.write_text(json.dumps({"format": 1, "data": data}))
    before = hub.state.count(kind="api")
    code, again, err = run_cli(f"{REPO}@{sha}", "--context", "1k", "--json")
    assert code in (0, 1, 5), err
    assert json.loads(again)["state"] == json.loads(first)["state"]
    assert hub.state.count(kind="api") == before + 1          # refetched, not trusted
    assert json.loads(entry.read_text())["data"]["files"] != data


def test_wrong_shaped_header_entry_is_reread(hub, tmp_path):
    sha = hub.state.repos[REPO].refs["main"]
    args = (f"{REPO}@{sha}", "--context", "1k", "--verify-headers", "--json")
    code, first, err = run_cli(*args)
    assert code in (0, 1, 5), err
    bad = _entries(tmp_path, "st%3A*.json")
    assert bad
    for entry in bad:
        entry.write_text(json.dumps({"format": 1, "data": {"w": ["BF16", [2], -1]}}))
    code, again, err = run_cli(*args)
    assert code in (0, 1, 5), err
    assert json.loads(again)["headers"] == json.loads(first)["headers"]


def test_offline_with_a_wrong_shaped_entry_is_a_clean_error(hub, hub_env, tmp_path):
    code, _, _ = run_cli(REPO, "--context", "1k")
    assert code in (0, 1, 5)
    (entry,) = _entries(tmp_path, "snapshot.json")
    entry.write_text(json.dumps({"format": 1, "data": {"files": 7}}))
    hub_env.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = run_cli(REPO, "--context", "1k")
    assert code == 2 and out == ""
    assert "is neither in kvfit's offline catalog nor in its metadata cache" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_ref_that_is_not_a_sha_is_ignored(tmp_path):
    cache = MetadataCache(tmp_path)
    cache.remember_ref("a/b", "main", "g" * 40)
    assert cache.recall_ref("a/b", "main") is None
    cache.remember_ref("a/b", "main", "0123456789abcdef" * 2 + "01234567")
    assert cache.recall_ref("a/b", "main") == "0123456789abcdef" * 2 + "01234567"


def _tmp_files(root):
    return [p for p in root.rglob(".tmp-*")]


def test_a_full_disk_leaves_no_temporary_files(tmp_path, monkeypatch):
    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(cache_mod.os, "replace", full)
    cache = MetadataCache(tmp_path)
    cache.save("a/b", "0" * 40, "snapshot", {"files": []})
    cache.remember_ref("a/b", "main", "0" * 40)
    assert _tmp_files(tmp_path) == []
    assert cache.load("a/b", "0" * 40, "snapshot") is None


def test_an_interrupt_mid_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(cache_mod.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        MetadataCache(tmp_path).save("a/b", "0" * 40, "snapshot", {"files": []})
    assert _tmp_files(tmp_path) == []
