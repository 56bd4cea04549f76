"""Every front end answers the ten questions of tests/reach_questions.py, and its one --tune
question, alike (issue 23): the report JSON and the exit code of each surface equal the CLI's
`--json` and exit code.

SURFACES maps a surface's name to a function (model, options) -> (exit code, report JSON
dict); a front end adds itself as one more entry (the page's /api/plan). The MCP `plan` tool
joins them in the `surfaces` fixture, which keeps one `kvfit mcp` server for the module.
"""

from __future__ import annotations

import json

import pytest
from reach_questions import QUESTIONS, TUNED, cli_args

from conftest import run_cli


def cli(model: str, options: dict) -> tuple[int, dict]:
    """`kvfit MODEL ... --offline --json`, run in-process."""
    code, out, err = run_cli(*cli_args(model, options), "--json")
    assert out.startswith("{"), err
    return code, json.loads(out)


def python_api(model: str, options: dict) -> tuple[int, dict]:
    """kvfit.plan(model, **options, offline=True)."""
    import kvfit

    report = kvfit.plan(model, **options, offline=True)
    return kvfit.exit_code(report), report.to_json()


def web_api(model: str, options: dict) -> tuple[int, dict]:
    """GET /api/plan of `kvfit serve --offline` (kvfit.web), through Starlette's test client;
    the exit code is its X-Kvfit-Exit-Code header."""
    from starlette.testclient import TestClient

    from kvfit.web.app import create_app

    params = [("model", model)] + [(k, str(v)) for k, vs in options.items()
                                   for v in (vs if isinstance(vs, list) else [vs])]
    with TestClient(create_app(offline=True), base_url="http://127.0.0.1") as client:
        got = client.get("/api/plan", params=params)
    assert got.status_code == 200, got.text[:400]
    return int(got.headers["x-kvfit-exit-code"]), got.json()


SURFACES = {"python": python_api, "web": web_api}


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory):
    """SURFACES and the MCP `plan` tool: `kvfit mcp --offline` over stdio with the SDK's own
    client, one server for the module (tests/mcp_stdio.py)."""
    import mcp_stdio

    with mcp_stdio.session(tmp_path_factory.mktemp("mcp")) as session:
        def mcp_plan(model: str, options: dict) -> tuple[int, dict]:
            got = session.call("plan", {"model": model, **options})
            assert not got.is_error, got.content[0].text
            return got.meta["kvfit/exit_code"], got.structured_content

        yield SURFACES | {"mcp": mcp_plan}


@pytest.mark.parametrize(("model", "options"), [q[1:] for q in [*QUESTIONS, TUNED]],
                         ids=[q[0] for q in [*QUESTIONS, TUNED]])
def test_every_surface_answers_as_the_cli(surfaces, model, options):
    want_code, want = cli(model, options)
    assert want["model"]["source"] == model            # the CLI did answer this question
    assert ("tune" in want) == bool(options.get("tune"))
    for name, surface in surfaces.items():
        code, got = surface(model, options)
        assert code == want_code, name
        assert got == want, name


def test_the_questions_cover_the_mix():
    """dense, MoE, MLA, hybrid, sliding; hardware and system; no engine, vLLM and SGLang; a
    systems search."""
    ids = [q[0] for q in QUESTIONS]
    assert len(ids) == len(set(ids)) == 10
    opts = [q[2] for q in QUESTIONS]
    assert {o.get("engine") for o in opts} == {None, "vllm", "sglang"}
    assert any("system" in o for o in opts) and any("hardware" in o for o in opts)
    assert any("systems" in o for o in opts)
