"""Every JSON report snapshot validates against the published report schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import validate

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
REPORTS = sorted((ROOT / "tests" / "__snapshots__").rglob("*.json"))


@pytest.mark.parametrize("path", REPORTS, ids=[p.stem[:80] for p in REPORTS])
def test_report_snapshot_matches_schema(path):
    report = json.loads(path.read_text())
    if "report_version" not in report:
        pytest.skip("not a plan report")
    validate(report, SCHEMA)


def test_reports_exist():
    assert len(REPORTS) >= 3


@pytest.mark.parametrize("breaking", [
    lambda r: r.pop("layouts"),                         # a required key missing
    lambda r: r.update(context_tokens="128k"),          # a number given as text
    lambda r: r["layouts"][0].update(tp=[8]),           # deep inside a layout
])
def test_the_shared_validator_refuses_what_jsonschema_refuses(breaking):
    """conftest.validate (one validator per schema) raises where jsonschema.validate raises,
    with the same message; a valid report passes both."""
    import jsonschema

    report = json.loads(next(p for p in REPORTS if "report_version" in p.read_text()).read_text())
    validate(report, SCHEMA)
    jsonschema.validate(report, SCHEMA)
    breaking(report)
    with pytest.raises(jsonschema.ValidationError) as ours:
        validate(report, SCHEMA)
    with pytest.raises(jsonschema.ValidationError) as theirs:
        jsonschema.validate(report, SCHEMA)
    assert ours.value.message == theirs.value.message
