"""A hostile HTTP server suite: whatever a server (or a proxy) answers, a plan through
huggingface_hub's session ends with exit 2 and one paragraph - never a traceback, never an
internal error (70) - within the --timeout budget and in bounded memory, and the token never
reaches another origin or any output.

Each case runs a plan process against a raw server on 127.0.0.1 (tests/hubserver/hostile.py).
Endless and dripping answers never finish, so the only possible ending is a cap or the
--timeout deadline; nothing here asserts elapsed time (bench/hub_hostile.py prints it). The
watchdog only turns a hang into a failure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hubserver import hostile

TOKEN = "hf_hostileSuiteToken42"
MAX_RSS_MIB = 512
TARGETS = {"repo": "kvfit-test/hostile", "gguf": "hf://kvfit-test/hostile/model-Q8_0.gguf"}


def _refused_cleanly(code: int, out: str, err: str, rss: float) -> None:
    assert code == 2, (code, out, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("kvfit: "), err
    assert "Traceback" not in err and TOKEN not in err and "Bearer" not in err
    assert rss < MAX_RSS_MIB, rss


@pytest.mark.parametrize("name", sorted(hostile.SCRIPTS))
def test_a_hostile_answer_ends_in_one_paragraph(name):
    script, kind = hostile.SCRIPTS[name]
    server = hostile.RawServer(script).start()
    try:
        code, out, err, _, rss = hostile.run_plan(server.url, TARGETS[kind], token=TOKEN)
    finally:
        server.stop()
    _refused_cleanly(code, out, err, rss)
    assert server.requests                       # the plan did ask this server


@pytest.mark.parametrize("name", ["chunk size -1", "endless body (no length)", "slow drip",
                                  "huge header", "redirect loop"])
def test_a_hostile_proxy_ends_in_one_paragraph_too(name, closed_port):
    """The same answers from the proxy HTTP_PROXY names, in front of an endpoint that is
    never reached."""
    proxy = hostile.RawServer(hostile.SCRIPTS[name][0]).start()
    try:
        code, out, err, _, rss = hostile.run_plan(f"http://127.0.0.1:{closed_port}",
                                                  TARGETS["repo"], token=TOKEN, proxy=proxy.url)
    finally:
        proxy.stop()
    _refused_cleanly(code, out, err, rss)
    assert proxy.requests and all(h.startswith(b"GET http://127.0.0.1:") for h in proxy.requests)


def test_a_redirect_to_another_origin_drops_the_token():
    """httpx2 (huggingface_hub's session) strips Authorization when a redirect leaves the
    origin (httpx2/_client.py, Client._redirect_headers); here the Hub's answer sends every
    request to another port, which must never see the token."""
    other = hostile.RawServer(hostile.not_found).start()
    hub = hostile.RawServer(hostile.cross_origin)
    hub.other = other.url
    hub.start()
    try:
        code, out, err, _, rss = hostile.run_plan(hub.url, TARGETS["repo"], token=TOKEN)
    finally:
        hub.stop()
        other.stop()
    _refused_cleanly(code, out, err, rss)
    assert "was not found" in err
    assert hub.requests and all(f"Bearer {TOKEN}".encode() in h for h in hub.requests)
    assert other.requests and not any(b"authorization" in h.lower() or TOKEN.encode() in h
                                      for h in other.requests)


def test_an_endpoint_the_library_refuses_at_import_is_one_paragraph(tmp_path):
    """HF_ENDPOINT='http://[::1' makes importing huggingface_hub.constants raise ValueError."""
    env = dict(os.environ, HF_ENDPOINT="http://[::1", HF_HOME=str(tmp_path / "hf"),
               KVFIT_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "kvfit", "kvfit-test/hostile", "--context",
                           "1k", "--hardware", "h100-80"], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.count("\n") == 1 and "HF_ENDPOINT 'http://[::1' is not a URL" in proc.stderr
