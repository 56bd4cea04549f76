"""The text report, read top-down: verdict, the direct answers, layouts, next steps, state,
warnings; `--verbose` adds the provenance (kvfit.report.facts_text) and every engine block.

Renderers never compute: every number and sentence below comes from the Report
(kvfit.model).
"""

from __future__ import annotations

from ..model.base import ABSENT
from ..model.plan import Hardware, Layout, Report, Target
from ..model.summary import LayoutSummary
from .facts_text import VERBOSE_HINT, assumptions_lines, experts_lines, facts_lines, source_line
from .questions_text import inverse_lines, search_lines
from .words import count, gib, number, table, tokens


def _no_context(r: Report) -> str:
    """Said on the first line when no --context was given and the declared maximum was taken."""
    return (" (the declared maximum: no --context given)"
            if str(r.context_source or "").startswith("the declared maximum") else "")


def _index(r: Report) -> str:
    """The sparse-indexer key format the user chose, as resolved (fp4 -> mxfp4), when used."""
    idx = r.dtypes.index
    used = any("index_bytes" in str(c.bytes_per_entry_formula or "") for c in r.state.components)
    return f", index {idx.name}" if used and (idx.provenance or "").startswith("user:") else ""


def _verdict(r: Report) -> list[str]:
    m = r.model
    rev = f"@{m.revision[:12]}" if m.revision else ""
    head = (f"kvfit: {m.source}{rev} ({m.origin}) | {r.architecture.id} | "
            f"{tokens(r.context_tokens)}{_no_context(r)} | KV {r.kv_dtype}{_index(r)}")
    rope = r.rope_scaling
    if rope:
        was = rope.declared_max_tokens
        head += (f" | RoPE {rope.rope_type} x{rope.factor:g} ({rope.source}): maximum "
                 + (f"{number(was)} -> " if was else "") + number(rope.max_context_tokens))
    lay = r.chosen
    if r.search and not r.layouts:
        line = "NO CANDIDATE: no system family holds the target under these settings."
    elif not r.layouts:
        line = (f"STATE ONLY: {gib(r.state.bytes_per_sequence)} per sequence; pass "
                "--hardware and --gpus (or --system) to plan a fit.")
    elif r.weights.bytes is None and lay is not None and lay.engine and \
            lay.fits is None:      # the engine's stated pool is known, the weights are not
        line = (f"WEIGHTS UNKNOWN ({r.capacity_model.label}): {lay.label}: "
                f"{lay.reason.rstrip('.')}; pass --weight-gib or a checkpoint with weight "
                "files or an index for a verdict.")
    elif r.weights.bytes is None and not (lay and lay.engine):
        line = ("WEIGHTS UNKNOWN: per-rank state is shown, but no fit can be judged; pass "
                "--weight-gib or a checkpoint with weight files or an index.")
    elif lay is None:
        line = "NO LAYOUT: no valid layout for this model on these GPUs."
    else:
        word = {True: "FITS", False: "DOES NOT FIT", None: "UNKNOWN"}[lay.fits]
        line = (f"{word} ({r.capacity_model.label}): {lay.label}: "
                f"{lay.reason.rstrip('.')}.")
        if r.weights.source == "config estimate":
            line += " (Weights ESTIMATED from config shapes.)"
    if r.hypothetical:
        line = (f"HYPOTHETICAL (context {number(r.context_tokens)} exceeds the declared "
                f"maximum {number(r.max_context_tokens)}): {line}")
    out = [head, line]
    if r.detected_hardware:
        out.append(r.detected_hardware.summary)
    cap = r.capacity_model
    if r.layouts:
        if cap.name == "static":
            out.append(f"Capacity model: static bound: {cap.detail}.")
        else:
            out.append(f"Capacity model: {cap.label} ({cap.version_basis}"
                       + (f"; chosen by {cap.selected_by}" if cap.selected_by else "")
                       + "); the static bound is shown beside it.")
    return out + inverse_lines(r)


def _seqs(x) -> str:
    return number(x.max_sequences)


def _static(x: Layout) -> list[str]:
    """The static bound beside an engine-answered row."""
    return [_seqs(x.static) if x.static else "-"]


def _by_engine(r: Report) -> bool:
    """True when an engine's prediction answered (the tables then add the static bound)."""
    return r.capacity_model.name != "static"


def _verdict_cell(x: Layout) -> str:
    return {True: "fits", False: "no", None: "?"}[x.fits] if x.valid else "invalid"


