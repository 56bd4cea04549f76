"""Deterministic JSON rendering of a report."""

from __future__ import annotations

import json
import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def render_json(report: dict) -> str:
    """Stable, sorted-key JSON with a trailing newline. A lone surrogate from an input (it
    cannot be written as UTF-8) becomes its \\uXXXX escape, which JSON allows."""
    try:
        text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"
    except ValueError as exc:  # NaN or Infinity: JSON cannot carry them
        from ..errors import ConfigError
        raise ConfigError(f"the report holds a number JSON cannot carry ({exc}); an input "
                          "value is not finite.") from None
