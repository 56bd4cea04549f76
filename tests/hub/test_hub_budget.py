"""--timeout is one budget for a plan's whole Hub conversation, counted from the process start
(issue 14: a server dripping a byte every 0.5 s held `kvfit --timeout 2` for about 2.7 s:
process start-up, then 2 s per request). Deterministic: an injected clock, or a start so far
in the past that the budget is spent before any request; nothing here measures elapsed time."""

from __future__ import annotations

import io
import time
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hubserver import Fault

from kvfit.cli.main import main
from kvfit.errors import HubError
from kvfit.hub import deadline, failures, parse_reference, resolve
from kvfit.hub.transport import HubClient

REPO = "kvfit-test/tiny-qwen3"


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_budget_counts_from_the_start_less_the_exit_reserve():
    clock = Clock(100.9)                 # the first request, 0.9 s after the process started
    budget = deadline.Budget(2.0, started=100.0, clock=clock)
    # 2 s less the reserve min(0.5, 2 x 0.15) = 0.3 s, from 100.0: it ends at 101.7
    assert budget.end == pytest.approx(101.7)
    assert budget.left() == pytest.approx(0.8)
    clock.now = 101.5                    # a second request gets only what is left
    assert budget.left() == pytest.approx(0.2)
    clock.now = 102.0
    assert budget.left() < 0
    assert deadline.exit_reserve(10.0) == 0.5 and deadline.exit_reserve(0.5) == pytest.approx(0.075)


def test_the_process_start_is_in_the_past():
    clock = Clock(50.0)
    assert 0 <= deadline.process_age() <= deadline.MAX_START_AGE_S
    assert deadline.process_started(clock) <= 50.0


def test_a_spent_budget_starts_no_request():
    calls = []
    with pytest.raises(deadline.DeadlineExceeded):
        deadline.run_with_deadline(lambda d: calls.append(d), 0.0)
    assert calls == []


def test_a_drip_after_a_slow_start_ends_within_the_budget(hub):
    # the process "started" 10 s ago: at --timeout 2 nothing is left, so the dripping server
    # is never asked and the plan ends at once with the timeout paragraph
    hub.state.faults.append(Fault(kind="api", body=b"", drip=0.5))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([REPO, "--context", "1k", "--timeout", "2"], started=time.monotonic() - 10)
    assert code == 2 and err.getvalue().count("\n") == 1, err.getvalue()
    assert "did not answer within 2 s (--timeout: one budget for all of the plan's Hub " \
        "requests, counted from kvfit's start)" in err.getvalue()
    assert hub.state.count() == 0


def test_requests_share_one_budget(hub):
    # repo info answers; the config.json read comes after the budget is spent (the client
    # "started" 3 s ago with --timeout 3), so it is refused without being sent
    client = HubClient(timeout=3.0, started=time.monotonic())
    info = client.repo_info(REPO, None)
    client.budget.end = time.monotonic() - 1           # spent by the first request
    with pytest.raises(HubError, match="did not answer within 3 s"):
        client.fetch(REPO, info.sha, "config.json")
    assert hub.state.count(kind="api") == 1 and hub.state.count(kind="resolve") == 0


def test_no_retry_waits_past_the_budget(hub, monkeypatch):
    # a 503 is retried after BACKOFF_S; with less budget left than that wait, it is final
    monkeypatch.setattr(failures, "BACKOFF_S", 60.0)
    hub.state.faults.append(Fault(status=503, kind="api"))
    with pytest.raises(HubError, match="503"):
        resolve(parse_reference(REPO), timeout=30.0)
    assert hub.state.count(kind="api") == 1
