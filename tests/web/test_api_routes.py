"""`kvfit serve`'s JSON API through Starlette's test client: every route returns what the
matching `kvfit ... --json` prints (and what kvfit's Python API returns), and bad input is a
4xx carrying the CLI's own error paragraph, never a traceback or a 5xx."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from reach_questions import QUESTIONS, cli_args
from starlette.testclient import TestClient

import kvfit
from kvfit.web.app import MAX_JSON_BODY, MAX_QUERY_CHARS, REFUSED, create_app

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "engine_logs"
CONFIGS = ROOT / "tests" / "fixtures" / "model-configs"


@pytest.fixture(scope="module")
def client():
    # raise_server_exceptions=False: a 500 is read as a response (and fails the test's
    # status check) rather than re-raised, as a browser would see it
    with TestClient(create_app(offline=True), base_url="http://127.0.0.1",
                    raise_server_exceptions=False) as c:
        yield c


def _query(model: str, options: dict) -> list[tuple[str, str]]:
    """The question as URL query pairs (a list option repeats its name)."""
    pairs = [("model", model)]
    for key, value in options.items():
        pairs += [(key, str(v)) for v in value] if isinstance(value, list) else [(key, str(value))]
    return pairs


def _clean(response) -> None:
    assert response.status_code < 500, response.text[:400]
    assert "Traceback" not in response.text


@pytest.mark.parametrize(("qid", "model", "options"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_api_plan_post_is_the_cli_json(client, qid, model, options):
    # GET /api/plan is one of tests/test_reach_parity.py's surfaces; POST takes the same
    # question as a JSON object, typed values as kvfit.plan takes them
    code, cli = run_json(*cli_args(model, options))
    posted = client.post("/api/plan", json={"model": model} | options)
    _clean(posted)
    assert posted.status_code == 200, posted.text[:400]
    assert posted.json() == cli
    assert posted.headers["x-kvfit-exit-code"] == str(code)


def test_api_sweep_is_the_cli_sweep_json(client):
    q = _query("Qwen/Qwen3-32B", {"hardware": "h100-80", "gpus": 8})
    got = client.get("/api/sweep", params=q + [("sweep", "context=8k,32k")])
    assert got.status_code == 200, got.text[:400]
    _, cli = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--sweep",
                      "context=8k,32k", "--offline")
    assert got.json() == cli
    # the page's memory bars: one per valid layout of each cell, parts summing to the total
    for layout in cli["sweep"]["cells"][0]["layouts"]:
        bars = layout["memory_per_rank"]
        parts = [v for k, v in bars.items() if k.endswith("_bytes") and k != "total_bytes"]
        assert sum(parts) == bars["total_bytes"]


def test_api_fit_is_the_cli_fit_json(client):
    got = client.get("/api/fit", params={"hardware": "h100-80", "gpus": "8", "context": "32k",
                                         "family": "qwen3"})
    assert got.status_code == 200, got.text[:400]
    _, cli = run_json("fit", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                      "--family", "qwen3", "--offline")
    assert got.json() == cli
    assert cli["rows"]["fits"], "the family filter left rows to compare"


def test_api_explain_log_is_the_cli_json(client):
    log = LOGS / "vllm-0.19.0-gpt-oss-20b-h100-tp2.log"
    folder = CONFIGS / "openai--gpt-oss-20b"
    got = client.post("/api/explain-log", params={"model_dir": str(folder)},
                      content=log.read_bytes())
    assert got.status_code == 200, got.text[:400]
    _, cli = run_json("explain-log", log, "--model-dir", folder)
    assert got.json() == cli
    assert cli["engine"] == "vllm" and cli["tp"] == 2     # the log's own engine and TP


def test_listings_are_the_cli_listings(client):
    assert client.get("/api/hardware").json() == run_json("--list-hardware")[1] == \
        kvfit.list_hardware().to_json()
    assert client.get("/api/systems").json() == run_json("--list-systems")[1]


def test_catalog_suggestions_match_the_typed_text(client):
    rows = client.get("/api/catalog", params={"q": "qwen3-32"}).json()
    ids = [r["repo_id"] for r in rows]
    assert "Qwen/Qwen3-32B" in ids
    assert all("qwen3-32" in i.lower() for i in ids), ids
    assert rows == kvfit.catalog_search(query="qwen3-32", limit=20).to_json()


def test_folder_suggestions_list_local_checkpoints(client, tmp_path):
    (tmp_path / "qwen-a").mkdir()
    (tmp_path / "qwen-a" / "config.json").write_text("{}")
    (tmp_path / "qwen-b").mkdir()
    (tmp_path / "qwen-file").write_text("")
    (tmp_path / ".qwen-hidden").mkdir()
    got = client.get("/api/folders", params={"q": str(tmp_path / "qwen")}).json()
    assert got == [{"path": str(tmp_path / "qwen-a"), "checkpoint": True},
                   {"path": str(tmp_path / "qwen-b"), "checkpoint": False}]
    assert client.get("/api/folders", params={"q": "Qwen/Qwen3"}).json() == []   # not a path
    assert client.get("/api/folders", params={"q": "/no/such/dir/x"}).json() == []


def test_the_equivalent_command_answers_the_same(client):
    model, options = QUESTIONS[1][1], QUESTIONS[1][2]
    got = client.get("/api/command", params=_query(model, options))
    assert got.status_code == 200, got.text[:400]
    command = got.json()["command"]
    assert command == kvfit.command_line(model, **(options | {"offline": True}))
    argv = shlex.split(command)
    assert argv[0] == "kvfit"
    code, out, err = run_cli(*argv[1:], "--json")
    assert json.loads(out) == client.get("/api/plan", params=_query(model, options)).json()


def test_detect_without_a_gpu_says_why(client, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))           # no nvidia-smi
    got = client.get("/api/hardware/detect")
    assert got.status_code == 200
    assert got.json()["detected"] is None
    assert "nvidia-smi" in got.json()["error"]["message"]


def test_detect_names_the_preset_auto_plans_on(client, monkeypatch, tmp_path):
    tool = tmp_path / "nvidia-smi"                    # one GPU as nvidia-smi prints it
    tool.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559, 80000'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    got = client.get("/api/hardware/detect").json()
    assert got["error"] is None
    assert (got["detected"]["count"], got["detected"]["preset"]) == (1, "h100-80")
    assert got["detected"]["summary"].endswith("--hardware auto plans on 1 x h100-80.")


def test_the_pages_and_their_files_are_served(client):
    for path, kind in [("/", "text/html"), ("/fit", "text/html"),
                       ("/static/kvfit.js", "text/javascript"), ("/static/kvfit.css", "text/css")]:
        got = client.get(path)
        assert got.status_code == 200 and got.headers["content-type"].startswith(kind), path
        assert "script-src 'self'" in got.headers["content-security-policy"]
    assert client.get("/static/../app.py").status_code == 404


def test_openapi_describes_the_plan_options(client):
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    params = {p["name"] for p in doc["paths"]["/api/plan"]["get"]["parameters"]}
    options = set(kvfit.plan_options_schema()["properties"]) - set(REFUSED)
    assert options <= params and "model" in params
    assert not params & set(REFUSED)


# ---- bad input: the CLI's paragraph, as a 4xx ------------------------------------------

def _cli_error(*argv) -> dict:
    code, out, _ = run_cli(*argv, "--json")
    assert code == 2
    return json.loads(out)["error"]


@pytest.mark.parametrize(("query", "argv"), [
    ({"gpus": "0"}, ["--gpus", "0"]),
    ({"gpus": "١٢"}, ["--gpus", "١٢"]),
    ({"utilization": "nan"}, ["--utilization", "nan"]),
    ({"context": "12q"}, ["--context", "12q"]),
    ({"hardware": "h100-8O"}, ["--hardware", "h100-8O"]),
    ({"kv_dtype": "fp7"}, ["--kv-dtype", "fp7"]),
])
def test_bad_values_are_the_cli_paragraph(client, query, argv):
    got = client.get("/api/plan", params={"model": "Qwen/Qwen3-32B", "hardware": "h100-80"} | query)
    assert got.status_code == 400, got.text[:400]
    flags = ["--hardware", "h100-80"] if "--hardware" not in argv else []
    assert got.json()["error"] == _cli_error("Qwen/Qwen3-32B", *flags, *argv, "--offline")


def test_an_unknown_model_offline_is_the_cli_paragraph(client):
    got = client.get("/api/plan", params={"model": "nobody/no-such-model", "hardware": "h100-80"})
    assert got.status_code == 400
    assert got.json()["error"] == _cli_error("nobody/no-such-model", "--hardware", "h100-80",
                                             "--offline")


def test_an_unsupported_architecture_is_422(client, tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "zebra", "layers": 3}')
    got = client.get("/api/plan", params={"model": str(tmp_path)})
    assert got.status_code == 422
    assert got.json()["error"] == _cli_error(str(tmp_path))
    assert "model_type 'zebra' is not covered" in got.json()["error"]["message"]


def test_an_unknown_option_is_named(client):
    got = client.get("/api/plan", params={"model": "Qwen/Qwen3-32B", "hardwre": "h100-80"})
    assert got.status_code == 400
    text = json.dumps(got.json()["error"])
    assert "hardwre" in text and "hardware" in text.replace("hardwre", "")


@pytest.mark.parametrize("name", ["engine_python", "plot", "config", "check_engine"])
def test_options_that_touch_the_machine_are_refused(client, name, tmp_path):
    got = client.get("/api/plan", params={"model": "Qwen/Qwen3-32B", name: str(tmp_path / "x")})
    assert got.status_code == 400
    assert got.json()["error"]["fields"] == [name]
    assert "not available from the web page" in got.json()["error"]["message"]
    assert not (tmp_path / "x").exists()


def test_a_preset_as_the_model_is_refused(client, tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text(f'model = "Qwen/Qwen3-32B"\nplot = "{tmp_path / "x.svg"}"\n')
    got = client.get("/api/plan", params={"model": str(preset)})
    assert got.status_code == 400 and got.json()["error"]["fields"] == ["model"]
    assert not (tmp_path / "x.svg").exists()


def test_request_sizes_are_bounded(client):
    long = client.get("/api/plan", params={"model": "x" * (MAX_QUERY_CHARS + 1)})
    assert long.status_code == 414 and "at most" in long.json()["error"]["message"]
    big = client.post("/api/plan", content=b" " * (MAX_JSON_BODY + 1),
                      headers={"content-type": "application/json"})
    assert big.status_code == 413
    log = client.post("/api/explain-log", content=b"x" * ((16 << 20) + 1))
    assert log.status_code == 413


@pytest.mark.parametrize(("body", "needle"), [
    (b"{not json", "not JSON"), (b"[1, 2]", "not an object"), (b"\xff\xfe", "not JSON"),
    (b"[" * 60_000, "not JSON"), (b'{"hardware": "h100-80"}', "no model"),
])
def test_bad_bodies_are_one_paragraph(client, body, needle):
    got = client.post("/api/plan", content=body, headers={"content-type": "application/json"})
    assert got.status_code == 400, got.text[:300]
    assert needle in got.json()["error"]["message"]


def test_a_json_number_past_the_int_string_limit_is_400_not_500(client):
    # found by tests/fuzz's web_requests kind: json.loads raises ValueError (not
    # JSONDecodeError) for an integer of over 4,300 digits, which was a 500
    body = b'{"model": "Qwen/Qwen3-32B", "gpus": ' + b"9" * 5000 + b"}"
    got = client.post("/api/plan", content=body, headers={"content-type": "application/json"})
    assert got.status_code == 400, got.text[:300]
    assert "not JSON" in got.json()["error"]["message"]


def test_hostile_text_comes_back_as_json_text(client):
    model = "<img src=x onerror=alert(1)>\x1b[31m"
    got = client.get("/api/plan", params={"model": model, "hardware": "h100-80"})
    assert got.status_code == 400 and got.headers["content-type"] == "application/json"
    assert "\x1b" not in got.json()["error"]["message"]            # control characters escaped


def test_unknown_routes_and_methods_are_json(client):
    got = client.get("/api/nothing")
    assert got.status_code == 404 and "no such page" in got.json()["error"]["message"]
    got = client.get("/api/explain-log")
    assert got.status_code == 405 and got.json()["error"]["kind"] == "usage error"


def test_another_host_name_is_refused():
    # a page elsewhere that points a DNS name at 127.0.0.1 gets no answer (DNS rebinding)
    with TestClient(create_app(offline=True), base_url="http://attacker.example") as c:
        assert c.get("/api/hardware").status_code == 400
