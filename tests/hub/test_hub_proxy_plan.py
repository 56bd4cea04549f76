"""A whole `kvfit MODEL --hardware ...` plan from the Hub through a proxy on 127.0.0.1, as a
user behind a corporate proxy runs it: HTTP_PROXY forwarding for an http:// endpoint, and
HTTPS_PROXY with CONNECT tunnels to an https:// endpoint whose certificate a test CA signed
(SSL_CERT_FILE). The proxy variables are huggingface_hub's session's (httpx2) to read; NO_PROXY
is cleared so that 127.0.0.1 and localhost are not let past the proxy, and each test checks
the proxy saw every request the hub answered. A GGUF plan reads its header from the CDN
origin (localhost, not 127.0.0.1) after a redirect: the token goes to the Hub only."""

from __future__ import annotations

import json

import pytest
from hubserver import HubServer
from hubserver.proxy import ForwardingProxy
from hubserver.repos import GOOD_TOKEN, build_standard_hub
from hubserver.server import TEST_CA

from conftest import run_cli

_PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
              "NO_PROXY", "no_proxy")
GATED = "kvfit-test/gated"                     # answers only with the token
GGUF = "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf"


def _no_proxy_settings(env) -> None:
    for name in _PROXY_ENV:
        env.delenv(name, raising=False)


@pytest.fixture
def tls_hub(hub_env):
    """The standard test hub over HTTPS; the client trusts the test CA through SSL_CERT_FILE."""
    server = HubServer(tls=True)
    build_standard_hub(server.state)
    server.start()
    hub_env.setenv("HF_ENDPOINT", server.url)
    hub_env.setenv("SSL_CERT_FILE", str(TEST_CA))
    hub_env.delenv("SSL_CERT_DIR", raising=False)
    yield server
    server.stop()


@pytest.fixture
def proxy():
    server = ForwardingProxy(tunnel=True).start()
    yield server
    server.stop()


def _plan(model: str) -> dict:
    code, out, err = run_cli(model, "--hardware", "h100-80", "--context", "4k", "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_plan_goes_through_http_proxy(hub, hub_env, proxy):
    _no_proxy_settings(hub_env)
    hub_env.setenv("HTTP_PROXY", proxy.url)
    hub_env.setenv("HF_TOKEN", GOOD_TOKEN)
    report = _plan(GATED)
    assert report["model"]["revision"] == hub.state.repos[GATED].refs["main"]
    kinds = [h.kind for h in hub.state.log]
    assert kinds == ["api", "resolve"] and all(h.authorized for h in hub.state.log)
    # both went through the proxy, as absolute URLs, with the token
    base = f"http://127.0.0.1:{hub.port}"
    assert [(url.split("?")[0], auth) for url, auth in proxy.log] == [
        (f"{base}/api/models/{GATED}", True),
        (f"{base}/{GATED}/resolve/{report['model']['revision']}/config.json", True)]


def test_a_gguf_plan_through_http_proxy_drops_the_token_at_the_cdn(hub, hub_env, proxy):
    _no_proxy_settings(hub_env)
    hub_env.setenv("HTTP_PROXY", proxy.url)
    hub_env.setenv("HF_TOKEN", GOOD_TOKEN)
    _plan(GGUF)
    assert [h.kind for h in hub.state.log] == ["resolve", "cdn"]
    # the resolve answer redirects to another origin (localhost): the library's session
    # follows it without the Authorization header
    assert [(url.split("/")[2], auth) for url, auth in proxy.log] == [
        (f"127.0.0.1:{hub.port}", True), (f"localhost:{hub.port}", False)]


def test_a_plan_goes_through_https_proxy_to_a_tls_endpoint(tls_hub, hub_env, proxy,
                                                           closed_port):
    _no_proxy_settings(hub_env)
    hub_env.setenv("HTTPS_PROXY", proxy.url)
    hub_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")  # not for https:// URLs
    hub_env.setenv("HF_TOKEN", GOOD_TOKEN)
    report = _plan(GATED)
    assert report["model"]["revision"] == tls_hub.state.repos[GATED].refs["main"]
    # the plan's requests were sent inside one tunnel (a kept-alive connection) or more; the
    # proxy saw only CONNECT, never a URL or the token
    assert [h.kind for h in tls_hub.state.log] == ["api", "resolve"]
    assert all(h.authorized for h in tls_hub.state.log)
    assert proxy.log and set(proxy.log) == {(f"CONNECT 127.0.0.1:{tls_hub.port}", False)}


def test_a_gguf_plan_through_https_proxy_drops_the_token_at_the_cdn(tls_hub, hub_env, proxy):
    _no_proxy_settings(hub_env)
    hub_env.setenv("HTTPS_PROXY", proxy.url)
    hub_env.setenv("HF_TOKEN", GOOD_TOKEN)
    _plan(GGUF)
    assert [(h.kind, h.authorized) for h in tls_hub.state.log] == [("resolve", True),
                                                                    ("cdn", False)]
    assert [entry for entry, _ in proxy.log] == [f"CONNECT 127.0.0.1:{tls_hub.port}",
                                                 f"CONNECT localhost:{tls_hub.port}"]


def test_without_the_test_ca_the_tls_endpoint_is_refused(tls_hub, hub_env, proxy):
    # TLS is verified through the proxy too: an unknown CA ends the plan with one paragraph
    _no_proxy_settings(hub_env)
    hub_env.setenv("HTTPS_PROXY", proxy.url)
    hub_env.delenv("SSL_CERT_FILE")
    code, out, err = run_cli(GATED, "--hardware", "h100-80", "--context", "4k")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert f"https://127.0.0.1:{tls_hub.port}" in err and "SSL_CERT_FILE" in err
    assert proxy.log and tls_hub.state.count() == 0
