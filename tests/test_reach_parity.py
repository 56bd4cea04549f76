"""Every front end answers the ten questions of tests/reach_questions.py alike (issue 23): the
report JSON and the exit code of each surface equal the CLI's `--json` and exit code.

SURFACES maps a surface's name to a function (model, options) -> (exit code, report JSON
dict); a front end adds itself as one more entry (the page's /api/plan, the MCP `plan` tool)
and gets one test per question. A surface whose optional extra is not installed calls
pytest.importorskip (or pytest.skip with the reason) inside its function.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from reach_questions import QUESTIONS, cli_args

from conftest import run_cli

BY_ID = {q[0]: q[1:] for q in QUESTIONS}


@cache
def _cli(qid: str) -> tuple[int, str]:
    """(exit code, stdout) of `kvfit MODEL ... --offline --json` for question `qid`, run
    in-process once."""
    model, options = BY_ID[qid]
    code, out, err = run_cli(*cli_args(model, options), "--json")
    assert out.startswith("{"), err
    return code, out


def python_api(model: str, options: dict) -> tuple[int, dict]:
    """kvfit.plan(model, **options, offline=True)."""
    import kvfit

    report = kvfit.plan(model, **options, offline=True)
    return kvfit.exit_code(report), report.to_json()


SURFACES = {"python": python_api}


@pytest.mark.parametrize("surface", sorted(SURFACES))
@pytest.mark.parametrize("qid", list(BY_ID))
def test_every_surface_answers_as_the_cli(qid, surface):
    model, options = BY_ID[qid]
    want_code, out = _cli(qid)
    want = json.loads(out)
    assert want["model"]["source"] == model            # the CLI did answer this question
    code, got = SURFACES[surface](model, options)
    assert code == want_code
    assert got == want


def test_the_questions_cover_the_mix():
    """dense, MoE, MLA, hybrid, sliding; hardware and system; no engine, vLLM and SGLang; a
    systems search."""
    ids = [q[0] for q in QUESTIONS]
    assert len(ids) == len(set(ids)) == 10
    opts = [q[2] for q in QUESTIONS]
    assert {o.get("engine") for o in opts} == {None, "vllm", "sglang"}
    assert any("system" in o for o in opts) and any("hardware" in o for o in opts)
    assert any("systems" in o for o in opts)
    codes = {_cli(q)[0] for q in ids}
    assert codes <= {0, 1, 5} and len(codes) > 1       # not every question has one answer
