"""CI slice of the fuzz harness: a few hundred seeded cases per input kind, every one
answered correctly or refused cleanly (no traceback, hang, wrong answer or memory blow-up).
The full run (>= 10,000 per kind) is `uv run python bench/fuzz.py`."""

from __future__ import annotations

from collections import Counter

import pytest

from fuzz.runner import CLASSES, Pool, classify, run_kind
from fuzz.targets import TARGETS

CASES = 200
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
    counts, examples = run_kind(kind, CASES, seed=14, watchdog=WATCHDOG_S, pool=pool,
                                answers=answers)
    assert sum(counts.values()) == CASES and set(counts) <= set(CLASSES)
    findings = {c: examples.get(c) for c in ("wrong", "traceback", "hang", "memory") if counts[c]}
    assert not findings, findings
    # the generator does produce hostile cases: some are refused (or, where kvfit ignores bad
    # input by design - cache entries, gauge readings - discarded or rejected)
    assert counts["clean"] or answers["discarded"] or answers["rejected"], (counts, answers)
    assert counts["answered"], counts           # and some valid ones still get answered


def test_cases_are_reproducible_from_their_index():
    assert classify("expr", 14, 3) == classify("expr", 14, 3)
