"""CI slice of the fuzz harness: a few hundred seeded cases per input kind, every one
answered correctly or refused cleanly (no traceback, hang, wrong answer or memory blow-up).
The full run (>= 10,000 per kind) is `uv run python bench/fuzz.py`."""

from __future__ import annotations

from collections import Counter

import pytest

from fuzz.runner import CLASSES, Pool, classify, run_kind
from fuzz.targets import TARGETS

CASES = 200
# kinds whose every case runs a whole command (a catalog listing reads all its entries, an
# explain-log predicts the run): fewer cases in CI, bench/fuzz.py runs the full count
FEWER = {"catalog_args": 30, "explain_file": 40}
# The watchdog only tells a case that never ends from one that ends: in CI it is set far above
# any case's time (each answers in well under a second on an idle machine), so a loaded runner
# cannot turn a slow answer into a "hang". bench/fuzz.py keeps the 10 s bound.
WATCHDOG_S = 120.0


@pytest.fixture(scope="module")
def pool():
    workers = Pool()
    yield workers
    workers.close()


@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_hostile_inputs_are_answered_or_refused(kind, pool):
    answers: Counter = Counter()
    cases = FEWER.get(kind, CASES)
    counts, examples = run_kind(kind, cases, seed=14, watchdog=WATCHDOG_S, pool=pool,
                                answers=answers)
    assert sum(counts.values()) == cases and set(counts) <= set(CLASSES)
    findings = {c: examples.get(c) for c in ("wrong", "traceback", "hang", "memory") if counts[c]}
    assert not findings, findings
    # the generator does produce hostile cases: some are refused (or, where kvfit ignores bad
    # input by design - cache entries, gauge readings - discarded or rejected)
    assert counts["clean"] or answers["discarded"] or answers["rejected"], (counts, answers)
    assert counts["answered"], counts           # and some valid ones still get answered


def test_cases_are_reproducible_from_their_index():
    assert classify("expr", 14, 3) == classify("expr", 14, 3)


@pytest.mark.parametrize("probe", ["_spin", "_block"])
def test_the_watchdog_ends_cases_that_never_end(probe, pool):
    # _spin burns CPU for ever: it is stopped after the watchdog's CPU seconds, however loaded
    # the machine; _block waits for ever on an event: it uses no CPU and is stopped after
    # WALL_FACTOR watchdogs of waiting. Neither can end by itself, so the outcome is fixed.
    cls, detail = pool.run(probe, 0, 0, watchdog=0.5)
    assert cls == "hang" and "no result after" in detail, (cls, detail)
    # the worker was replaced and answers the next case
    assert pool.run("expr", 14, 0, watchdog=WATCHDOG_S)[0] in ("answered", "clean")
