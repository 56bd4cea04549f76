"""HF_ENDPOINT credentials never reach stderr, a --json error object or a cache-answered report."""

from __future__ import annotations

import json

import pytest
from hubserver import Fault

from conftest import run_cli

REPO = "kvfit-test/tiny-qwen3"
SECRET = "SECRET-pw-42"


def _with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://user:{SECRET}@")


def test_hub_error_redacts_userinfo_on_stderr_and_in_json(hub, hub_env):
    hub_env.setenv("HF_ENDPOINT", _with_userinfo(hub.url))
    hub.state.faults.append(Fault(status=404, error_code="RepoNotFound", kind="api"))
    code, out, err = run_cli("kvfit-test/nope", "--context", "1k", "--json")
    assert code == 2
    assert SECRET not in out and SECRET not in err
    message = json.loads(out)["error"]["message"]
    assert f"http://***@127.0.0.1:{hub.port}" in message and "HTTP 404" in message
    assert err.count("\n") == 1 and "http://***@127.0.0.1" in err


def test_unreachable_endpoint_with_userinfo_is_redacted(hub_env, closed_port):
    hub_env.setenv("HF_ENDPOINT", f"http://user:{SECRET}@127.0.0.1:{closed_port}")
    code, out, err = run_cli(REPO, "--context", "1k")
    assert code == 2 and out == ""
    assert SECRET not in err and "could not connect to http://***@127.0.0.1:" in err


def test_cache_answered_report_does_not_carry_the_secret(hub, hub_env, closed_port):
    code, _, _ = run_cli(REPO, "--context", "1k")           # online: fills the cache
    assert code in (0, 1, 5)
    hub_env.setenv("HF_ENDPOINT", f"http://user:{SECRET}@127.0.0.1:{closed_port}")
    for flags in (("--verbose",), ("--json",)):   # the checkpoint notes: --verbose or JSON
        code, out, err = run_cli(REPO, "--context", "1k", *flags)
        assert code in (0, 1, 5), err
        assert "metadata cache" in out
        assert SECRET not in out and SECRET not in err


# RFC 3986 gen-delims and sub-delims, a space and "%", each unencoded inside a password
RESERVED = list(":/?#[]@!$&'()*+,;=") + [" ", "%"]
_PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
              "NO_PROXY", "no_proxy")


def _password(char: str) -> str:
    return f"pa{char}ss-{SECRET}"


def _refused_without_secret(*flags: str) -> None:
    for extra in ((), ("--json",)):
        code, out, err = run_cli("kvfit-test/nope", "--context", "1k", "--timeout", "5",
                                 *flags, *extra)
        assert code == 2, (out, err)
        assert SECRET not in out and SECRET not in err
        assert "Traceback" not in err
        if not extra:
            assert out == "" and err.count("\n") == 1, err


@pytest.mark.parametrize("char", RESERVED)
def test_an_endpoint_password_with_any_reserved_character_is_never_printed(hub_env, closed_port,
                                                                            char):
    hub_env.setenv("HF_ENDPOINT", f"http://user:{_password(char)}@127.0.0.1:{closed_port}")
    _refused_without_secret()


@pytest.mark.parametrize("char", RESERVED)
def test_a_proxy_password_with_any_reserved_character_is_never_printed(hub, hub_env, closed_port,
                                                                        char):
    for name in _PROXY_ENV:
        hub_env.delenv(name, raising=False)
    proxy = f"http://user:{_password(char)}@127.0.0.1:{closed_port}"
    hub_env.setenv("HTTP_PROXY", proxy)
    hub_env.setenv("HTTPS_PROXY", proxy)
    _refused_without_secret()
    assert hub.state.count() == 0          # nothing went around the (unusable) proxy
