"""A plan's Hub requests carry huggingface_hub's headers (token, user agent) but never make
the library fetch its agent-harness registry: with telemetry left on, composing the user
agent would otherwise ask the Hub for it (huggingface_hub utils/_detect_agent.py), an extra
request to the default endpoint that a plan has no use for."""

from __future__ import annotations

from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import _detect_agent

from kvfit.hub import parse_reference, resolve


def test_no_agent_registry_fetch_with_telemetry_on(hub, monkeypatch):
    fetched = []
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", False)   # the user's default
    monkeypatch.setattr(_detect_agent, "_registry", None)
    monkeypatch.setattr(_detect_agent, "_read_cached_registry", lambda *a, **k: None)
    monkeypatch.setattr(_detect_agent, "_fetch_registry", lambda *a, **k: fetched.append(1))
    meta = resolve(parse_reference("kvfit-test/tiny-qwen3"))
    assert meta.config["model_type"] == "qwen3"
    assert fetched == []
    assert hf_constants.HF_HUB_DISABLE_TELEMETRY is False      # the user's setting is restored


def test_requests_still_carry_the_token(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_good")
    meta = resolve(parse_reference("kvfit-test/private"))       # served only with the token
    assert meta.config["model_type"] == "qwen3"
