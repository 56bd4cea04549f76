"""Coverage and monotonicity over the audited matrix."""

from __future__ import annotations

from collections import defaultdict


def coverage(cells: list[dict]) -> dict:
    """Equal-weight coverage of required cells, and of families whose required cells all answer."""
    required = [c for c in cells if c["required"]]
    answered = [c for c in required if c["status"] == "answered"]
    families: dict[str, bool] = defaultdict(lambda: True)
    for c in required:
        families[c["family"]] &= c["status"] == "answered"
    supported = sorted(f for f, ok in families.items() if ok)
    return {"required_cells": len(required), "answered_cells": len(answered),
            "coverage": len(answered) / len(required) if required else 1.0,
            "families": len(families), "supported_families": supported,
            "family_coverage": len(supported) / len(families) if families else 1.0}


def monotonicity(cells: list[dict]) -> list[str]:
    """Problems: state shrinking with context, capacity shrinking with memory, bad topology."""
    out = []
    by_model: dict[str, list[dict]] = defaultdict(list)
    for c in cells:
        if c["status"] in ("answered", "not judged"):     # state was counted
            by_model[c["model"]].append(c)
    for model, rows in by_model.items():
        rows.sort(key=lambda c: c["context_tokens"])
        for a, b in zip(rows, rows[1:], strict=False):
            if a["kv_dtype"] == b["kv_dtype"] and b["state_bytes"] < a["state_bytes"]:
                out.append(f"{model}: state shrinks from {a['state_bytes']} B at "
                           f"{a['context_tokens']} to {b['state_bytes']} B at {b['context_tokens']}")
        for c in rows:
            out += _memory_order(model, c)
    return out


def _memory_order(model: str, cell: dict) -> list[str]:
    out = []
    fleets = [f for f in cell.get("fleets", ()) if f["status"] == "answered"]
    out += [f"{model} on {f['fleet']}: a TP x DP layout does not use the fleet's GPUs exactly"
            for f in fleets if not f["topology_ok"]]
    by_count: dict[int, list[dict]] = defaultdict(list)
    for f in fleets:
        if f["max_sequences"] is not None and "node" not in f["fleet"]:
            by_count[f["gpus"]].append(f)
    for group in by_count.values():
        group.sort(key=lambda f: f["memory_bytes_per_gpu"])
        for a, b in zip(group, group[1:], strict=False):
            if b["memory_bytes_per_gpu"] > a["memory_bytes_per_gpu"] and \
                    b["max_sequences"] < a["max_sequences"]:
                out.append(f"{model} at {cell['context_tokens']}: {b['fleet']} holds "
                           f"{b['max_sequences']} < {a['fleet']}'s {a['max_sequences']} "
                           "despite more memory per GPU")
    return out
