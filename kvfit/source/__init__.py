"""Model sources: turn a reference into Metadata (local directories here; the Hub in kvfit.hub)."""
