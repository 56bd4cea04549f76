"""Moved to kvfit.api.preset (TOML presets are read by the API's plan); these names stay
importable from here."""

from ..api.preset import load_preset, merge, read_preset, wants_json

__all__ = ["load_preset", "merge", "read_preset", "wants_json"]
