"""Moved to kvfit.api.request (the API builds a plan's request; the CLI calls it); these names
stay importable from here."""

from ..api.request import FITS, NOT_JUDGED, NOT_MET, planned, request_from, verdict_code

__all__ = ["FITS", "NOT_JUDGED", "NOT_MET", "planned", "request_from", "verdict_code"]
