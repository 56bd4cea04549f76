"""Per-sequence inference state: match a config to a spec, resolve fields, count bytes."""
