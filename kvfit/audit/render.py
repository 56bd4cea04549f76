"""Text rendering of an audit report (the JSON is the report itself)."""

from __future__ import annotations

from ..report.words import GIB, count, number


def _cell_line(c: dict) -> str:
    ctx = number(c["context"]) if isinstance(c["context"], int) else str(c["context"])
    head = f"  {c['family']:<14} {c['model'][-44:]:<44} {ctx:>8}"
    if c["status"] == "refused":
        return f"{head}  REFUSED: {c['reason'][:120]}"
    o = c["oracle"]
    mark = {True: "oracle ok", False: "ORACLE MISMATCH", None: "no oracle"}[o["agrees"]]
    fits = sum(1 for f in c["fleets"] if f.get("fits") is True)
    known = sum(1 for f in c["fleets"] if f.get("fits") is not None)
    fleets = (f"{number(fits)}/{count(known, 'fleet')} {'fits' if fits == 1 else 'fit'}"
              if known else "fleets: weights unknown")
    if c["status"] == "not judged":
        fleets = f"NOT JUDGED: {c['reason']}"
    return (f"{head}  {c['architecture']:<14} {c['state_bytes'] / GIB:>9.3f} GiB/seq  "
            f"{mark:<15} {fleets}")


def _weights_line(w: dict) -> str:
    line = (f"weights: config-shape estimate against a pinned index on {w['compared']} "
            f"model(s), {w['exact']} exact")
    return line + (f"; differ: {', '.join(w['differ'])}" if w["differ"] else "")


def render_text(r: dict) -> str:
    cov = r["coverage"]
    verdict = "PASSED" if r["passed"] else "FAILED"
    lines = [f"kvfit audit: {r['name']} ({'offline: catalog/cache' if r['offline'] else 'Hub'})",
             f"{verdict}: {number(cov['answered_cells'])}/"
             f"{count(cov['required_cells'], 'required cell')} "
             f"answered ({cov['coverage']:.1%}, threshold {r['thresholds']['min_coverage']:.0%}); "
             f"{number(len(cov['supported_families']))}/{count(cov['families'], 'family')} fully "
             "supported "
             f"({cov['family_coverage']:.1%}, threshold "
             f"{r['thresholds']['min_family_coverage']:.0%}); oracle checked "
             f"{count(r['oracle']['checked'], 'cell')}, "
             f"{count(r['oracle']['disagreements'], 'disagreement')}",
             _weights_line(r["weights_check"]),
             "", "  family         model                                         context"
             "  spec           state          oracle          fleets"]
    lines += [_cell_line(c) for c in r["cells"]]
    if r["problems"]:
        lines += ["", "Problems:"] + [f"  - {p}" for p in r["problems"]]
    lines += ["", "Coverage is equal-weight over the cells this file names; it is not a market "
              "share. The oracle is a separate formula for plain GQA and latent models and can "
              "share a misreading of a config field with the specs."]
    return "\n".join(lines) + "\n"
