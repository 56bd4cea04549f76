"""One paragraph an agent or a page can quote: the verdict, the layout, the sequences held
against those needed, the weights' basis, the first change that would fit when it does not,
and the command line asking the same question (a plan's, or a sweep's cell by cell).

Like every renderer it computes nothing: each number is read from the typed Report.
"""

from __future__ import annotations

from ..model.base import ABSENT
from ..model.plan import Hardware, Report
from ..textsafe import escape_controls
from .words import count, gib, number, tokens

_WEIGHTS = {
    "checkpoint files": "counted from the checkpoint's weight files",
    "safetensors index": "read from the checkpoint's safetensors index",
    "user": "stated with --weight-gib",
    "config estimate": "ESTIMATED from the config's tensor shapes (give the checkpoint or "
                       "--weight-gib for its real bytes)",
    "runtime floor": "the engine's runtime planning floor",
    "tensor split": "summed from the checkpoint's tensor list",
    "expert ownership": "summed from the checkpoint's tensor list (expert ownership)",
}
_VERDICT = {True: "FITS", False: "DOES NOT FIT", None: "CANNOT BE JUDGED ON"}


def _where(hw: Hardware) -> str:
    if hw.system:
        return f"{number(hw.nodes)} x {hw.system} ({number(hw.gpus)} x {hw.id})"
    return f"{number(hw.gpus)} x {hw.id}"


def _weights(r: Report) -> str:
    w = r.weights
    if w.bytes is None:
        return "Weights: unknown (pass --weight-gib or a checkpoint with weight files or an index)."
    return f"Weights: {gib(w.bytes)}, {_WEIGHTS.get(w.source, w.source)}."


def _held(r: Report) -> str:
    """The recommended layout, what it holds and what the target needs."""
    lay, t = r.chosen, r.target
    need = (f"the target needs {count(t.required_sequences, 'sequence')} "
            f"({count(t.concurrent_users, 'user')} x "
            f"{count(t.active_sequences_per_user, 'resident sequence')})")
    held = f"holds {count(lay.max_sequences, 'sequence')}; {need}"
    if lay.fits is not True and lay.reason and "the target needs" not in lay.reason:
        held += f" ({lay.reason.rstrip('.')})"
    label = lay.label + (f" ({lay.placement})" if lay.placement not in (ABSENT, "node-local")
                         else "")
    return (f"the recommended layout {label} " if lay.fits
            else f"the best layout, {label}, ") + held


def _suggestion(r: Report) -> str:
    if r.fits is not False or not r.suggestions:
        return ""
    s = r.suggestions[0]
    where = (f" -> {s.layout}, {count(s.max_sequences, 'sequence')}" if s.layout else "")
    return f" What would fit (smallest change first): {s.flags}: {s.description}{where}."


def _inverse(r: Report) -> str:
    inv = r.inverse
    if not inv:
        return ""
    if inv.question == "min_gpus":
        if inv.min_gpus is None:
            return (f" No count of {inv.hardware} up to {number(inv.searched_up_to)} holds "
                    f"{count(inv.required_sequences, 'sequence')}.")
        return (f" Fewest GPUs: {number(inv.min_gpus)} x {inv.hardware} "
                f"({inv.recommended.label}).")
    best = inv.best
    if best is None or best.max_context_tokens is None:
        return f" No context up to {tokens(inv.upper_bound_tokens)} holds the target."
    return (f" Longest context holding the target: {tokens(best.max_context_tokens)} "
            f"({best.label}).")


def _tune(r: Report) -> str:
    """The settings --tune recommends (those it changed), what they hold, and their launch."""
    t = r.tune
    if not t:
        return ""
    changed = [f"{s.name} {s.recommended_text} ({s.flag}; default {s.default_text})"
               for s in t.settings if s.changed]
    text = (f" Recommended {r.capacity_model.label.removesuffix(' prediction')} settings "
            f"(--tune): {'; '.join(changed) or 'the defaults'}: {t.summary}.")
    cmd = t.command
    if cmd and cmd.launch:
        text += f" Launch with them: {cmd.launch}"
    elif cmd and cmd.hosts:
        text += " Launch with them: " + " | ".join(f"host {h.host}: {h.launch}"
                                                    for h in cmd.hosts)
    return text


def _command(command: str | None) -> str:
    return f" The same question on the command line: {command}" if command else ""


def plan_answer(r: Report, command: str | None = None) -> str:
    """The plan's answer in one paragraph; `command` is the equivalent `kvfit ...` line."""
    head = f"{r.model.source} at {tokens(r.context_tokens)} (KV {r.kv_dtype})"
    if r.hypothetical:
        head = (f"HYPOTHETICAL (the context exceeds the declared maximum of "
                f"{tokens(r.max_context_tokens)}): {head}")
    lay = r.chosen
    if r.search and not r.layouts:
        text = (f"{head}: NO CANDIDATE: no system family of {', '.join(r.search.systems)} "
                f"holds {count(r.target.required_sequences, 'sequence')} "
                f"({r.search.why or 'see the search candidates'}).")
    elif not r.layouts:
        text = (f"{head}: STATE ONLY: {gib(r.state.bytes_per_sequence)} of state per sequence;"
                " give hardware and GPUs (or a system) to plan a fit.")
    elif r.weights.bytes is None and lay is not None and lay.engine and lay.fits is None:
        text = (f"{head}: WEIGHTS UNKNOWN on {_where(r.hardware)} "
                f"({r.capacity_model.label}): {lay.label}: {lay.reason.rstrip('.')}; pass "
                "--weight-gib or a checkpoint with weight files or an index for a verdict.")
    elif r.weights.bytes is None and not (lay and lay.engine):
        text = (f"{head}: WEIGHTS UNKNOWN on {_where(r.hardware)}: the state per sequence is "
                f"{gib(r.state.bytes_per_sequence)}, but no fit can be judged; pass "
                "--weight-gib or a checkpoint with weight files or an index.")
    elif lay is None:
        text = f"{head}: NO LAYOUT: no valid layout for this model on {_where(r.hardware)}."
    else:
        text = (f"{head}: {_VERDICT[lay.fits]} {_where(r.hardware)} "
                f"({r.capacity_model.label}): {_held(r)}.")
    if r.search and r.search.chosen:
        text += f" Systems search: {r.search.chosen} chosen ({r.search.why})."
    text += _inverse(r)
    if r.layouts and r.weights.bytes is not None:
        text += " " + _weights(r)
    text += _tune(r) + _suggestion(r) + _command(command)
    return escape_controls(text)


def sweep_answer(r: Report, command: str | None = None) -> str:
    """A sweep's answer in one paragraph: each cell's verdict and recommended layout."""
    cells = []
    for c in r.sweep.cells:
        name = ", ".join(f"{k}={v}" for k, v in c.values.items())
        rec = c.recommended
        verdict = {True: "fits", False: "does not fit", None: "not judged"}[c.fits]
        cells.append(f"{name}: {verdict}" + (
            f", {rec.label} holds {count(rec.max_sequences, 'sequence')}" if rec else ""))
    need = count(r.target.required_sequences, "sequence") if r.target else "the target"
    text = (f"{r.model.source} ({r.capacity_model.label}; the target needs {need}): "
            + "; ".join(cells) + ". " + _weights(r) + _command(command))
    return escape_controls(text)
