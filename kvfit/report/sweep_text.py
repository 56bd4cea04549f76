"""The text of a `--sweep`: one row per grid cell, max resident sequences and verdict per layout.

Renderers never compute: every number comes from the report's `sweep` cells, which are the
plans of those cells.
"""

from __future__ import annotations

from ..model.plan import Report
from ..model.sweep import SweepCell, SweepLayout

VERDICT = {True: "fits", False: "no", None: "?"}
EXIT = {0: "0: every cell meets the target", 1: "1: some cell does not meet the target",
        5: "5: some cell could not be judged (weights unknown, or no hardware)"}


def _table(rows: list[list[str]], left: int) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) if i < left or i == len(r) - 1 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in rows]


def _cell(x: SweepLayout | None) -> str:
    if x is None:
        return "-"
    if not x.valid:
        return "invalid"
    n = x.max_sequences
    return f"{'?' if n is None else f'{n:,}'} {VERDICT[x.fits]}"


def _columns(cells: tuple[SweepCell, ...]) -> list[tuple[str, str | None]]:
    """(id, heading) of every layout any cell has, in order of first appearance. The heading
    is the layout's label when every cell labels it alike; None when the cells' own layouts
    differ (under --sweep gpus or nodes, tp1 is TP=1 x DP=1 on 1 GPU and TP=1 x DP=8 on 8):
    the column is then headed by the id and each cell names its own layout."""
    labels: dict[str, list[str]] = {}
    for c in cells:
        for x in c.layouts:
            seen = labels.setdefault(x.id, [])
            if x.label not in seen:
                seen.append(x.label)
    return [(i, labs[0] if len(labs) == 1 else None) for i, labs in labels.items()]


def _own(x: SweepLayout | None, heading: str | None) -> str:
    """A cell under a column; it names its own layout when the column heading cannot."""
    return _cell(x) if heading is not None or x is None else f"{x.label}: {_cell(x)}"


def _header(r: Report) -> list[str]:
    m, sw = r.model, r.sweep
    rev = f"@{m.revision[:12]}" if m.revision else ""
    hw = r.hardware
    counted = not {"gpus", "nodes"} & {a.axis for a in sw.axes}
    where = ("no hardware (state only)" if not hw else
             (f"{hw.nodes} x " if counted else "") + hw.system if hw.system else
             (f"{hw.gpus} x " if counted else "") + hw.id)
    axes = " x ".join(f"{a.axis} ({len(a.values)})" for a in sw.axes)
    out = [f"kvfit sweep: {m.source}{rev} ({m.origin}) | {r.architecture.id} | "
           f"{where} | {axes} = {len(sw.cells)} plans",
           f"Capacity model: {r.capacity_model.label}, the same in every cell; each cell "
           "is the single plan of its values (run one without --sweep for its full report)."]
    if r.rope_scaling:
        rope = r.rope_scaling
        out.append(f"RoPE {rope.rope_type} x{rope.factor:g} ({rope.source}): maximum "
                   f"context {rope.max_context_tokens:,} tokens.")
    if r.weights.source == "config estimate":
        out.append("Weights ESTIMATED from config shapes in every cell (see Warnings).")
    return out


def render_sweep_text(r: Report) -> str:
    sw = r.sweep
    names = [a.axis for a in sw.axes]
    cols = _columns(sw.cells)
    gpus = "gpus" not in names                     # the swept gpus are not printed twice
    head = (names + ["tokens"] + (["gpus"] if gpus else []) + ["target"]
            + [lab or i for i, lab in cols] + ["recommended"])
    rows = [head]
    for c in sw.cells:
        by_id = {x.id: x for x in c.layouts}
        rec = c.recommended
        rows.append([c.values[n] for n in names]
                    + [f"{c.context_tokens:,}" + ("*" if c.hypothetical else "")]
                    + (["-" if c.gpus is None else str(c.gpus)] if gpus else [])
                    + ["-" if c.required_sequences is None else f"{c.required_sequences:,}"]
                    + [_own(by_id.get(i), lab) for i, lab in cols]
                    + [f"{rec.label} ({VERDICT[c.fits]})" if rec else
                       ("- (?)" if c.fits is None else "none (no)")])
    out = _header(r) + ["", "Max resident sequences per layout (fits / no / ? not judged):"]
    out += _table(rows, len(names))
    if any(c.hypothetical for c in sw.cells):
        out.append("  * HYPOTHETICAL: beyond the declared maximum context "
                   f"({r.max_context_tokens:,} tokens; --allow-context-overflow).")
    if sw.warnings:
        out += ["", "Warnings:"] + [f"  - {w}" for w in sw.warnings]
    out += ["", f"Exit {EXIT[sw.exit_code]}."]
    return "\n".join(out) + "\n"
