"""A tiny path language for case expectations: `a.b`, `list[key=value]`, `list[0]`."""

from __future__ import annotations

import re

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]+)\])?")


def get(data, path: str):
    """Follow `layouts[tp=8].per_rank.state_bytes_per_sequence` through nested dicts/lists."""
    node = data
    for part in path.split("."):
        m = _STEP.fullmatch(part)
        if not m:
            raise KeyError(f"bad path step {part!r}")
        node = node[m.group(1)]
        sel = m.group(2)
        if sel is None:
            continue
        if sel.isdigit():
            node = node[int(sel)]
            continue
        key, _, want = sel.partition("=")
        hits = [x for x in node if str(x.get(key)) == want]
        if len(hits) != 1:
            raise KeyError(f"{path}: {len(hits)} entries with {key}={want}")
        node = hits[0]
    return node
