"""kvfit's Hub requests go through huggingface_hub: its headers and token, its session
(credentials kept off other origins, proxies from the environment), the error kinds
hf_raise_for_status tells apart, and the commit / size headers get_hf_file_metadata reads."""

from __future__ import annotations

import pytest
from hubserver import Fault
from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import _auth, build_hf_headers

from kvfit import __version__
from kvfit.errors import HubError
from kvfit.hub import parse_reference, resolve, transport

REPO = "kvfit-test/tiny-qwen3"


def _library_headers() -> dict:
    """huggingface_hub's own headers for kvfit, telemetry off (as kvfit always asks)."""
    return build_hf_headers(library_name="kvfit", library_version=__version__)


@pytest.fixture
def token_files(tmp_path, monkeypatch):
    """huggingface_hub's token file and stored-tokens file in tmp_path."""
    token, stored = tmp_path / "token", tmp_path / "stored_tokens"
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(token))
    monkeypatch.setattr(hf_constants, "HF_STORED_TOKENS_PATH", str(stored))
    monkeypatch.setattr(_auth, "_OAUTH_REFRESH_CACHE", None)
    return token, stored


@pytest.mark.parametrize("env,file_token", [
    ({}, None), ({"HF_TOKEN": " hf_env\n"}, None), ({"HUGGING_FACE_HUB_TOKEN": "hf_old"}, None),
    ({"HF_TOKEN": "hf_env", "HUGGING_FACE_HUB_TOKEN": "hf_old"}, "hf_file"),
    ({}, "hf_file\r\n"), ({}, "   "), ({"HF_TOKEN": ""}, "hf_file"),
])
def test_headers_are_the_librarys(hub_env, token_files, env, file_token):
    for name, value in env.items():
        hub_env.setenv(name, value)
    if file_token is not None:
        token_files[0].write_text(file_token)
    assert transport.hub_headers() == _library_headers()


def test_disable_implicit_token_sends_none(hub, hub_env, token_files):
    hub_env.setenv("HF_TOKEN", "hf_good")
    hub_env.setattr(hf_constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)
    assert "authorization" not in transport.hub_headers()
    resolve(parse_reference(REPO))
    assert hub.state.log and not any(h.authorized for h in hub.state.log)


def test_the_token_goes_to_the_hub_but_not_to_the_cdn(hub, hub_env):
    hub_env.setenv("HF_TOKEN", "hf_good")
    resolve(parse_reference(REPO), read_headers=True)
    hits = [h for h in hub.state.log if h.kind in ("api", "resolve", "cdn")]
    assert {h.kind for h in hits} == {"api", "resolve", "cdn"}
    # the CDN is another origin (localhost, not 127.0.0.1): the redirect drops the token
    assert all(h.authorized == (h.kind != "cdn") for h in hits)
    agent = f"kvfit/{__version__}; hf_hub/"
    assert all(h.user_agent.startswith(agent) for h in hits)


def test_an_endpoints_userinfo_is_sent_as_basic_auth(hub, hub_env):
    hub_env.setenv("HF_ENDPOINT", hub.url.replace("http://", "http://user:pw@"))
    resolve(parse_reference(REPO))
    assert all(h.authorized for h in hub.state.log)


def _fails(hub, status: int, message: str) -> HubError:
    hub.state.faults.append(Fault(kind="api", status=status, body=b"{}",
                                  headers={"X-Error-Message": message}))
    with pytest.raises(HubError) as info:
        resolve(parse_reference(REPO))
    return info.value


def test_an_invalid_token_is_not_reported_as_a_missing_repo(hub):
    # hf_raise_for_status: a 401 saying "Invalid credentials in Authorization header" is not
    # RepositoryNotFoundError (utils/_http.py)
    err = _fails(hub, 401, "Invalid credentials in Authorization header")
    assert "rejected the token in use as invalid" in err.message and "HTTP 401" in err.message


def test_a_disabled_repo_says_so(hub):
    err = _fails(hub, 403, "Access to this resource is disabled.")
    assert err.message == f"the Hub has disabled access to {REPO} (HTTP 403)."


def test_a_gzip_answer_is_decoded(hub):
    import gzip
    import json

    info = {"sha": "1" * 40, "siblings": [{"rfilename": "config.json", "size": 3}]}
    hub.state.faults.append(Fault(kind="api", body=gzip.compress(json.dumps(info).encode()),
                                  headers={"Content-Encoding": "gzip"}))
    from kvfit.hub.transport import HubClient

    with HubClient() as client:
        got = client.repo_info(REPO, None)
    assert got.sha == "1" * 40 and [f.path for f in got.files] == ["config.json"]


