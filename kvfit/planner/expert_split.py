"""Routed-expert bytes from the architecture spec's `parameters:` rows.

A row is a routed-expert tensor when the spec tags it (`routed:`, by default whether the row
repeats per routed expert with `experts:`). The same rows serve two purposes:

- the weight estimate's split: routed rows vs every other row, used when no safetensors
  headers and no pinned checkpoint-tensor-split.json are available (labelled an estimate);
- name patterns for real headers: a row's module template, `{i}` any layer and `{e}` the
  expert index (a stacked expert tensor without `{e}` is shared evenly by all experts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Split:
    """Routed and other bytes of an estimate (bytes), the routed-expert count, and rows."""

    routed_bytes: int
    other_bytes: int
    experts: int
    routed_rows: int


def routed_rows(arch) -> list:
    """The spec's routed-expert tensor rows (empty without `parameters:` or tags)."""
    params = getattr(arch, "parameters", None)
    return [t for t in (params.tensors if params else ()) if t.routed]


def split_of(estimate) -> Split | None:
    """The routed/other split of a WeightEstimate, or None when no row is routed."""
    rows = [r for r in estimate.rows if r.routed]
    if not rows:
        return None
    counts = {r.experts for r in rows if r.experts}
    if len(counts) != 1:
        return None
    routed = sum(r.bytes for r in rows)
    return Split(routed, estimate.total_bytes - routed, counts.pop(), len(rows))


def _template(module: str) -> re.Pattern:
    """A header-name pattern for a module template. A per-expert module ends at a `.`
    (`.weight`, `.weight_scale_inv`); a stacked one also takes a `_` suffix, as checkpoints
    store MXFP4 stacks as `<name>_blocks` / `<name>_scales`."""
    text = re.escape(module).replace(r"\{i\}", r"\d+").replace(r"\{r\}", r"\d+")
    end = r"(?:\.|$)" if r"\{e\}" in text else r"(?:[._]|$)"
    text = text.replace(r"\{e\}", r"(?P<expert>\d+)", 1).replace(r"\{e\}", r"\d+")
    return re.compile(rf"^{text}{end}")


def header_patterns(arch) -> list[re.Pattern]:
    """Name patterns of the routed-expert rows, for classifying safetensors headers."""
    seen, out = set(), []
    for t in routed_rows(arch):
        if t.module not in seen:
            seen.add(t.module)
            out.append(_template(t.module))
    return out


def classify(name: str, patterns: list[re.Pattern]) -> tuple[bool, int | None]:
    """(is a routed-expert tensor, its expert index or None for a stacked tensor)."""
    for p in patterns:
        m = p.search(name)
        if m is not None:
            return True, int(m.group("expert")) if "expert" in p.groupindex else None
    return False, None
