"""The paragraphs of the answers that are not a plan's Report: `kvfit fit` and
`kvfit explain-log`, read from the JSON they print (kvfit.report.answer writes a plan's)."""

from __future__ import annotations

from collections.abc import Mapping

from ..report.words import count, gib, number, tokens
from ..textsafe import escape_controls


def fit_answer(fit: Mapping) -> str:
    """`kvfit fit`'s answer in one paragraph, read from the JSON it prints: how many
    checkpoints fit and the best three."""
    t, counts = fit["target"], fit["counts"]
    if t is None:                      # no checkpoint could be planned: each row says why
        reasons = "; ".join(dict.fromkeys(str(row.get("reason")) for rows in fit["rows"].values()
                                          for row in rows))
        return escape_controls(f"None of {count(fit['planned'], 'checkpoint')} could be "
                               f"planned: {reasons or 'no checkpoint matched'}.")
    hw = t["hardware"]
    where = (f"{number(hw['nodes'] or 1)} x {hw['system']}" if hw.get("system")
             else f"{number(hw['gpus'])} x {hw['id']}")
    need = count(t["target"]["required_sequences"], "sequence")
    fits = fit["rows"].get("fits", [])
    text = (f"{number(counts['fits'])} of {count(fit['planned'], 'checkpoint')} fit "
            f"{where} at {tokens(t['context_tokens'])} for {need} ({t['capacity_model']})")
    if fits:
        best = "; ".join(f"{row['model']}: {row['recommended']['label']} holds "
                         f"{count(row['max_sequences'], 'sequence')}, weights "
                         f"{gib(row['weights']['bytes'], 1)} ({row['weights']['basis']})"
                         + _tuned(row) for row in fits[:3])
        text += f"; best first: {best}"
    text += f". Each row is one plan: {fit['verify']}."
    return escape_controls(text)


def _tuned(row: Mapping) -> str:
    """The settings --tune changed for a fit row, as flags (as `kvfit fit` prints them)."""
    tune = row.get("tune")
    if not tune:
        return ""
    changed = " ".join(c["flag"] if c["value"] is True else "--no-" + c["flag"][2:]
                       if c["value"] is False else f"{c['flag']} {c['value']}"
                       for c in tune["changed"])
    return f", tuned with {changed or 'the defaults'}"


def _value(value, unit: str) -> str:
    """A printed or predicted number of explain-log as its table shows it."""
    if unit == "gib":
        return gib(value * 2**30, 2)
    return f"{value:.4g}" if unit == "ratio" else number(int(round(value)))


def explain_answer(ex: Mapping) -> str:
    """`kvfit explain-log`'s answer in one paragraph, read from the JSON it prints: the
    engine, the model and the printed numbers kvfit predicts furthest off."""
    rows = [row for row in ex.get("rows", []) if row.get("diff_pct") is not None]
    worst = sorted(rows, key=lambda row: -abs(row["diff_pct"]))[:3]
    model = ex["model"] or "a model the log does not name"
    text = (f"{ex['engine']} {ex['version']} log of {model} (config {ex['config']}, "
            f"TP={number(ex['tp'])} {ex['tp_basis']}, KV {ex['kv_dtype']}): "
            f"{count(len(rows), 'printed number')} compared with kvfit's prediction")
    if worst:
        text += "; furthest off: " + "; ".join(
            f"{row['number']} printed {_value(row['printed'], row['unit'])}, predicted "
            f"{_value(row['predicted'], row['unit'])} ({row['diff_pct']:+.2f}%)"
            for row in worst)
    notes = " ".join(ex.get("notes") or [])
    return escape_controls(text + "." + (f" {notes}" if notes else ""))