def test_an_https_endpoint_that_is_not_tls_is_unreachable(hub, hub_env):
    # TLS is always verified; a plain-HTTP server behind an https:// URL fails the handshake
    hub_env.setenv("HF_ENDPOINT", hub.url.replace("http://", "https://"))
    from kvfit.hub.transport import HubClient

    with pytest.raises(HubError, match="could not connect to https://127.0.0.1"), \
            HubClient() as client:
        client.repo_info(REPO, None)


def test_commit_and_size_are_read_as_get_hf_file_metadata_reads_them():
    from kvfit.hub.transport import _commit_of, _size_of

    sha = "a" * 40
    lfs = [{"X-Repo-Commit": sha, "X-Linked-Size": "1234", "Location": "https://cdn"},
           {"Content-Range": "bytes 0-99/1234"}]
    assert (_commit_of(lfs), _size_of(lfs)) == (sha, 1234)
    plain = [{"X-Repo-Commit": sha, "Content-Range": "bytes 0-99/567"}]   # no redirect
    assert (_commit_of(plain), _size_of(plain)) == (sha, 567)
    renamed = [{"Location": "/new/name/resolve/main/f.gguf"}] + lfs        # a relative move
    assert (_commit_of(renamed), _size_of(renamed)) == (sha, 1234)
    odd = [{"X-Repo-Commit": "main", "Content-Range": "bytes 0-99/*"}]
    assert (_commit_of(odd), _size_of(odd)) == (None, None)


@pytest.mark.parametrize("value", ["9" * 5000, "\u00b2", "1\u00b2", "\u0661\u0662", "-1", "1e3",
                                   "0x10", " ", "", "12 34", str(2**50 + 1), "9" * 17])
def test_a_size_header_is_ascii_digits_of_bounded_length(value):
    from kvfit.hub.transport import _size_of, byte_count

    assert byte_count(value) is None
    assert _size_of([{"X-Linked-Size": value}, {"Content-Range": f"bytes 0-9/{value}"}]) is None
    assert byte_count(" 1234 ") == 1234 and byte_count(str(2**50)) == 2**50


_PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
              "NO_PROXY", "no_proxy")


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_plan_goes_through_the_proxy_the_environment_names(hub, hub_env, variable):
    from hubserver.proxy import ForwardingProxy

    for name in _PROXY_ENV:
        hub_env.delenv(name, raising=False)
    proxy = ForwardingProxy().start()
    try:
        hub_env.setenv(variable, proxy.url)
        hub_env.setenv("HF_TOKEN", "hf_good")
        meta = resolve(parse_reference(REPO), read_headers=True)
    finally:
        proxy.stop()
    assert meta.config["model_type"] == "qwen3" and meta.tensor_bytes
    # every request the test hub saw came through the proxy, the CDN's (localhost) too
    kinds = [h.kind for h in hub.state.log]
    assert {"api", "resolve", "cdn"} <= set(kinds) and len(proxy.log) == len(kinds)
    assert all(url.startswith(("http://127.0.0.1:", "http://localhost:")) for url, _ in proxy.log)
    # the token went to the Hub's origin only, not across the redirect to the CDN's
    assert [auth for url, auth in proxy.log] == [not url.startswith("http://localhost:")
                                                  for url, _ in proxy.log]


def test_no_proxy_lets_a_host_bypass_the_proxy(hub, hub_env, closed_port):
    for name in _PROXY_ENV:
        hub_env.delenv(name, raising=False)
    hub_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")   # would refuse
    hub_env.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert resolve(parse_reference(REPO)).config["model_type"] == "qwen3"


def test_an_https_endpoint_is_asked_through_https_proxy(hub, hub_env):
    from hubserver.proxy import ForwardingProxy

    for name in _PROXY_ENV:
        hub_env.delenv(name, raising=False)
    proxy = ForwardingProxy().start()
    try:
        hub_env.setenv("HTTPS_PROXY", proxy.url)
        hub_env.setenv("HTTP_PROXY", "http://127.0.0.1:9")       # not for https:// URLs
        hub_env.setenv("HF_ENDPOINT", hub.url.replace("http://", "https://"))
        with pytest.raises(HubError, match="could not connect to https://127.0.0.1"):
            resolve(parse_reference("kvfit-test/nope"))
    finally:
        proxy.stop()
    # the proxy was asked for a tunnel to the endpoint (and refused it); the Hub never saw
    # the request
    assert proxy.log == [(f"CONNECT 127.0.0.1:{hub.port}", False)]
    assert hub.state.count() == 0
