"""Deterministic JSON rendering of a report."""

from __future__ import annotations

import json


def render_json(report: dict) -> str:
    """Stable, sorted-key JSON with a trailing newline."""
    try:
        return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as exc:  # NaN or Infinity: JSON cannot carry them
        from ..errors import ConfigError
        raise ConfigError(f"the report holds a number JSON cannot carry ({exc}); an input "
                          "value is not finite.") from None
