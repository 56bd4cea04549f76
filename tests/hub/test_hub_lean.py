"""The Hub path loads only huggingface_hub's constants: no hf_api (ModelInfo), no file_download,
and no httpx2 session (its import is most of a Hub plan's start-up; kvfit.hub.http_get does
the few GETs with http.client). A plan process is inspected, not timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from huggingface_hub import hf_hub_url

from kvfit.hub.transport import file_url

PROBE = """
import json, sys
from kvfit.cli.main import main
code = main(sys.argv[1:])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
                        ("huggingface_hub", "httpx2", "httpcore2", "h11", "anyio", "yaml"))),
      file=sys.stderr)
sys.exit(code)
"""


def test_a_hub_plan_imports_only_the_librarys_constants(hub, tmp_path):
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_DISABLE_TELEMETRY="1")
    proc = subprocess.run([sys.executable, "-c", PROBE, "kvfit-test/tiny-qwen3", "--context",
                           "4k", "--hardware", "h100-80", "--json"], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["model"]["origin"] == "hub" and len(hub.state.log) == 2
    loaded = json.loads(proc.stderr.strip().splitlines()[-1])
    assert loaded == ["huggingface_hub", "huggingface_hub.constants"]


@pytest.mark.parametrize("path,revision", [
    ("config.json", "0" * 40), ("sub dir/w eights#1.safetensors", "main"),
    ("original/consolidated.safetensors", "refs/pr/1"), ("ünï/cödé?.json", "v1.0"),
])
def test_file_urls_are_spelled_as_hf_hub_url_spells_them(path, revision):
    endpoint = "http://127.0.0.1:9"
    assert file_url(endpoint, "org/name", revision, path) == hf_hub_url(
        "org/name", path, revision=revision, endpoint=endpoint)


WARM_PROBE = """
import json, sys
from kvfit.cli.main import main
code = main(sys.argv[1:])
print(json.dumps(sorted(m for m in ("tempfile", "kvfit.atomic", "encodings.idna",
                                    "kvfit.hub.safetensors_header") if m in sys.modules)),
      file=sys.stderr)
sys.exit(code)
"""


def test_a_warm_branch_plan_writes_nothing_and_reads_no_weight_header(hub, tmp_path):
    """The second plan on an unmoved branch re-resolves it (one request) and finds the cached
    snapshot: the ref file already names that commit, so nothing is written (no temporary
    file machinery is loaded), and no safetensors header reader is needed. The test hub's
    ASCII host name is looked up as bytes, so the idna codec is not loaded either."""
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_DISABLE_TELEMETRY="1")
    args = ["kvfit-test/tiny-qwen3", "--context", "4k", "--hardware", "h100-80", "--json"]
    runs = []
    for _ in range(2):
        hub.state.log.clear()
        proc = subprocess.run([sys.executable, "-c", WARM_PROBE, *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        runs.append((len(hub.state.log), json.loads(proc.stderr.strip().splitlines()[-1])))
    # cold: listing + config, cached through kvfit.atomic (with tempfile)
    assert runs[0] == (2, ["kvfit.atomic", "tempfile"])
    assert runs[1] == (1, [])                                      # warm: the branch, nothing else


def test_an_ascii_host_is_looked_up_as_bytes_and_a_bad_label_is_a_connect_failure(hub):
    """http_get._create_connection: an ASCII host goes to getaddrinfo as its bytes (the same
    name the idna codec would give); a name that codec refuses (an empty label) is refused by
    the resolver as an OSError, which _connect reports as ConnectFailed, not a UnicodeError."""
    from kvfit.hub import http_get

    host, port = hub.url.removeprefix("http://").split(":")
    sock = http_get._create_connection((host, int(port)), 5.0)
    try:
        assert sock.getpeername() == (host, int(port))
    finally:
        sock.close()
    with pytest.raises(http_get.ConnectFailed):
        http_get.Connections().get("http://a..b:1/x", {}, 5.0)