def _plain_rows(r: Report, topo: bool) -> list[list[str]]:
    engine = _by_engine(r)
    plain = [x for x in r.layouts if x.parallelism == "tp"]
    pp = any((x.pp or 1) > 1 for x in plain)      # a PP column only when PP was planned
    rows = [["TP"] + (["PP"] if pp else []) + ["DP"] + (["placement"] if topo else []) +
            ["weights/rank", "state/seq/rank", "budget/rank", "max seqs"] +
            (["static bound"] if engine else []) + ["verdict"]]
    for x in plain:
        p = x.per_rank
        rows.append([number(x.tp)] + ([number(x.pp or 1)] if pp else []) +
                    [number(x.dp)] + ([x.placement] if topo else []) +
                    [gib(p.weights_bytes), gib(p.state_bytes_per_sequence),
                     gib(p.budget_bytes), _seqs(x)] + (_static(x) if engine else [])
                    + [_verdict_cell(x)])
    return rows


def _dpa_rows(r: Report) -> list[list[str]]:
    engine = _by_engine(r)
    rows = [["layout", "groups", "placement", "experts/rank", "other/rank", "state/seq/rank",
             "padding/rank", "used / budget per rank", "max seqs"] +
            (["static bound"] if engine else []) + ["verdict"]]
    for x in (x for x in r.layouts if x.parallelism != "tp"):
        p = x.per_rank
        rows.append([x.label, number(x.dp), x.placement, gib(p.routed_expert_bytes),
                     gib(p.non_expert_bytes), gib(p.state_bytes_per_sequence),
                     gib(p.padding_bytes), f"{gib(p.used_bytes)} / {gib(p.budget_bytes)}",
                     _seqs(x)] + (_static(x) if engine else []) + [_verdict_cell(x)])
    return rows


def _hardware_line(hw: Hardware) -> str:
    where = (f"{number(hw.nodes)} x {hw.system} = {number(hw.gpus)} x {hw.id}; "
             f"scale-up domain {count(hw.scale_up_domain_accelerators, 'GPU')}, "
             f"{count(hw.scale_up_domains, 'domain')}, "
             f"{count(hw.memory_domains, 'memory domain')}" if hw.system
             else f"{number(hw.gpus)} x {hw.id}")
    return (f"Layouts on {where} ({hw.basis_detail}; utilization {hw.utilization:g}; "
            f"reserve {gib(hw.runtime_reserve_bytes)} per GPU)")


def _target_line(t: Target) -> str:
    return (f"Target: {count(t.concurrent_users, 'user')} x "
            f"{count(t.active_sequences_per_user, 'resident sequence')} = "
            f"{count(t.required_sequences, 'sequence')}")


def _layouts(r: Report, verbose: bool) -> list[str]:
    hw, t = r.hardware, r.target
    topo = bool(hw.system) or any(x.placement != "node-local" for x in r.layouts)
    out = ["", _hardware_line(hw), _target_line(t)]
    engine = _by_engine(r)
    num = {0, 1} | ({3, 4, 5, 6} if topo else {2, 3, 4, 5})
    num |= {max(num) + 1} if engine else set()
    rows = _plain_rows(r, topo)
    if rows[0][1] == "PP":          # one more numeric column after TP
        num = {0} | {i + 1 for i in num}
    out += table(rows, num)
    if any(x.parallelism != "tp" for x in r.layouts):
        out += ["Attention-DP + expert parallelism (groups = model groups):"]
        out += table(_dpa_rows(r), {1, 3, 4, 5, 6, 7, 8} | ({9} if engine else set()))
    if t.active_sequences_per_user > 1:
        users = "; ".join(f"{x.label}: {number(x.max_users)}" for x in r.layouts
                          if x.valid and x.max_users is not None)
        out.append(f"Users served at {count(t.active_sequences_per_user, 'resident sequence')}"
                   f" each: {users}")
    chosen = r.chosen
    for x in r.layouts:
        name = f"TP={x.tp}" if x.parallelism == "tp" else x.label
        if x.fits is False:
            out.append(f"  {name}: {x.reason}")
        if not x.valid:
            continue
        if x.placement_note:
            out.append(f"  {name}: {x.placement_note}")
        if x.parallelism == "tp" and (verbose or x is chosen):   # copies of the state
            out += [f"  {name}: {note}" for note in (x.replication or ())]
        out += [f"  {name}: {c.engine} starts it only because it "
                f"{'refines' if c.action == 'refine' else 'pads'}: {c.text} "
                f"({c.source})" for c in (x.engine_constraints or ())
                if c.action != "refuse"]
    return out + _recommendation(r)


def _why(rec: LayoutSummary) -> str:
    """`Recommended: X: why` without naming X twice (the plan's `why` starts with the label)."""
    why = rec.why
    if why.startswith(rec.label + " "):
        return f"{rec.label}: {why[len(rec.label) + 1:]}"
    return f"{rec.label} ({why})"


