"""Deterministic JSON rendering of a report."""

from __future__ import annotations

import json


def render_json(report: dict) -> str:
    """Stable, sorted-key JSON with a trailing newline."""
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
