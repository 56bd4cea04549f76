"""A /metrics gauge that reads 1e308, NaN, -1, 2.5 or 0 while requests run never yields a
"calibrated" sweep: implausible readings fail the point closed, with the reason named."""

from __future__ import annotations

import pytest
from test_calibrate import attach, by_point, calibrate, write_preset
from test_calibrate_fakes import FakeServer

from kvfit.calibrate.metrics import plausible, read


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
