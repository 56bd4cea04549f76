"""`kvfit MODEL ... --sweep AXIS=v1,v2 [--plot FILE]` (and `--plot` on a single plan).

Bad --sweep specs and --plot targets are refused before any planning; the chart is written
before anything is printed, so an error leaves neither a half-written file nor a report.
Exit codes: a sweep's (kvfit.planner.sweep.exit_code), else the plan's own.
"""

from __future__ import annotations

import sys


def run_sweep(ns: dict, specs: list[str], plot: str | None) -> int:
    target = None
    if plot is not None:
        from ..report.plot import check_target
        target = check_target(plot)
    from ..api import outcome, sweep_request
    req, report, cells = sweep_request(ns, specs)
    code, note = outcome(report)
    if note:
        print(note, file=sys.stderr)
    if target is not None:
        from ..report.plot import write_plot
        write_plot(*target, report, cells, report.sweep.axes if report.sweep else ())
    if req.json:
        from ..report.jsonout import render_json
        sys.stdout.write(render_json(report.to_json()))
    else:
        from ..textsafe import escape_controls
        if report.sweep:
            from ..report.sweep_text import render_sweep_text
            text = render_sweep_text(report)
        else:
            from ..report.text import render_text
            text = render_text(report)
        sys.stdout.write(escape_controls(text))
    if target is not None:
        print(f"kvfit: wrote {target[0]}", file=sys.stderr)
    return code
