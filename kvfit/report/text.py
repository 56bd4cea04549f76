"""The text report, read top-down: verdict, search/inverse answers, layouts, state, facts.

Renderers never compute: every number and sentence below comes from the report dict.
"""

from __future__ import annotations

GIB = 1024**3
ASSUMPTIONS = (
    "Counted state is a static upper bound for fully resident sequences, not a runtime "
    "allocation or OOM guarantee; engine paging, CUDA graphs and activations are covered only "
    "by the utilization and reserve you chose.",
    "TP layouts assume ideal weight sharding inside each TP group; DP replicas hold full copies.",
)
EP_ASSUMPTION = ("Attention-DP + EP layouts distribute routed experts across each model group "
                 "and split every other tensor over the attention-TP ranks of each attention "
                 "group (replicated across groups); prefix sharing, HiCache, "
                 "context/pipeline parallelism and cross-node expert groups are not searched.")


def gib(n) -> str:
    return "unknown" if n is None else f"{n / GIB:,.3f} GiB"


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.rjust(w) if i in right else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip() for r in rows]


def _chosen(r: dict) -> dict | None:
    from ..plan.layouts import recommended_layout
    return recommended_layout(r)


def _verdict(r: dict) -> list[str]:
    m = r["model"]
    rev = f"@{m['revision'][:12]}" if m.get("revision") else ""
    head = (f"kvfit: {m['source']}{rev} ({m['origin']}) | {r['architecture']['id']} | "
            f"{r['context_tokens']:,} tokens | KV {r['kv_dtype']}")
    rope = r.get("rope_scaling")
    if rope:
        was = rope["declared_max_tokens"]
        head += (f" | RoPE {rope['rope_type']} x{rope['factor']:g} ({rope['source']}): maximum "
                 + (f"{was:,} -> " if was else "") + f"{rope['max_context_tokens']:,}")
    lay = _chosen(r)
    if r.get("search") and not r["layouts"]:
        line = "NO CANDIDATE: no system family holds the target under these settings."
    elif not r["layouts"]:
        line = (f"STATE ONLY: {gib(r['state']['bytes_per_sequence'])} per sequence; pass "
                "--hardware and --gpus (or --system) to plan a fit.")
    elif r["weights"]["bytes"] is None:
        line = ("WEIGHTS UNKNOWN: per-rank state is shown, but no fit can be judged; pass "
                "--weight-gib or a checkpoint with weight files or an index.")
    elif lay is None:
        line = "NO LAYOUT: no valid layout for this model on these GPUs."
    else:
        word = {True: "FITS", False: "DOES NOT FIT", None: "UNKNOWN"}[lay["fits"]]
        line = f"{word} ({r['capacity_model']['label']}): {lay['label']}: {lay['reason'].rstrip('.')}."
        if r["weights"]["source"] == "config estimate":
            line += " (Weights ESTIMATED from config shapes.)"
    if r.get("hypothetical"):
        line = (f"HYPOTHETICAL (context {r['context_tokens']:,} exceeds the declared maximum "
                f"{r['max_context_tokens']:,}): {line}")
    out = [head, line]
    if r.get("detected_hardware"):
        out.append(r["detected_hardware"]["summary"])
    cap = r["capacity_model"]
    if r["layouts"]:
        if cap["name"] == "static":
            out.append(f"Capacity model: static bound: {cap['detail']}.")
        else:
            out.append(f"Capacity model: {cap['label']} ({cap['version_basis']}"
                       + (f"; chosen by {cap['selected_by']}" if cap.get("selected_by") else "")
                       + "); the static bound is shown beside it.")
    return out + _inverse(r)


def _inverse(r: dict) -> list[str]:
    inv = r.get("inverse")
    if not inv:
        return []
    if inv["question"] == "min_gpus":
        if inv["min_gpus"] is None:
            return [f"MIN GPUS: no count of {inv['hardware']} up to {inv['searched_up_to']:,} "
                    f"holds {inv['required_sequences']} sequences."]
        return [f"MIN GPUS: {inv['min_gpus']} x {inv['hardware']} ({inv['recommended']['label']}) "
                f"hold {inv['recommended']['max_sequences']} >= {inv['required_sequences']} "
                f"sequences (searched 1..{inv['searched_up_to']:,})."]
    out = [f"MAX CONTEXT: longest context (1..{inv['upper_bound_tokens']:,}) at which "
           f"{inv['required_sequences']} sequence(s) fit, per layout:"]
    rows = [["layout", "placement", "max context", "sequences there"]]
    rows += [[x["label"], x["placement"], "-" if x["max_context_tokens"] is None else
              f"{x['max_context_tokens']:,}", "-" if x["max_sequences"] is None
              else str(x["max_sequences"])] for x in inv["per_layout"]]
    return out + _table(rows, {2, 3})


