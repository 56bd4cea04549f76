"""Text lines for the direct questions of a plan: --min-gpus, --max-context and --systems.

Renderers never compute: every number below is read from the report.
"""

from __future__ import annotations

from ..model.plan import Report
from .words import count, number, table


def inverse_lines(r: Report) -> list[str]:
    """The --min-gpus or --max-context answer (nothing when neither was asked)."""
    inv = r.inverse
    if not inv:
        return []
    need = count(inv.required_sequences, "sequence")
    if inv.question == "min_gpus":
        if inv.min_gpus is None:
            return [f"MIN GPUS: no count of {inv.hardware} up to "
                    f"{number(inv.searched_up_to)} holds {need}."]
        rec = inv.recommended
        return [f"MIN GPUS: {number(inv.min_gpus)} x {inv.hardware} ({rec.label}) "
                f"hold {number(rec.max_sequences)} >= {need} "
                f"(searched 1..{number(inv.searched_up_to)})."]
    out = [f"MAX CONTEXT: longest context (1..{number(inv.upper_bound_tokens)}) at which "
           f"{need} {'fits' if inv.required_sequences == 1 else 'fit'}, per layout:"]
    rows = [["layout", "placement", "max context", "sequences there"]]
    rows += [[x.label, x.placement, number(x.max_context_tokens),
              number(x.max_sequences)] for x in inv.per_layout]
    return out + table(rows, {2, 3})


def search_lines(r: Report) -> list[str]:
    """The --systems search: one line per system family and the chosen one."""
    s = r.search
    if not s:
        return []
    out = ["", f"Search: the fewest complete systems holding "
               f"{count(r.target.required_sequences, 'sequence')}, up to "
               f"{count(s.max_nodes, 'node')} ({s.memory_basis} memory basis)"]
    for c in s.candidates:
        if c.status == "fits":
            a, loc = c.best_any_fabric, c.best_scale_up_local
            line = (f"{count(c.nodes, 'node')} = {number(c.gpus)} x {c.hardware}: "
                    f"best_any_fabric {a.label}, {count(a.dp, 'model group')}, "
                    f"{count(a.max_sequences, 'sequence')} [{a.placement}]; "
                    "best_scale_up_local "
                    + (f"{loc.label}, {count(loc.max_sequences, 'sequence')}" if loc
                       else "none"))
            if c.smallest_scale_up_local_nodes not in (None, c.nodes):
                line += (" (node-local fits from "
                         f"{count(c.smallest_scale_up_local_nodes, 'node')})")
        else:
            line = f"{c.status.upper()}: {c.reason}"
        o = c.other_basis
        if o:
            line += (f" | on the {o.basis} basis: " + (count(o.nodes, "node") if o.nodes
                     else o.status))
        out.append(f"  {c.system:<12} {line}")
    out.append(f"Chosen: {s.chosen or 'none'} ({s.why})")
    return out
