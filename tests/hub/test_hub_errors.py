"""Each Hub failure gives a distinct one-paragraph HubError; transient ones are retried."""

from __future__ import annotations

import pytest
from hubserver import Fault

from kvfit.errors import HubError
from kvfit.hub import failures, parse_reference, resolve

REPO = "kvfit-test/tiny-qwen3"


def _fail(hub, fault: Fault, text: str = REPO, **kwargs) -> HubError:
    hub.state.faults.append(fault)
    with pytest.raises(HubError) as info:
        resolve(parse_reference(text), **kwargs)
    assert "Traceback" not in info.value.render()
    return info.value


def test_401_says_private_gated_or_missing(hub):
    err = _fail(hub, Fault(status=401, error_code="RepoNotFound", kind="api"))
    assert "HTTP 401" in err.message and "private or gated, or does not exist" in err.message
    assert "HF_TOKEN" in err.hint


def test_401_from_a_private_repo_without_token(hub):
    with pytest.raises(HubError, match="without valid credentials"):
        resolve(parse_reference("kvfit-test/private"))


def test_403_gated_repo_with_a_token_not_granted(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_not_granted")
    with pytest.raises(HubError, match="gated repository") as info:
        resolve(parse_reference("kvfit-test/gated"))
    assert "HTTP 403" in info.value.message
    assert "https://huggingface.co/kvfit-test/gated" in info.value.hint


def test_403_without_gating_is_a_permission_problem(hub):
    err = _fail(hub, Fault(status=403, kind="resolve", path="config.json"))
    assert "may not read kvfit-test/tiny-qwen3@" in err.message
    assert "file config.json (HTTP 403 Forbidden)" in err.message


def test_404_missing_repo(hub):
    with pytest.raises(HubError, match=r"repository kvfit-test/nope was not found .*HTTP 404"):
        resolve(parse_reference("kvfit-test/nope"))


def test_404_missing_revision(hub):
    with pytest.raises(HubError, match=r"revision 'no-such-branch' does not exist in "
                                       r"kvfit-test/tiny-qwen3 \(HTTP 404\)"):
        resolve(parse_reference(f"{REPO}@no-such-branch"))


def test_404_missing_file(hub):
    err = _fail(hub, Fault(status=404, error_code="EntryNotFound", kind="resolve"))
    assert err.message.startswith("config.json is not in kvfit-test/tiny-qwen3 at ")
    assert err.message.endswith("(HTTP 404).")


def test_429_is_retried_then_succeeds(hub):
    hub.state.faults.append(Fault(status=429, retry_after=0, times=1, kind="api"))
    meta = resolve(parse_reference(REPO))
    assert meta.config["model_type"] == "qwen3"
    assert hub.state.count(kind="api") == 2


def test_429_persisting_names_the_retry_after(hub):
    err = _fail(hub, Fault(status=429, retry_after=0.01, kind="api"))
    assert f"rate-limited requests for {REPO} (repo info) (HTTP 429)" in err.message
    assert f"on all {failures.ATTEMPTS} attempt(s)" in err.message
    assert hub.state.count(kind="api") == failures.ATTEMPTS


def test_429_with_a_long_retry_after_is_not_waited_for(hub):
    err = _fail(hub, Fault(status=429, retry_after=3600, kind="api"))
    assert "it asked to wait 3600 s" in err.message
    assert hub.state.count(kind="api") == 1


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried_a_bounded_number_of_times(hub, status):
    err = _fail(hub, Fault(status=status, kind="resolve", path="config.json"))
    assert f"HTTP {status} (server error)" in err.message
    assert f"all {failures.ATTEMPTS} attempt(s)" in err.message
    assert hub.state.count(kind="resolve") >= failures.ATTEMPTS


def test_timeout(hub):
    err = _fail(hub, Fault(delay=2.0, kind="api"), timeout=0.3)
    assert f"{hub.url} did not answer within 0.3 s" in err.message
    assert "longer timeout" in err.hint


def test_truncated_body_is_retried_then_reported(hub):
    err = _fail(hub, Fault(truncate=5, kind="resolve", path="config.json"))
    assert "connection closed before the full response" in err.message
    assert "file config.json" in err.message
    assert hub.state.count(kind="resolve") >= failures.ATTEMPTS


def test_truncated_body_once_recovers(hub):
    hub.state.faults.append(Fault(truncate=5, times=1, kind="resolve", path="config.json"))
    assert resolve(parse_reference(REPO)).config["model_type"] == "qwen3"


def test_endpoint_without_commit_sha(hub, monkeypatch):
    monkeypatch.setattr(hub.state.repos[REPO], "refs", {"main": "x"})
    hub.state.repos[REPO].commits["x"] = {}
    with pytest.raises(HubError, match="returned no full commit sha"):
        resolve(parse_reference(REPO))