def _search(r: dict) -> list[str]:
    s = r.get("search")
    if not s:
        return []
    out = ["", f"Search: the fewest complete systems holding {r['target']['required_sequences']} "
               f"sequences, up to {s['max_nodes']} node(s) ({s['memory_basis']} memory basis)"]
    for c in s["candidates"]:
        if c["status"] == "fits":
            a, loc = c["best_any_fabric"], c["best_scale_up_local"]
            line = (f"{c['nodes']} node(s) = {c['gpus']} x {c['hardware']}: best_any_fabric "
                    f"{a['label']}, {a['dp']} model group(s), {a['max_sequences']} sequences "
                    f"[{a['placement']}]; best_scale_up_local "
                    + (f"{loc['label']}, {loc['max_sequences']} sequences" if loc else "none"))
            if c["smallest_scale_up_local_nodes"] not in (None, c["nodes"]):
                line += f" (node-local fits from {c['smallest_scale_up_local_nodes']} nodes)"
        else:
            line = f"{c['status'].upper()}: {c['reason']}"
        o = c.get("other_basis")
        if o:
            line += (f" | on the {o['basis']} basis: " + (f"{o['nodes']} node(s)" if o["nodes"]
                     else o["status"]))
        out.append(f"  {c['system']:<12} {line}")
    out.append(f"Chosen: {s['chosen'] or 'none'} ({s['why']})")
    return out


def _seqs(x: dict) -> str:
    return "-" if x["max_sequences"] is None else f"{x['max_sequences']:,}"


def _static(x: dict) -> list[str]:
    """The static bound beside an engine-answered row."""
    return [_seqs(x["static"]) if x.get("static") else "-"]


def _by_engine(r: dict) -> bool:
    """True when an engine's prediction answered (the tables then add the static bound)."""
    return r["capacity_model"]["name"] != "static"


def _plain_rows(r: dict, topo: bool) -> list[list[str]]:
    engine = _by_engine(r)
    rows = [["TP", "DP"] + (["placement"] if topo else []) +
            ["weights/rank", "state/seq/rank", "budget/rank", "max seqs"] +
            (["static bound"] if engine else []) + ["verdict"]]
    for x in (x for x in r["layouts"] if x["parallelism"] == "tp"):
        p = x["per_rank"]
        verdict = {True: "fits", False: "no", None: "?"}[x["fits"]] if x["valid"] else "invalid"
        rows.append([str(x["tp"]), str(x["dp"])] + ([x["placement"]] if topo else []) +
                    [gib(p["weights_bytes"]), gib(p["state_bytes_per_sequence"]),
                     gib(p["budget_bytes"]), _seqs(x)] + (_static(x) if engine else [])
                    + [verdict])
    return rows


def _dpa_rows(r: dict) -> list[list[str]]:
    engine = _by_engine(r)
    rows = [["layout", "groups", "placement", "experts/rank", "other/rank", "state/seq/rank",
             "padding/rank", "used / budget per rank", "max seqs"] +
            (["static bound"] if engine else []) + ["verdict"]]
    for x in (x for x in r["layouts"] if x["parallelism"] != "tp"):
        p = x["per_rank"]
        verdict = {True: "fits", False: "no", None: "?"}[x["fits"]] if x["valid"] else "invalid"
        rows.append([x["label"], str(x["dp"]), x["placement"], gib(p["routed_expert_bytes"]),
                     gib(p["non_expert_bytes"]), gib(p["state_bytes_per_sequence"]),
                     gib(p["padding_bytes"]), f"{gib(p['used_bytes'])} / {gib(p['budget_bytes'])}",
                     _seqs(x)] + (_static(x) if engine else []) + [verdict])
    return rows


def _hardware_line(hw: dict) -> str:
    where = (f"{hw['nodes']} x {hw['system']} = {hw['gpus']} x {hw['id']}; scale-up domain "
             f"{hw['scale_up_domain_accelerators']} GPU(s), {hw['scale_up_domains']} domain(s), "
             f"{hw['memory_domains']} memory domain(s)" if hw.get("system")
             else f"{hw['gpus']} x {hw['id']}")
    return (f"Layouts on {where} ({hw['basis_detail']}; utilization {hw['utilization']:g}; "
            f"reserve {gib(hw['runtime_reserve_bytes'])} per GPU)")


