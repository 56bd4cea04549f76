"""A plan's Hub requests carry huggingface_hub's headers (token, user agent) but never make
the library fetch its agent-harness registry: with telemetry left on, composing the user
agent would otherwise ask the Hub for it (huggingface_hub utils/_detect_agent.py), an extra
request to the default endpoint that a plan has no use for."""

from __future__ import annotations

import threading

import pytest
from huggingface_hub import constants as hf_constants
from huggingface_hub.utils import _detect_agent

from kvfit.hub import parse_reference, resolve, transport


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


class _Watched:
    """transport's toggle lock, telling `waiting[thread name]` when a thread asks for it."""

    def __init__(self, lock, waiting: dict):
        self.lock, self.waiting = lock, waiting

    def __enter__(self):
        event = self.waiting.get(threading.current_thread().name)
        if event is not None:
            event.set()
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


def _watch_builds(monkeypatch, hold=None):
    """build_hf_headers, recording the telemetry switch each call sees and how many calls run
    at once; with `hold` = (inside, release) events, the first call signals `inside` and
    waits for `release`."""
    from huggingface_hub import utils

    real, seen, state = utils.build_hf_headers, [], {"now": 0, "most": 0, "first": True}
    guard = threading.Lock()

    def build(**kwargs):
        with guard:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            seen.append(hf_constants.HF_HUB_DISABLE_TELEMETRY)
            first, state["first"] = state["first"], False
        try:
            if first and hold is not None:
                hold[0].set()
                assert hold[1].wait(30), "the second thread never asked for the switch"
            return real(**kwargs)
        finally:
            with guard:
                state["now"] -= 1

    monkeypatch.setattr(utils, "build_hf_headers", build)
    return seen, state


@pytest.mark.parametrize("user_setting", [False, True])
def test_two_threads_take_the_telemetry_switch_in_turn(hub_env, user_setting):
    # thread A is inside build_hf_headers (switch on) when thread B asks for the switch; B
    # waits for A to restore the user's setting, then turns it on for its own call
    hub_env.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", user_setting)
    inside, b_asks = threading.Event(), threading.Event()
    hub_env.setattr(transport, "_TELEMETRY_TOGGLE",
                    _Watched(transport._TELEMETRY_TOGGLE, {"B": b_asks}))
    seen, state = _watch_builds(hub_env, hold=(inside, b_asks))
    results: dict = {}

    def run(name):
        results[name] = transport.hub_headers()

    a = threading.Thread(target=run, args=("A",), name="A")
    a.start()
    assert inside.wait(30)
    b = threading.Thread(target=run, args=("B",), name="B")
    b.start()
    a.join(30)
    b.join(30)
    assert not a.is_alive() and not b.is_alive()
    assert seen == [True, True] and state["most"] == 1          # one call at a time, switch on
    assert hf_constants.HF_HUB_DISABLE_TELEMETRY is user_setting   # the user's value is back
    assert results["A"] == results["B"] and results["A"]["user-agent"].startswith("kvfit/")


def test_many_threads_building_headers_all_see_the_switch_on(hub_env):
    hub_env.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", False)
    seen, state = _watch_builds(hub_env)
    start = threading.Barrier(8)
    errors: list = []

    def run():
        try:
            start.wait(30)
            for _ in range(25):
                transport.hub_headers()
        except BaseException as exc:       # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and len(seen) == 8 * 25 and all(seen) and state["most"] == 1
    assert hf_constants.HF_HUB_DISABLE_TELEMETRY is False
