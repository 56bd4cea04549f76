"""Import on first use: a plan that needs no Hub (a local or --offline plan) loads neither
huggingface_hub's HTTP stack nor its API module; a Hub plan uses the library's session.
A plan process is inspected, not timed."""

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
print(json.dumps(sorted(m for m in ("huggingface_hub.hf_api", "httpx2", "httpcore2")
                        if m in sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def _loaded(args: list[str], env: dict) -> tuple[int, list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stderr.strip().splitlines()[-1])


def test_an_offline_plan_loads_no_http_stack(tmp_path):
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HOME=str(tmp_path / "hf"),
               HF_ENDPOINT="http://127.0.0.1:9")
    _, loaded = _loaded(["openai/gpt-oss-20b", "--hardware", "rtx-5090-32", "--context", "128k",
                         "--offline"], env)
    assert loaded == []


def test_a_hub_plan_goes_through_the_librarys_session(hub, tmp_path):
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_DISABLE_TELEMETRY="1")
    _, loaded = _loaded(["kvfit-test/tiny-qwen3", "--context", "4k", "--hardware", "h100-80",
                         "--json"], env)
    assert "httpx2" in loaded and len(hub.state.log) == 2


@pytest.mark.parametrize("path,revision", [
    ("config.json", "0" * 40), ("sub dir/w eights#1.safetensors", "main"),
    ("original/consolidated.safetensors", "refs/pr/1"), ("ünï/cödé?.json", "v1.0"),
])
def test_file_urls_are_hf_hub_urls(path, revision):
    endpoint = "http://127.0.0.1:9"
    assert file_url(endpoint, "org/name", revision, path) == hf_hub_url(
        "org/name", path, revision=revision, endpoint=endpoint)


WARM_PROBE = """
import json, sys
from kvfit.cli.main import main
code = main(sys.argv[1:])
print(json.dumps(sorted(m for m in ("tempfile", "kvfit.atomic",
                                    "kvfit.hub.safetensors_header") if m in sys.modules)),
      file=sys.stderr)
sys.exit(code)
"""


def test_a_warm_branch_plan_writes_nothing_and_reads_no_weight_header(hub, tmp_path):
    """The second plan on an unmoved branch re-resolves it (one request) and finds the cached
    snapshot: the ref file already names that commit, so nothing is written (kvfit.atomic is
    not loaded), and no safetensors header reader is needed."""
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_DISABLE_TELEMETRY="1")
    args = ["kvfit-test/tiny-qwen3", "--context", "4k", "--hardware", "h100-80", "--json"]
    runs = []
    for _ in range(2):
        hub.state.log.clear()
        proc = subprocess.run([sys.executable, "-c", WARM_PROBE, *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        loaded = json.loads(proc.stderr.strip().splitlines()[-1])
        runs.append((len(hub.state.log), "kvfit.atomic" in loaded,
                     "kvfit.hub.safetensors_header" in loaded))
    assert runs[0] == (2, True, False)            # cold: listing + config, cached
    assert runs[1] == (1, False, False)           # warm: the branch, nothing else
