"""`kvfit calibrate`: measure the planned deployment on the serving host.

    kvfit calibrate PRESET.toml [--dry-run] [--output FILE] [--json]

The preset's plan keys give the deployment; its strict [calibration] table (config.py)
says how to reach the engine (launch it or attach to it) and which concurrency points to
offer. Each point runs the engine project's own serving benchmark (bench.py) while /metrics
is sampled (metrics.py); qualify.py keeps offered concurrency, resident requests, queueing,
completions, SLOs and OOM evidence as separate facts; report.py writes and renders the
result. Exit 0: calibrated; 4: the sweep ran but did not fully calibrate; 2: configuration
or launch errors.
"""

from __future__ import annotations

from ..errors import KvfitError


class CalibrationError(KvfitError):
    """A launch or endpoint problem that stops calibration before a sweep result (exit 2)."""

    kind = "calibration error"
