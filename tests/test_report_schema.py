"""Every JSON report snapshot validates against the published report schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
REPORTS = sorted((ROOT / "tests" / "__snapshots__").rglob("*.json"))


@pytest.mark.parametrize("path", REPORTS, ids=[p.stem[:80] for p in REPORTS])
def test_report_snapshot_matches_schema(path):
    report = json.loads(path.read_text())
    if "report_version" not in report:
        pytest.skip("not a plan report")
    jsonschema.validate(report, SCHEMA)


def test_reports_exist():
    assert len(REPORTS) >= 3
