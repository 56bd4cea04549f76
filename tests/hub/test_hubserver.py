"""The test hub itself speaks what huggingface_hub expects (checked with the library)."""

from __future__ import annotations

import httpx2
from hubserver import Blob
from huggingface_hub import HfApi, hf_hub_download, hf_hub_url


def test_model_info_with_file_sizes(hub):
    info = HfApi(endpoint=hub.url).model_info("kvfit-test/tiny-gguf", files_metadata=True)
    sizes = {s.rfilename: (s.size, s.lfs is not None) for s in info.siblings}
    assert sizes["README.md"] == (12, False)
    assert sizes["tiny-Q8_0.gguf"][1] is True
    assert len(info.sha) == 40


def test_hf_hub_download_at_a_sha_uses_the_hf_cache(hub, tmp_path):
    sha = hub.state.repos["kvfit-test/tiny-qwen3"].refs["main"]
    kwargs = {"revision": sha, "endpoint": hub.url, "cache_dir": tmp_path}
    first = hf_hub_download("kvfit-test/tiny-qwen3", "config.json", **kwargs)
    count = hub.state.count()
    second = hf_hub_download("kvfit-test/tiny-qwen3", "config.json", **kwargs)
    assert first == second and hub.state.count() == count  # served from the cache
    lfs = hf_hub_download("kvfit-test/tiny-qwen3", "consolidated.safetensors", **kwargs)
    assert open(lfs, "rb").read(8) == hub.state.repos["kvfit-test/tiny-qwen3"].commits[sha][
        "consolidated.safetensors"].data[:8]


def test_ranges_heads_and_headers(hub):
    hub.state.add_commit("kvfit-test/huge", {"w.safetensors": Blob(b"abc", 70 * 2**30)})
    url = hf_hub_url("kvfit-test/huge", "w.safetensors", endpoint=hub.url)
    head = httpx2.head(url)
    assert head.status_code == 302 and head.headers["X-Linked-Size"] == str(70 * 2**30)
    assert len(head.headers["X-Repo-Commit"]) == 40
    part = httpx2.get(url, headers={"Range": "bytes=1-4"}, follow_redirects=True)
    assert part.status_code == 206 and part.content == b"bc\0\0"
    assert part.headers["Content-Range"] == f"bytes 1-4/{70 * 2**30}"
    beyond = httpx2.get(url, headers={"Range": f"bytes={80 * 2**30}-"}, follow_redirects=True)
    assert beyond.status_code == 416
    small = httpx2.get(hf_hub_url("kvfit-test/tiny-gguf", "README.md", endpoint=hub.url))
    assert small.headers["ETag"].startswith('"') and small.content == b"# tiny gguf\n"


def test_moving_branches_and_request_log(hub):
    old = hub.state.repos["kvfit-test/moving"].refs["main"]
    hub.state.move_ref("kvfit-test/moving", "main", "2" * 40)
    assert HfApi(endpoint=hub.url).model_info("kvfit-test/moving").sha == "2" * 40
    assert old == "1" * 40
    assert hub.state.count(kind="api", repo="kvfit-test/moving") == 1