def _layouts(r: dict) -> list[str]:
    hw, t = r["hardware"], r["target"]
    topo = bool(hw.get("system")) or any(x["placement"] != "node-local" for x in r["layouts"])
    out = ["", _hardware_line(hw), f"Target: {t['concurrent_users']} user(s) x "
           f"{t['active_sequences_per_user']} resident sequence(s) = {t['required_sequences']}"]
    engine = _by_engine(r)
    num = {0, 1} | ({3, 4, 5, 6} if topo else {2, 3, 4, 5})
    num |= {max(num) + 1} if engine else set()
    out += _table(_plain_rows(r, topo), num)
    if any(x["parallelism"] != "tp" for x in r["layouts"]):
        out += ["Attention-DP + expert parallelism (groups = model groups):"]
        out += _table(_dpa_rows(r), {1, 3, 4, 5, 6, 7, 8} | ({9} if engine else set()))
    if t["active_sequences_per_user"] > 1:
        users = "; ".join(f"{x['label']}: {x['max_users']}" for x in r["layouts"]
                          if x["valid"] and x.get("max_users") is not None)
        out.append(f"Users served at {t['active_sequences_per_user']} resident sequences each: "
                   f"{users}")
    for x in r["layouts"]:
        name = f"TP={x['tp']}" if x["parallelism"] == "tp" else x["label"]
        if x["fits"] is False:
            out.append(f"  {name}: {x['reason']}")
        if not x["valid"]:
            continue
        if x.get("placement_note"):
            out.append(f"  {name}: {x['placement_note']}")
        if x["parallelism"] == "tp":
            out += [f"  {name}: {note}" for note in x.get("replication", ())]
        out += [f"  {name}: {c['engine']} starts it only because it "
                f"{'refines' if c['action'] == 'refine' else 'pads'}: {c['text']} "
                f"({c['source']})" for c in x.get("engine_constraints", ())
                if c["action"] != "refuse"]
    return out + _recommendation(r)


def _recommendation(r: dict) -> list[str]:
    rec, out = r["recommended"], []
    if rec:
        out.append(f"Recommended: {rec['label']} ({rec['why']})")
    for key, name in (("best_scale_up_local", "Best node-local"), ("best_any_fabric",
                                                                  "Best on any fabric")):
        b = r.get(key)
        if r["hardware"].get("system"):
            out.append(f"{name}: " + (f"{b['label']} ({b['max_sequences']} sequences, "
                                      f"{b['placement']})" if b else "none"))
    lay = _chosen(r)
    if lay and lay["parallelism"] != "tp" and lay["per_rank"]["used_bytes"] is not None:
        p = lay["per_rank"]
        out.append(f"Per GPU ({lay['label']}): {gib(p['weights_bytes'])} of checkpoint tensors "
                   f"({gib(p['routed_expert_bytes'])} routed experts + "
                   f"{gib(p['non_expert_bytes'])} other tensors over attention TP"
                   f"{lay['attention_tp']}), "
                   f"{lay['sequences_per_group']} x {gib(p['state_bytes_per_sequence'])} of "
                   f"sequence state, {gib(p['reserve_bytes'])} reserve and "
                   f"{gib(p['padding_bytes'])} pool padding ({p['padding_bytes']:,} B: one "
                   f"{p['padding_page_tokens']}-token "
                   f"page): {gib(p['used_bytes'])} / {gib(p['budget_bytes'])} budgeted.")
    out += r.get("placement_notes") or []
    cmp = r.get("memory_basis_comparison")
    if cmp and (cmp["max_sequences"] != cmp["other_max_sequences"]
                or r.get("fits") != cmp["other_fits"]):
        out.append(f"Memory basis: {cmp['explanation']}")
    return out


def _state(r: dict) -> list[str]:
    s = r["state"]
    out = ["", f"State per sequence: {gib(s['bytes_per_sequence'])} "
               f"({s['bytes_per_sequence']:,} B) at {r['context_tokens']:,} tokens"]
    rows = [["component", "kind", "layers", "entries/layer", "bytes/entry", "bytes/seq",
             "shard", "bytes/entry formula"]]
    for c in s["components"]:
        rows.append([c["name"], c["kind"], str(c["layers"]), f"{c['entries_per_layer']:,}",
                     f"{c['bytes_per_entry']:,}", f"{c['bytes_per_sequence']:,}", c["shard"],
                     c["bytes_per_entry_formula"] + ("" if c["layout"] == "logical"
                                                     else f" [{c['layout']}]")])
    return out + _table(rows, {2, 3, 4, 5})


