"""The text report, read top-down: verdict, layouts, state, fields, weights, warnings."""

from __future__ import annotations

GIB = 1024**3
ASSUMPTIONS = (
    "Counted state is a static upper bound for fully resident sequences, not a runtime "
    "allocation or OOM guarantee; engine paging, CUDA graphs and activations are covered only "
    "by the utilization and reserve you chose.",
    "TP layouts assume ideal weight sharding inside each TP group; DP replicas hold full copies.",
)


def gib(n) -> str:
    return "unknown" if n is None else f"{n / GIB:,.3f} GiB"


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.rjust(w) if i in right else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip() for r in rows]


def _verdict(r: dict) -> list[str]:
    m = r["model"]
    rev = f"@{m['revision'][:12]}" if m.get("revision") else ""
    head = (f"kvfit: {m['source']}{rev} ({m['origin']}) | {r['architecture']['id']} | "
            f"{r['context_tokens']:,} tokens | KV {r['kv_dtype']}")
    best = r.get("recommended")
    if not r["layouts"]:
        line = (f"STATE ONLY: {gib(r['state']['bytes_per_sequence'])} per sequence; pass "
                "--hardware and --gpus to plan a fit.")
    elif r["weights"]["bytes"] is None:
        line = ("WEIGHTS UNKNOWN: per-rank state is shown, but no fit can be judged; pass "
                "--weight-gib or a checkpoint with weight files or an index.")
    elif best is None:
        line = "NO LAYOUT: no valid layout for this model on these GPUs."
    else:
        lay = next(x for x in r["layouts"] if x["tp"] == best["tp"])
        word = {True: "FITS", False: "DOES NOT FIT", None: "UNKNOWN"}[lay["fits"]]
        line = f"{word}: TP={lay['tp']} x DP={lay['dp']}: {lay['reason']}."
    return [head, line]


def _layouts(r: dict) -> list[str]:
    hw, t = r["hardware"], r["target"]
    out = ["", f"Layouts on {hw['gpus']} x {hw['id']} ({hw['basis_detail']}; utilization "
           f"{hw['utilization']:g}; reserve {gib(hw['runtime_reserve_bytes'])} per GPU)",
           f"Target: {t['concurrent_users']} user(s) x {t['active_sequences_per_user']} "
           f"resident sequence(s) = {t['required_sequences']}"]
    rows = [["TP", "DP", "weights/rank", "state/seq/rank", "budget/rank", "max seqs", "verdict"]]
    for x in r["layouts"]:
        p = x["per_rank"]
        verdict = {True: "fits", False: "no", None: "?"}[x["fits"]] if x["valid"] else "invalid"
        rows.append([str(x["tp"]), str(x["dp"]), gib(p["weights_bytes"]),
                     gib(p["state_bytes_per_sequence"]), gib(p["budget_bytes"]),
                     "-" if x["max_sequences"] is None else f"{x['max_sequences']:,}", verdict])
    out += _table(rows, {0, 1, 2, 3, 4, 5})
    for x in r["layouts"]:
        if x["fits"] is False:
            out.append(f"  TP={x['tp']}: {x['reason']}")
        out += [f"  TP={x['tp']}: {note}" for note in x.get("replication", ())]
    if r["recommended"]:
        out.append(f"Recommended: TP={r['recommended']['tp']} x DP={r['recommended']['dp']} "
                   f"({r['recommended']['why']})")
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


def _facts(r: dict) -> list[str]:
    a, w, d = r["architecture"], r["weights"], r["dtypes"]
    out = ["", f"Architecture {a['id']} ({a['spec']}): {a['summary']}"]
    out += [f"  {f['name']} = {f['value']} ({f['provenance']})" for f in a["fields"]]
    out += [f"  layers {name}: {v['count']} [{v['layers']}]" for name, v in a["layer_sets"].items()]
    out += ["", "Dtypes:"] + [f"  {k}: {v['name']} ({v['bytes_per_value']} B/value; "
                               f"{v['provenance']})" + (f"; {v['note']}" if v["note"] else "")
                               for k, v in d.items()]
    out += ["", f"Weights: {gib(w['bytes'])} ({w['source']}: {w['detail']})"]
    q = r.get("quantization") or {}
    if q.get("weight_algorithm") or q.get("kv_cache"):
        out.append(f"Quantization: weights {q.get('weight_algorithm') or 'none'}; KV cache "
                   f"declaration {q.get('kv_cache') or 'none'}")
    return out


def render_text(r: dict) -> str:
    """The whole text report."""
    lines = _verdict(r)
    if r["layouts"]:
        lines += _layouts(r)
    lines += _state(r) + _facts(r)
    if r["warnings"]:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in r["warnings"]]
    lines += ["", "Assumptions:"] + [f"  - {a}" for a in ASSUMPTIONS]
    return "\n".join(lines) + "\n"
