"""Progress on stderr: only on a terminal, never with --json or under CI; driven by a fake TTY
stream (no clock anywhere)."""

from __future__ import annotations

import io

import pytest

from kvfit.progress import Progress, enabled, progress


class FakeTTY(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)


def test_steps_rewrite_one_line_and_done_ends_it(no_ci):
    tty = FakeTTY()
    with progress("audit", total=2, stream=tty) as p:
        p.step("Qwen/Qwen3-32B at 32k")
        p.step("Qwen/Qwen3-32B at 128k")
    text = tty.getvalue()
    frames = text.rstrip("\n").split("\r")
    assert [f.rstrip() for f in frames] == ["kvfit audit [1/2] Qwen/Qwen3-32B at 32k",
                                            "kvfit audit [2/2] Qwen/Qwen3-32B at 128k",
                                            "kvfit audit: done"]
    assert text.endswith("\n") and text.count("\n") == 1


def test_an_exception_leaves_the_line_marked_stopped(no_ci):
    tty = FakeTTY()
    with pytest.raises(RuntimeError), progress("hub", stream=tty) as p:
        p.step("reading config.json")
        raise RuntimeError("boom")
    assert tty.getvalue().rstrip().endswith("kvfit hub: stopped")


@pytest.mark.parametrize("why", ["not a tty", "json", "ci"])
def test_quiet_when_not_a_terminal_or_json_or_ci(monkeypatch, why):
    monkeypatch.delenv("CI", raising=False)
    stream = io.StringIO() if why == "not a tty" else FakeTTY()
    if why == "ci":
        monkeypatch.setenv("CI", "true")
    p = Progress("audit", total=3, stream=stream, quiet=(why == "json"))
    p.step("one")
    p.note("waiting")
    p.done()
    assert not p.on and stream.getvalue() == ""


def test_nothing_shown_means_nothing_to_end(no_ci):
    tty = FakeTTY()
    Progress("calibrate", stream=tty).done()
    assert tty.getvalue() == ""
    assert enabled(tty) and not enabled(tty, quiet=True)


def test_lines_are_escaped_and_bounded(no_ci):
    tty = FakeTTY()
    p = Progress("hub", stream=tty)
    p.step("reading \x1b[31mred\x1b[0m " + "x" * 300)
    line = tty.getvalue()
    assert "\x1b" not in line and len(line) == 100 and line.rstrip().endswith("...")


def test_the_audit_shows_one_step_per_cell(no_ci):
    """kvfit audit drives the same progress: one step per checkpoint x context cell, and the
    report is the one it gives without a terminal."""
    from kvfit.audit.config import Frontier
    from kvfit.audit.run import run

    frontier = Frontier(name="t", offline=True, min_coverage=0.0, min_family_coverage=0.0,
                        models=({"family": "qwen3", "model": "Qwen/Qwen3-32B",
                                 "contexts": ["32k", 40960]},),
                        hardware=({"preset": "h100-80", "counts": [1]},), systems=())
    tty = FakeTTY()
    report = run(frontier, stream=tty)
    frames = [f.rstrip() for f in tty.getvalue().rstrip("\n").split("\r")]
    assert frames == ["kvfit audit [1/2] Qwen/Qwen3-32B at 32k",
                      "kvfit audit [2/2] Qwen/Qwen3-32B at 40960", "kvfit audit: done"]
    assert report == run(frontier, stream=io.StringIO())
