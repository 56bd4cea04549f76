"""Docs that cannot go stale (issue 27, item 5): every command in README.md and docs/*.md
runs offline with the exit code the docs imply, and every output they show is what kvfit
prints now (tests/docs_sync.py; `uv run python tests/docs_sync.py --write` rewrites them)."""

from __future__ import annotations

import re

import pytest

import docs_sync as sync

COMMANDS = [c for doc in sync.DOCS
            for c in sync.parse(doc, (sync.ROOT / doc).read_text("utf-8"))[0]]
SHOWN = [(doc, s) for doc in sync.DOCS
         for s in sync.parse(doc, (sync.ROOT / doc).read_text("utf-8"))[1]]


def test_the_docs_hold_commands_and_outputs():
    assert len(COMMANDS) >= 15 and len(SHOWN) >= 5
    written = {c.text for c in COMMANDS}
    assert set(sync.NOT_RUN) <= written and set(sync.EXIT) <= written   # no stale entries


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.text not in sync.NOT_RUN],
                         ids=lambda c: f"{c.doc}:{c.line}")
def test_every_command_runs_offline(command):
    code, out, err = sync.run(command.text)
    allowed, why = sync.EXIT.get(command.text, ({0}, "answers"))
    assert code in allowed, f"{command.doc}:{command.line} exit {code} ({why}): {err[-400:]}"
    assert "Traceback" not in err and "internal error" not in err
    if code == 2:                                   # the one documented refusal: no GPU here
        assert "nvidia-smi" in err


@pytest.mark.parametrize("doc", sync.DOCS)
def test_every_shown_output_is_current(doc):
    assert sync.stale((sync.ROOT / doc).read_text("utf-8"), doc) == []


@pytest.mark.parametrize("doc,shown", SHOWN, ids=lambda x: getattr(x, "start", x))
def test_editing_a_shown_number_is_caught(doc, shown):
    """Change one digit of a shown output (as a stale README would): the check fails there."""
    lines = (sync.ROOT / doc).read_text("utf-8").splitlines()
    at = next(i for i in range(shown.start + shown.prompt, shown.start + shown.prompt +
                                len(shown.lines)) if re.search(r"\d", lines[i]))
    lines[at] = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), lines[at], count=1)
    problems = sync.stale("\n".join(lines) + "\n", doc)
    assert problems == [f"{doc}:{at + 1}: shown output of `{shown.command.text}` differs from "
                        "what it prints now"]