def _experts(r: dict) -> list[str]:
    ep = r.get("expert_parallel")
    if not ep:
        return []
    return ["", f"Expert ownership ({ep['source']}): {ep['detail']}",
            f"  {gib(ep['routed_expert_bytes'])} in {ep['routed_experts']} routed experts + "
            f"{gib(ep['non_expert_bytes'])} other tensors = {gib(ep['total_bytes'])} of tensors "
            "in the whole checkpoint",
            f"  {ep['assumption']}.",
            f"  Pool padding ({ep['engine']}): {ep['padding_rule']}."]


def _facts(r: dict) -> list[str]:
    a, w, d = r["architecture"], r["weights"], r["dtypes"]
    out = ["", f"Architecture {a['id']} ({a['spec']}): {a['summary']}"]
    out += [f"  {f['name']} = {f['value']} ({f['provenance']})" for f in a["fields"]]
    out += [f"  layers {name}: {v['count']} [{v['layers']}]" for name, v in a["layer_sets"].items()]
    out += ["", "Dtypes:"] + [f"  {k}: {v['name']} ({v['bytes_per_value']} B/value; "
                               f"{v['provenance']})" + (f"; {v['note']}" if v["note"] else "")
                               for k, v in d.items()]
    out += ["", f"Weights: {gib(w['bytes'])} ({w['source']}: {w['detail']})"]
    h = r.get("headers")
    if h:
        dtypes = ", ".join(f"{k} {gib(v)}" for k, v in h["bytes_by_dtype"].items())
        out.append(f"Headers: {h['tensors']:,} tensors, {gib(h['tensor_bytes'])} "
                   f"({h['source']}){'; ' + dtypes if dtypes else ''}; all {h['layers_covered']} "
                   "declared layers have tensors")
    return out + _quant_lines(r.get("quantization") or {}) + _model_notes(r["model"])


def _quant_lines(q: dict) -> list[str]:
    if not (q.get("weight_algorithm") or q.get("kv_cache") or q.get("kv_cache_source")):
        return []
    scope = f"; mixed, {q.get('scope')}" if q.get("mixed") else (
        f"; {q['scope']}" if q.get("scope") else "")
    excl = f"; {q['excluded_modules']} excluded module pattern(s)" if q.get(
        "excluded_modules") and "excluded" not in (q.get("scope") or "") else ""
    kv = q.get("kv_cache") or "none"
    src = f" ({q['kv_cache_source']})" if q.get("kv_cache_source") else ""
    return [f"Quantization: weights {q.get('weight_algorithm') or 'none'}{scope}{excl}",
            f"KV-cache declaration: {kv}{src}"]


def _model_notes(m: dict) -> list[str]:
    notes = m.get("notes") or []
    if not notes or m.get("origin") == "local":
        return []
    return ["", "Checkpoint:"] + [f"  - {n}" for n in notes]


def _engine(r: dict) -> list[str]:
    if not (r.get("engine_command") or any("engine" in x for x in r.get("layouts", ()))):
        return []
    from .engine_text import render_text as engine_text
    return ["", engine_text(r).rstrip("\n")]


def _engine_check(r: dict) -> list[str]:
    if not r.get("engine_check"):
        return []
    from ..preflight import render_text as check_text
    return check_text(r["engine_check"])


def _suggestions(r: dict) -> list[str]:
    got = r.get("suggestions") or []
    if not got:
        return []
    out = ["", "What would fit (each re-planned with the same capacity model; smallest change "
               "first):"]
    for s in got:
        where = f" -> {s['layout']}, {s['max_sequences']:,} sequences" if s.get("layout") else ""
        out.append(f"  {s['flags']}: {s['description']}{where}")
    return out


def render_text(r: dict) -> str:
    """The whole text report."""
    lines = _verdict(r) + _search(r)
    if r["layouts"]:
        lines += _layouts(r)
    lines += _suggestions(r)
    lines += _engine_check(r)
    lines += _state(r) + _experts(r) + _engine(r) + _facts(r)
    if r["warnings"]:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in r["warnings"]]
    lines += ["", "Assumptions:"] + [f"  - {a}" for a in ASSUMPTIONS]
    if r.get("expert_parallel"):
        lines.append(f"  - {EP_ASSUMPTION}")
    return "\n".join(lines) + "\n"
