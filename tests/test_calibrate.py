"""`kvfit calibrate` against a fake OpenAI-compatible server and a fake benchmark (127.0.0.1 only).

The plan under test is gpt-oss-20b on one RTX 5090 at 128k (bf16 KV): 4 resident sequences
predicted. The fake server holds at most `capacity` requests at once and queues the rest.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from test_calibrate_fakes import FakeServer

from conftest import launch_port, run_cli, run_json, validate

ROOT = Path(__file__).resolve().parents[1]
FAKES = Path(__file__).with_name("test_calibrate_fakes.py")
GPT = ROOT / "examples" / "models" / "openai--gpt-oss-20b"
SCHEMA = json.loads((ROOT / "schemas" / "calibration.schema.json").read_text())
BENCH = [sys.executable, str(FAKES), "bench", "--base-url", "{base_url}", "--concurrency",
         "{concurrency}", "--num-prompts", "{num_prompts}", "--input-tokens", "{input_tokens}",
         "--output-tokens", "{output_tokens}", "--result-file", "{result_file}"]
PLAN = {"model": str(GPT), "hardware": "rtx-5090-32", "gpus": 1, "context": "128k",
        "kv_dtype": "bf16"}


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))


def write_preset(tmp_path: Path, calibration: dict, plan: dict | None = None) -> Path:
    lines = [f"{k} = {_toml(v)}" for k, v in (PLAN if plan is None else plan).items()]
    lines += ["", "[calibration]"] + [f"{k} = {_toml(v)}" for k, v in calibration.items()]
    path = tmp_path / "deployment.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def attach(srv: FakeServer, **kw) -> dict:
    return {"engine": "vllm", "mode": "attach", "base_url": srv.base_url, "max_concurrency": 8,
            "benchmark_command": BENCH, "metrics_interval": 0.05, "startup_timeout": 10,
            "request_timeout": 30} | kw


def calibrate(preset: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("calibrate", preset, "--json", *extra)
    assert "Traceback" not in err
    doc = json.loads(out) if out.strip() else {}
    if "error" not in doc and doc:
        validate(doc, SCHEMA)
    return code, doc, err


def by_point(doc: dict) -> dict:
    return {p["offered_concurrency"]: p for p in doc["points"]}


def test_attach_mode_calibrates_with_a_measured_ceiling(tmp_path):
    with FakeServer(capacity=4) as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(srv)))
    assert code == 0, err
    # Powers of two up to max_concurrency 8, plus the predicted boundary (the engine's:
    # --engine vllm answers the plan a calibration tests).
    want = sorted({1, 2, 4, 8, doc["plan"]["predicted_boundary"]})
    assert doc["status"] == "calibrated" and doc["concurrency"]["points"] == want
    res = doc["result"]
    assert res["provenance"] == "host measurement"
    assert res["measured_capacity_ceiling"] == 4
    assert res["largest_fully_resident_concurrency"] == 4
    assert res["ceiling_bound"].startswith("reached")
    p = doc["plan"]["predicted_boundary"]
    assert res["predicted_vs_measured"] == {"predicted": p, "measured": 4, "difference": 4 - p,
                                            "ratio": round(4 / p, 4)}
    pts = by_point(doc)
    assert [pts[c]["resident"]["max_running"] for c in (1, 2, 4, 8)] == [1, 2, 4, 4]
    assert pts[8]["tokens"]["requested_total"] == 8 * (131072 - 1)
    assert pts[8]["tokens"]["matches"] and pts[8]["completions"]["completed"] == 8
    ep = doc["endpoint"]
    assert ep["version"] == "0.33.0" and ep["version_source"] == "GET /version"
    assert doc["engine"]["version_basis"].startswith("reported by the server")
    assert ep["models"][0]["id"] == "fake-model"
    assert ep["cache_precision"]["status"] == "reported by the server"
    assert ep["topology"]["status"] == "unverified"
    assert pts[1]["command"][-1].endswith("bench-c1.json")


def test_queueing_is_a_fact_not_an_oom(tmp_path):
    with FakeServer(capacity=4) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(srv)))
    p8 = by_point(doc)[8]
    assert code == 0 and p8["qualified"]
    assert p8["queueing"]["queued"] is True and p8["queueing"]["max_waiting"] == 4
    assert p8["oom"] == {"detected": False, "evidence": []}
    assert by_point(doc)[2]["queueing"]["queued"] is False


def test_direct_oom_evidence_fails_the_point_separately_from_queueing(tmp_path):
    with FakeServer(capacity=4, oom_above=6) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(srv, stop_on_failure=False)))
    assert code == 4 and doc["status"] == "not-calibrated"
    p4, p8 = by_point(doc)[4], by_point(doc)[8]
    assert p4["qualified"] and not p4["oom"]["detected"]
    assert not p8["qualified"] and p8["oom"]["detected"]
    assert p8["oom"]["evidence"][0]["source"] == "benchmark request errors (HTTP)"
    assert "CUDA out of memory" in p8["oom"]["evidence"][0]["line"]
    assert p8["completions"]["failed"] >= 1        # requests past 6 in flight got HTTP 500
    assert p8["queueing"]["queued"] is True        # both facts, kept apart
    assert doc["result"]["measured_capacity_ceiling"] == 4


def test_wrong_input_token_count_fails_closed(tmp_path):
    bench = BENCH + ["--skew-at", "4"]
    with FakeServer(capacity=4) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(
            srv, benchmark_command=bench, stop_on_failure=False)))
    assert code == 4
    pts = by_point(doc)
    assert pts[2]["qualified"] and not pts[4]["qualified"] and not pts[8]["qualified"]
    tok = pts[4]["tokens"]
    assert tok["reported_total"] == tok["requested_total"] + 1 and not tok["matches"]
    assert any("total_input_tokens" in r for r in pts[4]["reasons"])
    # the server counted exactly the request, but that never excuses an over-count
    assert tok["server_counter"]["matches"] and tok["qualified_by"] is None
    assert "vouches only for a benchmark shortfall" in tok["problem"]
    # the highest point below the first bad one (4) that ran clean
    assert doc["result"]["measured_capacity_ceiling"] == max(
        n for n in doc["concurrency"]["points"] if n < 4)


UNDER = BENCH + ["--under-report"]      # full prompts sent, one token per request fewer reported
SHORTFALL = ("the benchmark's random dataset reserves room for special tokens; the server "
             "counted the full prompts")


@pytest.mark.parametrize("flavor, counter", [("vllm", "vllm:prompt_tokens_total"),
                                             ("sglang", "sglang:prompt_tokens_total")])
def test_bos_shortfall_qualifies_via_the_server_prompt_counter(tmp_path, flavor, counter):
    with FakeServer(capacity=4, flavor=flavor) as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(
            srv, engine=flavor, benchmark_command=UNDER, concurrency=[1, 4])))
    assert code == 0, err
    assert doc["engine"]["metrics"]["prompt_tokens"][0] == counter
    for c, p in by_point(doc).items():
        tok = p["tokens"]
        assert p["qualified"] and tok["matches"] and not tok["benchmark_matches"]
        assert tok["qualified_by"] == "server prompt-token counter"
        assert tok["reported_total"] == tok["requested_total"] - c
        assert tok["server_counter"]["metric"] == counter
        assert tok["server_counter"]["delta"] == tok["requested_total"] == c * 131071
        assert tok["server_counter"]["after"] - tok["server_counter"]["before"] == c * 131071
        assert tok["benchmark_shortfall"] == {"total": c, "per_request": 1, "reason": SHORTFALL}
        assert tok["problem"] is None and p["reasons"] == []


def test_bos_shortfall_is_explained_in_the_text_report(tmp_path):
    with FakeServer(capacity=4) as srv:
        code, out, err = run_cli("calibrate", write_preset(tmp_path, attach(
            srv, benchmark_command=UNDER, concurrency=[2])))
    assert code == 0, err
    assert "input tokens proven by the server's vllm:prompt_tokens_total (+262,142)" in out
    assert SHORTFALL in out


def test_shortfall_without_a_prompt_counter_fails_closed(tmp_path):
    with FakeServer(capacity=4, prompt_counter=False) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(
            srv, benchmark_command=UNDER, concurrency=[1, 2], stop_on_failure=False)))
    assert code == 4
    for p in doc["points"]:
        tok = p["tokens"]
        assert not p["qualified"] and not tok["matches"] and tok["qualified_by"] is None
        assert tok["server_counter"]["metric"] is None and tok["benchmark_shortfall"] is None
        reason = next(r for r in p["reasons"] if "total_input_tokens" in r)
        assert f"{tok['reported_total']:,}" in reason and f"{tok['requested_total']:,}" in reason
        assert "exported no prompt-token counter" in reason and "fails closed" in reason
    assert doc["result"]["measured_capacity_ceiling"] is None


def test_prompt_counter_mismatch_fails_closed(tmp_path):
    # the server counts one token per request fewer than it was sent: no proof of full prompts
    with FakeServer(capacity=4, count_skew=-1) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(
            srv, benchmark_command=UNDER, concurrency=[2])))
    assert code == 4
    p = doc["points"][0]
    tok = p["tokens"]
    assert not p["qualified"] and tok["qualified_by"] is None
    assert tok["server_counter"]["delta"] == 2 * 131070 and not tok["server_counter"]["matches"]
    reason = next(r for r in p["reasons"] if "total_input_tokens" in r)
    assert "total_input_tokens 262,140 is not the requested 262,142" in reason
    assert "vllm:prompt_tokens_total rose by 262,140 over the point, not 262,142" in reason


def test_exact_benchmark_count_qualifies_without_a_prompt_counter(tmp_path):
    with FakeServer(capacity=4, prompt_counter=False) as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(srv, concurrency=[1, 2])))
    assert code == 0, err
    for p in doc["points"]:
        tok = p["tokens"]
        assert p["qualified"] and tok["benchmark_matches"] and tok["matches"]
        assert tok["qualified_by"] == "benchmark total_input_tokens"
        assert tok["server_counter"]["metric"] is None and not tok["server_counter"]["matches"]
        assert tok["benchmark_shortfall"] is None


@pytest.mark.parametrize("reported, delta, qualifies, needle", [
    (10 * 995, 10 * 1000, False, "vouches only for a benchmark shortfall"),   # 5 per request
    (10 * 1000 - 3, 10 * 1000, False, "vouches only"),                       # not whole tokens
    (None, 10 * 1000, False, "reports no total_input_tokens"),
    (10 * 999, 11 * 1000, False, "one more full prompt than requested"),
    (10 * 999, None, False, "was not read both before and after"),
    (10 * 998, 10 * 1000, True, None),                                       # BOS + EOS
])
def test_token_evidence_rules(reported, delta, qualifies, needle):
    from kvfit.calibrate.qualify import _tokens
    counter = {"names": ["vllm:prompt_tokens_total"], "metric": "vllm:prompt_tokens_total",
               "before": 0 if delta is not None else None, "after": delta, "delta": delta,
               "error": None}
    tok = _tokens({"total_input_tokens": reported}, 10, 1000, counter)
    assert tok["matches"] is qualifies
    if needle:
        assert needle in tok["problem"]


def test_missing_result_fails_closed(tmp_path):
    with FakeServer(capacity=4) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(
            srv, benchmark_command=BENCH + ["--no-result"], concurrency=[1])))
    assert code == 4
    assert "the benchmark wrote no result file" in doc["points"][0]["reasons"]


def test_stop_on_failure_ends_the_sweep(tmp_path):
    with FakeServer(capacity=4) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(
            srv, benchmark_command=BENCH + ["--skew-at", "2"], stop_on_failure=True)))
    assert code == 4
    assert [p["offered_concurrency"] for p in doc["points"]] == [1, 2]
    assert doc["result"]["points_run"] == 2
    rest = ", ".join(str(n) for n in doc["concurrency"]["points"] if n > 2)
    assert any(f"not run: {rest}" in r for r in doc["result"]["reasons"])


def test_slo_ceiling_is_separate_from_capacity(tmp_path):
    # the fake reports p99 e2e = 50 ms x concurrency: 1 -> 50, 2 -> 100, 4 -> 200
    with FakeServer(capacity=4) as srv:
        code, doc, _ = calibrate(write_preset(tmp_path, attach(srv, max_e2e_ms=120,
                                                               max_ttft_ms=500)))
    assert code == 0
    res = doc["result"]
    assert res["slo_qualified_ceiling"] == 2 and res["measured_capacity_ceiling"] == 4
    p4 = by_point(doc)[4]
    assert p4["qualified"] and p4["slo"]["qualified"] is False
    assert p4["slo"]["failures"] == ["p99 e2e_ms 200 ms > 120 ms"]


def test_sglang_metrics_and_server_info(tmp_path):
    with FakeServer(capacity=2, flavor="sglang") as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(
            srv, engine="sglang", concurrency=[1, 2, 4], max_concurrency=4)))
    assert code == 0, err
    assert doc["engine"]["metrics"]["running"] == ["sglang:num_running_reqs"]
    assert by_point(doc)[4]["resident"]["metric"] == "sglang:num_running_reqs"
    assert doc["result"]["measured_capacity_ceiling"] == 2
    assert doc["endpoint"]["version"] == "0.5.23"
    assert doc["endpoint"]["topology"]["status"] == "reported by the server"


def test_dry_run_contacts_nothing(tmp_path):
    with FakeServer() as srv:
        code, out, err = run_cli("calibrate", write_preset(tmp_path, attach(srv)), "--dry-run")
        assert srv.state.hits == []
    assert code == 0, err
    assert "Dry run: no server, benchmark or engine probe was started or contacted" in out
    for c in (1, 2, 4, 8):
        assert f"c={c}: " in out
    assert "--num-prompts 8" in out and "bench-c8.json" in out


def test_launch_refused_without_cuda(tmp_path, monkeypatch):
    from kvfit.calibrate import server
    monkeypatch.setattr(server, "cuda_devices", lambda python, timeout=300.0: 0)
    marker = tmp_path / "started"
    cmd = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    cal = {"engine": "vllm", "mode": "launch", "server_command": cmd,
           "benchmark_command": BENCH, "concurrency": [1]}
    code, doc, err = calibrate(write_preset(tmp_path, cal))
    assert code == 2
    assert "no CUDA accelerator" in err and "allow_cpu" in err
    assert not marker.exists()


def test_default_launch_needs_a_passing_preflight(tmp_path, monkeypatch):
    from kvfit.calibrate import server
    monkeypatch.setattr(server, "cuda_devices", lambda python, timeout=300.0: 1)
    cal = {"engine": "vllm", "mode": "launch", "python": sys.executable, "concurrency": [1],
           "startup_timeout": 5}
    code, _, err = calibrate(write_preset(tmp_path, cal))
    assert code == 2 and "preflight" in err     # this interpreter has no vLLM


def _launch(tmp_path, port: int, **kw) -> Path:
    cmd = [sys.executable, str(FAKES), "server", "--host", "{host}", "--port", "{port}",
           "--capacity", "4"] + kw.pop("server_extra", [])
    cal = {"engine": "vllm", "mode": "launch", "port": port, "server_command": cmd,
           "benchmark_command": BENCH, "allow_cpu": True, "startup_timeout": 20,
           "request_timeout": 30, "metrics_interval": 0.05} | kw
    return write_preset(tmp_path, cal)


def _closed(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_launch_with_allow_cpu_and_a_server_command(tmp_path):
    port = launch_port()
    code, doc, err = calibrate(_launch(tmp_path, port, concurrency=[1, 2]))
    assert code == 0, err
    srv = doc["server"]
    assert srv["source"] == "calibration.server_command"
    assert srv["command"][-4:] == ["--port", str(port), "--capacity", "4"]
    assert srv["ready_after_s"] is not None and srv["kept"] is False
    assert any("allow_cpu" in w for w in doc["warnings"])
    assert doc["result"]["measured_capacity_ceiling"] == 2
    assert _closed(port), "the launched server was left running"


def test_launch_reads_oom_lines_from_the_server_log(tmp_path):
    port = launch_port()
    code, doc, _ = calibrate(_launch(tmp_path, port, concurrency=[8],
                                     server_extra=["--oom-above", "6"]))
    assert code == 4
    sources = {e["source"] for e in doc["points"][0]["oom"]["evidence"]}
    assert "server log" in sources
    assert _closed(port)


def test_keep_server_leaves_it_running_and_says_where(tmp_path):
    import os
    import signal
    port = launch_port()
    code, doc, err = calibrate(_launch(tmp_path, port, concurrency=[1], keep_server=True))
    try:
        assert code == 0, err
        assert doc["server"]["kept"] is True and not _closed(port)
        assert any("keep_server" in w and str(doc["server"]["pid"]) in w
                   for w in doc["warnings"])
        assert Path(doc["server"]["log"]).is_file()
    finally:
        os.killpg(doc["server"]["pid"], signal.SIGKILL)
        import shutil
        shutil.rmtree(Path(doc["server"]["log"]).parent, ignore_errors=True)


def test_unreachable_endpoint_is_exit_2(tmp_path, closed_port):
    cal = {"engine": "vllm", "mode": "attach", "base_url": f"http://127.0.0.1:{closed_port}",
           "benchmark_command": BENCH, "concurrency": [1], "startup_timeout": 1}
    code, _, err = calibrate(write_preset(tmp_path, cal))
    assert code == 2 and "not ready within startup_timeout" in err


def test_multi_node_needs_attach_or_a_server_command(tmp_path):
    plan = {"model": "openai/gpt-oss-120b", "system": "dgx-spark", "nodes": 2, "tp": 1,
            "context": 90000, "kv_dtype": "bf16", "offline": True}
    launch = {"engine": "vllm", "mode": "launch", "max_concurrency": 32}
    code, _, err = calibrate(write_preset(tmp_path, launch, plan), "--dry-run")
    assert code == 2 and "cannot provision" in err and "attach" in err
    custom = launch | {"server_command": ["/opt/cluster/start-router.sh", "{port}"]}
    code, doc, err = calibrate(write_preset(tmp_path, custom, plan), "--dry-run")
    assert code == 0, err
    assert doc["server"]["command"] == ["/opt/cluster/start-router.sh", "8000"]


def test_secrets_come_from_the_env_and_are_redacted(tmp_path, monkeypatch):
    secret = "s3cr3t-token-8421"
    monkeypatch.setenv("KVFIT_TEST_SECRET", secret)
    out_file = tmp_path / "cal.json"
    with FakeServer(capacity=4, api_key=secret) as srv:
        cal = attach(srv, api_key_env="KVFIT_TEST_SECRET", concurrency=[1, 2],
                     benchmark_command=BENCH + ["--print-key"])
        code, out, err = run_cli("calibrate", write_preset(tmp_path, cal), "--json",
                                 "--output", out_file)
    assert code == 0, err                      # the fake server accepted the key
    text = out + err + out_file.read_text()
    assert secret not in text
    assert "<redacted $KVFIT_TEST_SECRET>" in out
    monkeypatch.delenv("KVFIT_TEST_SECRET")
    code, _, err = run_cli("calibrate", write_preset(tmp_path, cal))
    assert code == 2 and "KVFIT_TEST_SECRET" in err


def test_secret_in_a_launch_command_is_redacted_in_the_dry_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KVFIT_TEST_SECRET", "hunter2-abcdef")
    cal = {"engine": "sglang", "mode": "launch", "api_key_env": "KVFIT_TEST_SECRET",
           "concurrency": [1]}
    code, out, err = run_cli("calibrate", write_preset(tmp_path, cal), "--dry-run")
    assert code == 0, err
    assert "hunter2-abcdef" not in out + err
    assert "--api-key '<redacted $KVFIT_TEST_SECRET>'" in out


@pytest.mark.parametrize("table, needle", [
    ({"engine": "vllm", "bogus": 1}, "calibration.bogus"),
    ({"engine": "vllm", "api_key": "inline"}, "calibration.api_key"),
    ({"engine": "vllm", "max_concurrency": "8"}, "calibration.max_concurrency"),
    ({"engine": "vllm", "stop_on_failure": 1}, "calibration.stop_on_failure"),
    ({"engine": "vllm", "concurrency": [1, "2"]}, "calibration.concurrency"),
    ({"engine": "vllm", "mode": "serve"}, "calibration.mode"),
    ({"engine": "tgi"}, "calibration.engine"),
    ({"engine": "vllm", "mode": "attach", "port": 70000}, "calibration.port"),
    ({"engine": "vllm", "benchmark_command": ["bench", "{nope}", "{result_file}"]}, "{nope}"),
    ({"engine": "vllm", "benchmark_command": ["bench", "{concurrency}"]}, "{result_file}"),
    ({"engine": "vllm", "server_command": ["serve", "{concurrency}"]}, "server_command"),
    ({"engine": "vllm", "max_tpot_ms": 50}, "output_tokens >= 2"),
    ({"engine": "vllm", "mode": "attach", "base_url": "ftp://x"}, "base_url"),
    ({"engine": "vllm", "mode": "attach", "base_url": "http://[::1"}, "base_url 'http://[::1'"),
    ({"engine": "vllm", "mode": "attach", "base_url": "http://h:port"}, "base_url"),
])
def test_bad_calibration_tables_exit_2_naming_the_key(tmp_path, table, needle):
    preset = write_preset(tmp_path, table)
    code, _, err = run_cli("calibrate", preset, "--dry-run")
    assert code == 2 and needle in err, err
    assert "Traceback" not in err


def test_the_plan_command_notes_and_checks_the_calibration_table(tmp_path):
    preset = write_preset(tmp_path, {"engine": "vllm", "mode": "attach", "port": 8000})
    code, out, err = run_cli(preset)
    assert code == 0 and "kvfit: note:" in err and "kvfit calibrate" in err
    assert out.startswith("kvfit: openai--gpt-oss-20b")
    code, _, err = run_cli(write_preset(tmp_path, {"engine": "vllm", "typo": True}))
    assert code == 2 and "calibration.typo" in err
    code, _, err = run_cli("calibrate", _no_table(tmp_path))
    assert code == 2 and "no [calibration] table" in err


def _no_table(tmp_path: Path) -> Path:
    path = tmp_path / "plain.toml"
    path.write_text("\n".join(f"{k} = {_toml(v)}" for k, v in PLAN.items()) + "\n")
    return path


def test_output_is_written_atomically_and_schema_valid(tmp_path):
    out_file = tmp_path / "out" / "calibration.json"
    out_file.parent.mkdir()
    with FakeServer(capacity=4) as srv:
        preset = write_preset(tmp_path, attach(srv, concurrency=[1, 4]))
        code, out, err = run_cli("calibrate", preset, "--output", out_file)
    assert code == 0, err
    doc = json.loads(out_file.read_text())
    validate(doc, SCHEMA)
    assert [p.name for p in out_file.parent.iterdir()] == ["calibration.json"]
    assert "CALIBRATED (exit 0)" in out and "Result (host measurement):" in out
    code, _, err = run_cli("calibrate", preset, "--output", tmp_path / "missing" / "x.json")
    assert code == 2 and "does not exist" in err


def test_dual_spark_example_dry_run():
    example = ROOT / "examples" / "calibration-dual-spark.toml"
    code, doc, err = calibrate(example, "--dry-run")
    assert code == 0, err
    plan = doc["plan"]
    assert (plan["tp"], plan["dp"], plan["nodes"]) == (1, 2, 2)
    assert doc["mode"] == "attach" and doc["server"] is None
    # The boundary is the engine's (the preset's calibration engine answers the plan): the
    # same number a plan of the preset with --engine vllm recommends.
    code, r = run_json(example, "--engine", "vllm")
    assert plan["predicted_boundary"] == r["recommended"]["max_sequences"]
    assert doc["concurrency"]["points"] == sorted({1, 2, 4, 8, 16, 32, plan["predicted_boundary"]})
    first = doc["benchmarks"][0]["command"]
    assert "--random-input-len" in first and first[first.index("--random-input-len") + 1] == "89999"
    assert first[first.index("--random-range-ratio") + 1] == "0.0"


def test_kvfit_calibrate_console_script(tmp_path):
    import subprocess
    text = (ROOT / "pyproject.toml").read_text()
    assert 'kvfit-calibrate = "kvfit.cli.calibrate_cmd:entry"' in text
    example = ROOT / "examples" / "calibration-dual-spark.toml"
    script = ("import sys; sys.argv = ['kvfit-calibrate', sys.argv[1], '--dry-run']; "
              "from kvfit.cli.calibrate_cmd import entry; entry()")
    proc = subprocess.run([sys.executable, "-c", script, str(example)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Concurrency points: 1, 2, 4, 8, 16, " in proc.stdout


def test_metrics_names_and_series_combination():
    from kvfit.calibrate import metrics
    from kvfit.engines.spec import rules_for
    wanted = metrics.names("vllm", rules_for("vllm", "0.19.0"))
    assert wanted["kv_usage"][:2] == ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]
    assert wanted["prompt_tokens"] == ["vllm:prompt_tokens_total", "vllm:prompt_tokens"]
    two = ('vllm:prompt_tokens_total{engine="0",model_name="m"} 100.0\n'
           'vllm:prompt_tokens_created{engine="0",model_name="m"} 1.7e+09\n'
           'vllm:prompt_tokens_total{engine="1",model_name="m"} 50.0\n')
    assert metrics.read_counter(metrics.parse(two), wanted["prompt_tokens"]) == (
        150.0, "vllm:prompt_tokens_total")                     # DP engines are summed
    text = ('vllm:num_requests_running{engine="0",model_name="m"} 3.0\n'
            'vllm:num_requests_running{engine="1",model_name="m"} 2.0\n'
            'vllm:num_requests_waiting{engine="0",model_name="m"} 0.0\n'
            'vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.5\n'
            'vllm:gpu_cache_usage_perc{engine="1",model_name="m"} 0.75\n')
    got = metrics.read(metrics.parse(text), wanted)
    assert got["running"] == 5 and got["waiting"] == 0        # DP engines are summed
    assert got["kv_usage"] == 0.75 and got["kv_usage_metric"] == "vllm:gpu_cache_usage_perc"
    sgl = metrics.names("sglang", rules_for("sglang", "0.5.23"))
    text = ('sglang:num_running_reqs{tp_rank="0",dp_rank="0"} 4\n'
            'sglang:num_running_reqs{tp_rank="1",dp_rank="0"} 4\n'
            'sglang:num_running_reqs{tp_rank="0",dp_rank="1"} 3\n')
    assert metrics.read(metrics.parse(text), sgl)["running"] == 7   # TP ranks count once


@pytest.mark.parametrize("explicit, cap, predicted, points", [
    (None, 32, 16, [1, 2, 4, 8, 16, 32]),
    (None, 32, 20, [1, 2, 4, 8, 16, 20, 32]),
    (None, 8, 20, [1, 2, 4, 8]),
    (None, None, 4, [1, 2, 4, 8]),
    (None, None, 5, [1, 2, 4, 5, 8]),
    ((8, 1, 3), None, 40, [1, 3, 8]),
])
def test_concurrency_points(explicit, cap, predicted, points):
    from kvfit.calibrate.points import choose
    assert choose(explicit, cap, predicted)[0] == points


def test_no_prediction_and_no_cap_is_a_usage_error():
    from kvfit.calibrate.points import choose
    from kvfit.errors import UsageError
    with pytest.raises(UsageError, match="max_concurrency"):
        choose(None, None, 0)
