"""JSON output never carries NaN or Infinity (invalid JSON): a clean KvfitError instead."""

from __future__ import annotations

import pytest

from kvfit.calibrate.report import render_json as calibration_json
from kvfit.errors import ConfigError, KvfitError
from kvfit.report.jsonout import render_json


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_report_json_refuses_non_finite_numbers(value):
    with pytest.raises(ConfigError, match="JSON cannot carry"):
        render_json({"fits": True, "weights": {"bytes": value}})
    with pytest.raises(KvfitError, match="JSON cannot carry"):
        calibration_json({"points": [{"ttft_ms": value}]})


def test_finite_reports_render_unchanged():
    assert render_json({"b": 1, "a": 0.5}) == '{\n  "a": 0.5,\n  "b": 1\n}\n'


def test_calibration_output_file_refuses_non_finite_numbers_and_leaves_nothing(tmp_path):
    from kvfit.calibrate.report import write_atomic

    with pytest.raises(KvfitError, match="JSON cannot carry"):
        write_atomic(tmp_path / "out.json", {"ttft_ms": float("nan")})
    assert list(tmp_path.iterdir()) == []
    write_atomic(tmp_path / "out.json", {"ttft_ms": 1.5})
    assert (tmp_path / "out.json").read_text() == '{\n  "ttft_ms": 1.5\n}\n'
