"""`kvfit audit FRONTIER.toml`: plan a named frontier of checkpoints x contexts x fleets,
check every answer against an independent formula and against monotonicity, and report
coverage against the thresholds the TOML sets."""
