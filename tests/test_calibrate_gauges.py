"""A /metrics gauge that reads 1e308, NaN, -1, 2.5 or 0 while requests run never yields a
"calibrated" sweep: implausible readings fail the point closed, with the reason named."""

from __future__ import annotations

import pytest
from test_calibrate import attach, by_point, calibrate, write_preset
from test_calibrate_fakes import FakeServer

from kvfit.calibrate.metrics import parse, plausible, read


@pytest.mark.parametrize(("gauge", "needle"), [
    ("1e308", "vllm:num_requests_running read 1e+308"),
    ("NaN", "vllm:num_requests_running read nan"),
    ("-1", "vllm:num_requests_running read -1.0"),
    ("2.5", "vllm:num_requests_running read 2.5"),
    ("0", "never rose above 0 while 2 requests completed"),
])
def test_implausible_running_gauge_is_not_calibrated(tmp_path, gauge, needle):
    with FakeServer(capacity=4, running_gauge=gauge) as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(srv, concurrency=[2])))
    # exit 4 (README: the sweep ran but did not calibrate), never "calibrated", and one
    # paragraph on stderr that names the reading
    assert code == 4 and doc["status"] == "not-calibrated"
    assert err.startswith("kvfit: not calibrated: concurrency 2: ") and err.count("\n") == 1, err
    assert err.count(needle) == 1 and "(exit 4)" in err       # each distinct reading once
    point = by_point(doc)[2]
    assert not point["qualified"]
    assert any(needle in r for r in point["reasons"]), point["reasons"]
    assert doc["result"]["measured_capacity_ceiling"] is None


def test_plausibility_rules():
    assert plausible("running", 4.0) and plausible("waiting", 0.0)
    assert not plausible("running", 1e308) and not plausible("running", 3.5)
    assert not plausible("running", float("inf")) and not plausible("waiting", -1.0)
    assert plausible("kv_usage", 0.75) and plausible("kv_usage", 1.0)
    assert not plausible("kv_usage", 1.5) and not plausible("kv_usage", float("nan"))
    got = read({"vllm:num_requests_running": [({}, 1e308)]},
               {"running": ["vllm:num_requests_running"]})
    assert got["running"] is None and got["running_bad"] == "vllm:num_requests_running read 1e+308"


def test_nan_latencies_never_reach_the_json_record(tmp_path):
    import json

    from test_calibrate import BENCH, run_cli

    def refuse(name):
        raise AssertionError(f"{name} in the JSON output")
    with FakeServer(capacity=4) as srv:
        preset = write_preset(tmp_path, attach(srv, concurrency=[2],
                                               benchmark_command=BENCH + ["--nan-latency"]))
        code, out, err = run_cli("calibrate", preset, "--json")
    assert code == 0, err
    doc = json.loads(out, parse_constant=refuse)
    latency = by_point(doc)[2]["latency"]
    assert latency["ttft_ms"] is None and latency["tpot_ms"] is None
    assert latency["e2e_ms"] == 100.0                      # 50 ms x concurrency 2


def test_metrics_page_is_read_by_prometheus_client_with_typed_counters():
    # A counter family declared with # TYPE: prometheus_client names its sample with _total,
    # the name kvfit looks up first; labels keep their escapes decoded.
    page = ('# HELP vllm:prompt_tokens Prompt tokens.\n# TYPE vllm:prompt_tokens counter\n'
            'vllm:prompt_tokens_total{model_name="a\\"b",engine="0"} 1234\n'
            '# TYPE vllm:num_requests_running gauge\n'
            'vllm:num_requests_running{engine="0"} 3\n')
    got = parse(page)
    assert got["vllm:prompt_tokens_total"] == [({"model_name": 'a"b', "engine": "0"}, 1234.0)]
    assert got["vllm:num_requests_running"] == [({"engine": "0"}, 3.0)]


def test_one_malformed_line_costs_that_line_not_the_page():
    # prometheus_client refuses the whole page for the line without a value; read line by
    # line, the running gauge is still read and the broken line is dropped.
    page = "vllm:num_requests_running 2\nvllm:num_requests_waiting\n"
    assert parse(page) == {"vllm:num_requests_running": [({}, 2.0)]}


def test_gauge_past_float_range_is_rejected_not_a_crash():
    # a 400-digit integer: the parser keeps it exact; as a float it is infinite, implausible
    got = read(parse("vllm:num_requests_running " + "9" * 400 + "\n"),
               {"running": ["vllm:num_requests_running"]})
    assert got["running"] is None and got["running_bad"].startswith("vllm:num_requests_running read inf")
