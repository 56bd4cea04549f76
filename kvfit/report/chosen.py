"""The recommended layout in full, read from the report itself (not asked of the planner)."""

from __future__ import annotations


def chosen_layout(report: dict) -> dict | None:
    """The entry of `layouts` that `recommended` names, or None."""
    rec = report.get("recommended")
    return next((x for x in report.get("layouts", ()) if rec and x["id"] == rec["id"]), None)
