"""The text rendering of `kvfit fit` (kvfit.planner.fit's result)."""

from __future__ import annotations

from ..planner.fit import DOES_NOT_FIT, FITS, NOT_JUDGED, REFUSED

GIB = 1024**3


def _weights(row: dict) -> str:
    w = row["weights"] or {}
    if w.get("bytes") is None:
        return "unknown"
    return f"{w['bytes'] / GIB:,.1f} GiB {w['basis']}"


def _target(result: dict) -> str:
    t = result.get("target")
    if t is None:
        return "the target (no checkpoint could be planned)"
    hw, want = t["hardware"], t["target"] or {}
    where = (f"{hw['nodes'] or 1} x {hw['system']}" if hw.get("system")
             else f"{hw['gpus']} x {hw['id']}")
    users = want.get("concurrent_users", 1)
    return (f"{where} at {t['context_tokens']:,} tokens, {users} user{'s' * (users != 1)} "
            f"x {want.get('active_sequences_per_user', 1)} sequence ({t['capacity_model']})")


def _sibling(name: str, seen: dict[str, dict]) -> str:
    """A sibling with what its own row says (sequences when it fits), if it was planned."""
    row = seen.get(name)
    if row is None:
        return name
    return f"{name} ({row['max_sequences']:,})" if row["status"] == FITS else \
        f"{name} ({row['status']})"


def _changed(row: dict) -> str:
    """The settings --tune changed (its launch command carries them), or the defaults."""
    out = []
    for c in row["tune"]["changed"]:
        value = c["value"]
        out.append(c["flag"] if value is True else "--no-" + c["flag"][2:] if value is False
                   else f"{c['flag']} {value}")
    return " ".join(out) or "the defaults"


def _table(rows: list[dict], seen: dict[str, dict]) -> list[str]:
    width = max([len(r["model"]) for r in rows] + [10])
    tuned = any("tune" in r for r in rows)
    lines = [f"  {'checkpoint':<{width}}  {'max seqs':>8}  {'layout':<13}  {'weights':<22}  "
             + ("tuned settings" if tuned else "quantized siblings (their max seqs)")]
    for r in rows:
        layout = (r["recommended"] or {}).get("label", "-")
        last = _changed(r) if tuned else (", ".join(_sibling(s, seen) for s in r["siblings"])
                                          or "-")
        lines.append(f"  {r['model']:<{width}}  {r['max_sequences']:>8,}  {layout:<13}  "
                     f"{_weights(r):<22}  {last}")
    return lines


def _others(title: str, rows: list[dict]) -> list[str]:
    if not rows:
        return []
    width = max(len(r["model"]) for r in rows)
    return ["", f"{title} ({len(rows)}):"] + [f"  {r['model']:<{width}}  {r['reason']}"
                                              for r in rows]


def render(result: dict, show_all: bool) -> str:
    rows, counts = result["rows"], result["counts"]
    lines = []
    if result.get("detected_hardware"):
        lines.append(result["detected_hardware"])
    lines.append(f"kvfit fit: {counts[FITS]} of {result['planned']} checkpoints fit "
                 f"{_target(result)}" + (", best first:" if counts[FITS] else "."))
    if counts[FITS]:
        seen = {r["model"]: r for rs in rows.values() for r in rs}
        lines += _table(rows[FITS], seen)
    lines.append("")
    lines.append(f"Not listed: {counts[DOES_NOT_FIT]} do not fit, {counts[NOT_JUDGED]} cannot "
                 f"be judged (weights unknown), {counts[REFUSED]} refused by the plan"
                 + ("." if show_all else "; --all lists them with their reason."))
    longer = sum("declared maximum" in r["reason"] for r in rows[REFUSED])
    if longer:
        lines.append(f"  {longer} of the refused declare a maximum context below the one asked; "
                     "if the deployment serves them with RoPE scaling, plan one with "
                     "--rope-scaling.")
    if show_all:
        lines += _others("Do not fit", rows[DOES_NOT_FIT])
        lines += _others("Cannot be judged", rows[NOT_JUDGED])
        lines += _others("Refused", rows[REFUSED])
        lines.append("")
    lines.append(f"Each row is one plan: {result['verify']}")
    return "\n".join(lines) + "\n"