def _recommendation(r: Report) -> list[str]:
    rec, out = r.recommended, []
    if rec:
        out.append(f"Recommended: {_why(rec)}")
    for b, name in ((r.best_scale_up_local, "Best node-local"),
                    (r.best_any_fabric, "Best on any fabric")):
        if r.hardware.system:
            out.append(f"{name}: " + (f"{b.label} ({count(b.max_sequences, 'sequence')}, "
                                      f"{b.placement})" if b else "none"))
    lay = r.chosen
    if lay and lay.parallelism != "tp" and lay.per_rank.used_bytes is not None:
        p = lay.per_rank
        out.append(f"Per GPU ({lay.label}): {gib(p.weights_bytes)} of checkpoint tensors "
                   f"({gib(p.routed_expert_bytes)} routed experts + "
                   f"{gib(p.non_expert_bytes)} other tensors over attention TP"
                   f"{lay.attention_tp}), "
                   f"{number(lay.sequences_per_group)} x {gib(p.state_bytes_per_sequence)} "
                   f"of sequence state, {gib(p.reserve_bytes)} reserve and "
                   f"{gib(p.padding_bytes)} pool padding ({number(p.padding_bytes)} B: one "
                   f"{number(p.padding_page_tokens)}-token "
                   f"page): {gib(p.used_bytes)} / {gib(p.budget_bytes)} budgeted.")
    if lay and lay.pipeline:
        out.append(_pipeline_line(lay))
    out += r.placement_notes or []
    cmp = r.memory_basis_comparison
    if cmp and (cmp.max_sequences != cmp.other_max_sequences
                or r.fits != cmp.other_fits):
        out.append(f"Memory basis: {cmp.explanation}")
    return out


def _pipeline_line(lay: Layout) -> str:
    """The stages of a TP x PP layout: layers, weights and state per rank, which binds."""
    pipe = lay.pipeline
    parts = [f"stage {s.stage} layers {s.layers[0]}-{s.layers[1] - 1}: "
             f"{gib(s.weights_bytes)} weights"
             + (f" (of which {gib(s.replicated_bytes)} whole)" if s.replicated_bytes else "")
             + f" + {gib(s.state_bytes_per_sequence)}/seq" for s in pipe.stages]
    return (f"Pipeline ({lay.label}, per rank): " + "; ".join(parts) +
            f". Stage {pipe.binding_stage} binds.")


def _state(r: Report) -> list[str]:
    s = r.state
    out = ["", f"State per sequence: {gib(s.bytes_per_sequence)} "
               f"({number(s.bytes_per_sequence)} B) at {count(r.context_tokens, 'token')}"]
    rows = [["component", "kind", "layers", "entries/layer", "bytes/entry", "bytes/seq",
             "shard", "bytes/entry formula"]]
    for c in s.components:
        rows.append([c.name, c.kind, number(c.layers), number(c.entries_per_layer),
                     number(c.bytes_per_entry), number(c.bytes_per_sequence), c.shard,
                     c.bytes_per_entry_formula + ("" if c.layout == "logical"
                                                     else f" [{c.layout}]")])
    return out + table(rows, {2, 3, 4, 5})


def _engine(r: Report, verbose: bool) -> list[str]:
    if not (r.engine_command or any(x.engine is not ABSENT for x in r.layouts)):
        return []
    from .engine_text import render_text as engine_text
    return ["", engine_text(r, verbose=verbose).rstrip("\n")]


def _engine_check(r: Report) -> list[str]:
    if not r.engine_check:
        return []
    from .check_text import render_text as check_text
    return check_text(r.engine_check)


def _suggestions(r: Report) -> list[str]:
    got = r.suggestions or []
    if not got:
        return []
    out = ["", "What would fit (each re-planned with the same capacity model; smallest change "
               "first):"]
    for s in got:
        where = (f" -> {s.layout}, {count(s.max_sequences, 'sequence')}" if s.layout
                 else "")
        out.append(f"  {s.flags}: {s.description}{where}")
    return out


def render_text(r: Report, verbose: bool = False) -> str:
    """The text report: the answer, the layouts, next steps, state and warnings; with
    `verbose` also the provenance of every field, dtype and weight byte, every engine block,
    and the assumptions."""
    lines = _verdict(r) + search_lines(r)
    if r.layouts:
        lines += _layouts(r, verbose)
    if r.tune:
        from .tune_text import tune_lines
        lines += tune_lines(r)
    lines += _suggestions(r)
    lines += _engine_check(r)
    lines += _state(r)
    if verbose:
        lines += experts_lines(r)
    lines += _engine(r, verbose)
    lines += facts_lines(r) if verbose else ["", source_line(r)]
    if r.warnings:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in r.warnings]
    lines += assumptions_lines(r) if verbose else ["", VERBOSE_HINT]
    return "\n".join(lines) + "\n"
