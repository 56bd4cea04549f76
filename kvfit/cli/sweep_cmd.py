"""`kvfit MODEL ... --sweep AXIS=v1,v2 [--plot FILE]` (and `--plot` on a single plan).

Bad --sweep specs and --plot targets are refused before any planning; the chart is written
before anything is printed, so an error leaves neither a half-written file nor a report.
Exit codes: a sweep's (kvfit.planner.sweep.exit_code), else the plan's own.
"""

from __future__ import annotations

import sys


def run_sweep(ns: dict, specs: list[str], plot: str | None) -> int:
    from ..api.request import planned, request_from, verdict_code
    from ..planner import sweep

    target = None
    if plot is not None:
        from ..report.plot import check_target
        target = check_target(plot)
    flags = set(ns)
    req = request_from(ns)
    axes = sweep.parse_axes(specs, flags, vars(req)) if specs else []
    if axes:
        report = planned(req, lambda: sweep.run(req, axes))
        cells, code = report.sweep.cells, report.sweep.exit_code
    else:
        from ..planner.build import plan
        report = planned(req, lambda: plan(req))
        cells, code = [sweep.cell_result(report, {})], verdict_code(report)
        if report.engine_check:
            from ..preflight import exit_code
            code, note = exit_code(report.engine_check, code)
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
        if axes:
            from ..report.sweep_text import render_sweep_text
            text = render_sweep_text(report)
        else:
            from ..report.text import render_text
            text = render_text(report)
        sys.stdout.write(escape_controls(text))
    if target is not None:
        print(f"kvfit: wrote {target[0]}", file=sys.stderr)
    return code
