"""Request counts for cold and warm plans (counts only; timing lives in bench/hub_requests.py)."""

from __future__ import annotations

import os

from kvfit.hub import parse_reference, resolve


def _plan(hub, text: str, **kwargs):
    hub.state.log.clear()
    meta = resolve(parse_reference(text), **kwargs)
    return meta, [(h.kind, h.path) for h in hub.state.log]


def test_cold_plan_reads_info_and_config(hub):
    # the root shards model-00001/00002-of-00002 are one complete set with listed sizes: the
    # index could not change the weight count, so it is not read (snapshot.py)
    meta, hits = _plan(hub, "kvfit-test/tiny-qwen3")
    assert hits == [("api", None), ("resolve", "config.json")]
    assert meta.safetensors_index is None
    assert any(n.startswith("model.safetensors.index.json not read: the root shards are one "
                            "complete set (model-00001..00002-of-00002.safetensors)")
               for n in meta.notes)


def test_cold_plan_with_quant_config_is_three_requests(hub):
    _, hits = _plan(hub, "kvfit-test/quantized")
    assert hits == [("api", None), ("resolve", "config.json"),
                    ("resolve", "hf_quant_config.json")]


def test_the_index_is_read_when_it_decides_the_weights(hub):
    # a stale single-file upload next to a 2-shard set: only the index says which root files
    # are the weights, so the cold plan reads it (3 requests) and counts its shards only
    files = dict(hub.state.repos["kvfit-test/tiny-qwen3"].commits[_sha(hub)])
    files["model.safetensors"] = files["consolidated.safetensors"]
    hub.state.add_commit("kvfit-test/stale-single", files)
    meta, hits = _plan(hub, "kvfit-test/stale-single")
    assert hits == [("api", None), ("resolve", "config.json"),
                    ("resolve", "model.safetensors.index.json")]
    from kvfit.checkpoint.weights import count_weights
    shards = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    assert count_weights(meta, None).bytes == sum(files[p].size for p in shards)


def _sha(hub) -> str:
    return hub.state.repos["kvfit-test/tiny-qwen3"].refs["main"]


def test_warm_plan_on_a_branch_makes_exactly_one_request(hub):
    _plan(hub, "kvfit-test/tiny-qwen3")
    _, hits = _plan(hub, "kvfit-test/tiny-qwen3@main")  # @main and default share the sha cache
    assert hits == [("api", None)]


def test_warm_plan_pinned_to_a_full_sha_makes_none(hub):
    meta, _ = _plan(hub, "kvfit-test/tiny-qwen3")
    again, hits = _plan(hub, f"kvfit-test/tiny-qwen3@{meta.revision}")
    assert hits == []
    assert again.config == meta.config and again.files == meta.files


def test_headers_only_on_demand_and_cached(hub):
    meta, cold = _plan(hub, "kvfit-test/tiny-qwen3", read_headers=True)
    shard_reads = [h for h in cold if h[0] == "resolve" and h[1].endswith(".safetensors")]
    assert len(shard_reads) == 2  # one ranged read per served shard, none for other copies
    assert len([h for h in cold if h[0] == "cdn"]) == 2  # each LFS read follows one redirect
    _, warm = _plan(hub, f"kvfit-test/tiny-qwen3@{meta.revision}", read_headers=True)
    assert warm == []


def test_gguf_artifact_cold_and_warm(hub):
    # one GGUF file: its first ranged read (the resolve redirect, then the CDN) names the commit
    # (X-Repo-Commit) and size (X-Linked-Size), so no repo-info call: 2 requests cold
    text = "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf"
    meta, cold = _plan(hub, text)
    assert cold == [("resolve", "tiny-Q8_0.gguf"), ("cdn", cold[1][1])]
    served = hub.state.repos["kvfit-test/tiny-gguf"].commits[meta.revision]["tiny-Q8_0.gguf"]
    assert meta.revision == hub.state.repos["kvfit-test/tiny-gguf"].refs["main"]
    assert [(f.path, f.size) for f in meta.files] == [("tiny-Q8_0.gguf", served.size)]
    assert any("from the Hub's answer to reading it (X-Repo-Commit" in n for n in meta.notes)
    _, pinned = _plan(hub, f"hf://kvfit-test/tiny-gguf@{meta.revision}/tiny-Q8_0.gguf")
    assert pinned == []
    again, branch = _plan(hub, text)                       # a warm branch: one repo-info call
    assert branch == [("api", None)] and again.config == meta.config


def test_a_cached_gguf_artifact_answers_offline(hub, monkeypatch):
    meta, _ = _plan(hub, "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    again, hits = _plan(hub, "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")
    assert hits == [] and again.revision == meta.revision and again.config == meta.config
    assert any(n.startswith("answered from kvfit's metadata cache") for n in again.notes)


def test_gguf_artifact_on_a_moved_branch_is_read_at_the_new_commit(hub):
    meta, _ = _plan(hub, "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")
    files = dict(hub.state.repos["kvfit-test/tiny-gguf"].commits[meta.revision])
    files["README.md"] = b"# moved\n"
    new = hub.state.add_commit("kvfit-test/tiny-gguf", files)
    moved, hits = _plan(hub, "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")
    assert moved.revision == new != meta.revision
    assert hits[0] == ("api", None) and ("resolve", "tiny-Q8_0.gguf") in hits


def test_gguf_artifact_without_a_commit_header_is_read_the_listing_way(hub, monkeypatch):
    from kvfit.hub import transport
    monkeypatch.setattr(transport, "_commit_of", lambda hops: None)   # a mirror that omits it
    meta, hits = _plan(hub, "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")
    assert [h for h in hits if h[0] != "cdn"] == [("resolve", "tiny-Q8_0.gguf"), ("api", None),
                                                  ("resolve", "tiny-Q8_0.gguf")]
    assert meta.revision == hub.state.repos["kvfit-test/tiny-gguf"].refs["main"]


def test_metadata_cache_lives_under_hf_home_or_kvfit_cache_dir(hub, tmp_path, monkeypatch):
    meta, _ = _plan(hub, "kvfit-test/tiny-qwen3")
    cached = tmp_path / "hf-home" / "kvfit" / "kvfit-test--tiny-qwen3" / meta.revision
    assert (cached / "snapshot.json").is_file()
    assert os.environ["HF_HOME"] == str(tmp_path / "hf-home")
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "elsewhere"))
    _, hits = _plan(hub, f"kvfit-test/tiny-qwen3@{meta.revision}")
    assert len(hits) == 2  # a new, empty cache: cold again (repo info, config.json)
    assert (tmp_path / "elsewhere" / "kvfit-test--tiny-qwen3" / meta.revision).is_dir()


def test_corrupt_cache_entries_are_ignored(hub, tmp_path):
    meta, _ = _plan(hub, "kvfit-test/tiny-qwen3")
    cached = tmp_path / "hf-home" / "kvfit" / "kvfit-test--tiny-qwen3" / meta.revision
    (cached / "snapshot.json").write_text("{not json")
    again, hits = _plan(hub, f"kvfit-test/tiny-qwen3@{meta.revision}")
    assert again.config == meta.config and len(hits) == 2
