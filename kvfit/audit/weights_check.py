"""The audit's weight cross-check: where a model's weights come from a pinned safetensors index,
the spec's config-shape estimate is computed as well and compared with the index's total_size,
so a tensor list that drifts from the checkpoint shows up as a byte difference."""

from __future__ import annotations

from fractions import Fraction

from ..checkpoint.metadata import once
from ..checkpoint.weights import config_estimate
from ..errors import KvfitError
from ..state.resolve import resolve_architecture


def weights_check(meta, report) -> dict | None:
    """{index_bytes, estimate_bytes, difference, exact, basis} for a plan whose weights are a
    safetensors index total (`meta`: the checkpoint that plan read); None for any other
    weight source (files, estimate, user)."""
    weights = report.weights
    if weights.source != "safetensors index":
        return None
    try:         # the plan's own resolution and estimate of this checkpoint (each made once)
        res = once(meta, ("resolution",), lambda: resolve_architecture(meta.config))
        width = Fraction(report.dtypes.model.bytes_per_value)
        est, basis = once(meta, ("estimate", width, False), lambda: config_estimate(meta, res, width))
    except KvfitError as err:
        est, basis = None, err.message
    if est is None:
        return {"index_bytes": weights.bytes, "estimate_bytes": None, "difference": None,
                "exact": None, "basis": basis}
    diff = est.total_bytes - weights.bytes
    return {"index_bytes": weights.bytes, "estimate_bytes": est.total_bytes,
            "difference": diff, "exact": diff == 0, "basis": basis}


def summary(cells: list[dict]) -> dict:
    """How many models were compared, and how many estimates equal their index exactly (each
    model once, however many contexts it is audited at)."""
    seen: dict[str, dict] = {}
    for c in cells:
        if c.get("weights_check") is not None:
            seen.setdefault(c["model"], c["weights_check"])
    checks = list(seen.values())
    return {"compared": sum(1 for w in checks if w["exact"] is not None),
            "exact": sum(1 for w in checks if w["exact"]),
            "differ": sorted(k for k, w in seen.items() if w["exact"] is False)}
