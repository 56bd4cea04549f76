"""Fixtures for kvfit.hub tests: a local test hub on 127.0.0.1 and an isolated environment.

Tests never reach the real Hub: HF_ENDPOINT points at the test hub (or at a closed port),
HF_HOME and the kvfit metadata cache live in tmp_path, telemetry is off.
"""

from __future__ import annotations

import pytest
from hubserver import HubServer
from hubserver.repos import build_standard_hub
from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import close_session

from kvfit.hub import failures

_ENV_CLEARED = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
                "KVFIT_CACHE_DIR", "HF_HUB_CACHE")


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """An isolated HF_HOME / cache and fast retry backoff, with no Hub configured yet."""
    for name in _ENV_CLEARED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    # huggingface_hub reads these at import time; with telemetry on, building request
    # headers fetches an agent registry from the import-time endpoint (the real Hub).
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(failures, "BACKOFF_S", 0.01)
    # the library's session reads proxy settings when it is made: each test gets a new one
    close_session()
    yield monkeypatch
    close_session()


@pytest.fixture
def hub(hub_env):
    """A running test hub with the standard repos; HF_ENDPOINT points at it."""
    server = HubServer()
    build_standard_hub(server.state)
    server.start()
    hub_env.setenv("HF_ENDPOINT", server.url)
    yield server
    server.stop()


@pytest.fixture
def dead_endpoint(hub_env, closed_port):
    """HF_ENDPOINT at a 127.0.0.1 port nothing listens on (connection refused; tests/conftest.py
    keeps it so for the whole test)."""
    hub_env.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    return f"http://127.0.0.1:{closed_port}"
