"""Text lines for a plan's `tune` section (--tune): the answer, what each setting costs in
resident sequences, the launch command, and the trade-offs that are not memory.

Renderers never compute: every number and sentence below is read from the report.
"""

from __future__ import annotations

from ..model.plan import Report
from .words import number, table


def tune_lines(r: Report) -> list[str]:
    t = r.tune
    if not t:
        return []
    head = "HOLDS" if t.holds else "DOES NOT HOLD" if t.holds is False else "UNKNOWN"
    out = ["", f"Tuned settings ({r.capacity_model.label}; --tune tried "
               f"{number(t.combinations)} combinations): {head}: {t.summary}."]
    rows = [["setting", "flag", "default", "seqs", "recommended", "seqs"]]
    for s in t.settings:
        rows.append([s.name, s.flag, s.default_text, number(s.max_sequences_at_default),
                     s.recommended_text + (" *" if s.changed else ""),
                     number(s.max_sequences)])
    out += table(rows, {3, 5})
    out.append("  seqs: resident sequences with that one setting at the default (the others "
               "as recommended), and as recommended; * changed")
    out += [f"  {s.flag} at {s.default_text}: the engine refuses to start: "
            f"{s.default_refusal}" for s in t.settings if s.default_refusal]
    cmd = t.command
    if cmd and cmd.launch:
        out.append(f"  launch ({cmd.layout}):")
        out += [f"    host {h.host}: {h.launch}" for h in cmd.hosts] or [f"    {cmd.launch}"]
    elif cmd:
        out.append("  launch: none; " + "; ".join(cmd.notes or ()))
    out += [f"  trade-off: {w}" for w in t.warnings]
    return out
