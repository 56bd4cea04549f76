"""calibrate never reports a measured capacity above what it offered: a running-requests
gauge summed over 50 engines x 8 ranks (50 with the ranks merged) while at most 2 requests
were sent fails the point closed, naming the reading."""

from __future__ import annotations

from test_calibrate import attach, by_point, calibrate, write_preset
from test_calibrate_fakes import FakeServer

# The fake prints its own series (engine "0") with this literal as its value; the literal
# goes on with 49 x 8 more series (engines 1-49, tp_rank 0-7), each reading 1: ranks of one
# engine count once, engines are summed (kvfit/calibrate/metrics.py), 1 + 49 = 50.
SERIES = "".join(f'\nvllm:num_requests_running{{engine="{e}",model_name="fake-model",'
                 f'tp_rank="{r}"}} 1.0' for e in range(1, 50) for r in range(8))


def test_a_gauge_above_the_offered_concurrency_is_not_a_capacity(tmp_path):
    with FakeServer(capacity=4, running_gauge="1.0" + SERIES) as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(srv, concurrency=[2])))
    assert code == 4 and doc["status"] == "not-calibrated", err
    point = by_point(doc)[2]
    assert point["resident"]["max_running"] == 50          # the reading is recorded ...
    assert not point["qualified"]                          # ... and not believed
    assert any("read 50 while at most 2 requests were offered" in r for r in point["reasons"])
    assert doc["result"]["measured_capacity_ceiling"] is None
    assert "internal error" not in err and err.count("\n") == 1, err


def test_a_gauge_at_the_offered_concurrency_still_calibrates(tmp_path):
    with FakeServer(capacity=4) as srv:
        code, doc, err = calibrate(write_preset(tmp_path, attach(srv, concurrency=[2])))
    assert code == 0, err
    # two requests offered, the fake holds up to 4: both resident at once
    assert doc["result"]["measured_capacity_ceiling"] == 2
