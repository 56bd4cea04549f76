"""`kvfit calibrate PRESET.toml [--dry-run] [--output FILE] [--json]` (and `kvfit-calibrate`)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..api.preset import load_preset
from ..calibrate import config, deploy, points, procs, qualify, report, sweep, text
from ..calibrate.bench import Session, command, point_values
from ..errors import KvfitError, UsageError

EPILOG = """\
exit codes:
  0  calibrated: every concurrency point qualified on the host
  2  bad preset or [calibration] table, a refused or failed launch, an unreachable endpoint
  4  the sweep ran but did not fully calibrate: a point failed closed (e.g. a /metrics gauge
     that reads 1e308, NaN or -1, a token count that does not match), or stop_on_failure
     ended it; one paragraph on stderr says why, and the report lists every reason
  70 an unexpected internal error: a kvfit bug (KVFIT_DEBUG=1 shows the traceback)

The measured numbers are host measurements of this deployment; the plan stays a prediction.
"""


NOT_CALIBRATED = 4      # the sweep ran but did not calibrate (README exit-code table)


def build_parser() -> argparse.ArgumentParser:
    """The calibrate parser (also documented in the man page)."""
    from .plan_args import Formatter, Parser, add_offline
    p = Parser(prog="kvfit calibrate", formatter_class=Formatter,
               epilog=EPILOG, description="Measure a planned deployment on the serving host: "
               "launch the engine (or attach to it), run the engine's own serving benchmark "
               "at each concurrency point while sampling /metrics, and compare the measured "
               "ceiling with the plan's prediction.")
    p.add_argument("preset", help="TOML preset with the deployment and a [calibration] table")
    p.add_argument("--dry-run", action="store_true", help="print the plan, the concurrency "
                   "points and every command; start and contact nothing")
    p.add_argument("--output", metavar="FILE", help="write the result JSON here (atomically)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_offline(p, "plan the preset's model from the catalog or cache (as offline = true in "
                "the preset)")
    return p


def _emit(doc: dict, as_json: bool, output: str | None) -> None:
    report.validate(doc)
    if output:
        report.write_atomic(Path(output), doc)
    sys.stdout.write(report.render_json(doc) if as_json else text.render(doc))


def _head(status: str, code: int | None, path: Path, cal, dep, pts, how, notes) -> dict:
    return {"status": status, "exit_code": code, "preset": str(path), "mode": cal.mode,
            "plan": report.plan_section(dep), "workload": report.workload(cal, dep),
            "concurrency": {"points": pts, "how": how, "notes": notes}}


def _dry_run(path, cal, dep, pts, how, notes, key) -> dict:
    warnings: list[str] = []
    rules, basis = sweep.choose_rules(cal.engine, cal.version,
                                      "requested" if cal.version else None, warnings)
    values = sweep.base_values(cal, dep, pts)
    srv = None
    if cal.mode == "launch":
        from ..calibrate import server
        argv, source, _ = server.command(cal, dep, values, rules, key)
        srv = {"command": argv, "source": source, "log": None, "pid": None, "kept": False,
               "ready_after_s": None, "preflight": None}
    work = Path(tempfile.gettempdir()) / "kvfit-calibrate-RUN"
    session = Session(cal, rules, values, work, {}, key)
    benches = [{"concurrency": c, "command": command(session, point_values(session, c))}
               for c in pts]
    return _head("dry-run", 0, path, cal, dep, pts, how, notes) | {
        "engine": {"name": cal.engine, "version": rules.version, "version_basis": basis,
                   "metrics": _names(cal, rules)},
        "server": srv, "benchmarks": benches, "endpoint": {"base_url": cal.base_url},
        "points": [], "result": None, "warnings": warnings + dep.report["warnings"]}


def _names(cal, rules) -> dict:
    from ..calibrate.metrics import names
    return names(cal.engine, rules)


def _measure(path, cal, dep, pts, how, notes, key, shown, quiet=False) -> dict:
    work = Path(tempfile.mkdtemp(prefix="kvfit-calibrate-"))
    run = {"workdir": work, "key": key, "warnings": [], "rules": None,
           "values": sweep.base_values(cal, dep, pts)}
    if cal.mode == "attach" and not cal.benchmark_command:
        from ..calibrate.server import ensure_python
        ensure_python(cal.python)
    try:
        with procs.terminate_as_interrupt():
            sweep.reach(run, cal, dep, shown, quiet)
            judged = sweep.sweep(run, cal, dep, pts, shown, quiet)
    finally:
        sweep.finish(run, cal)
        if not (run.get("server") or {}).get("kept"):
            shutil.rmtree(work, ignore_errors=True)
    result = qualify.summarize(judged, pts, dep.predicted, dep.engine_prediction, cal.slo)
    code = 0 if result["calibrated"] else NOT_CALIBRATED
    status = "calibrated" if code == 0 else "not-calibrated"
    endpoint = report.endpoint_section(cal, dep, run)      # may add a warning
    return _head(status, code, path, cal, dep, pts, how, notes) | {
        "engine": {"name": cal.engine, "version": run["rules"].version,
                   "version_basis": run["version_basis"], "metrics": run["metric_names"]},
        "server": run.get("server"), "endpoint": endpoint, "points": judged, "result": result,
        "warnings": run["warnings"] + dep.report["warnings"]}


def run(argv: list[str]) -> int:
    """Parse, plan, then dry-run or measure; returns the exit code."""
    ns = build_parser().parse_args(argv)
    path = Path(ns.preset)
    if ns.output and not ns.dry_run and not Path(ns.output).absolute().parent.is_dir():
        raise UsageError(f"--output {ns.output}: the folder {Path(ns.output).parent} does not "
                         "exist.")
    values, cal = deploy.load(path, load_preset(path, for_calibration=True))
    if ns.offline:
        values["offline"] = True
    secrets: dict = {}
    try:
        key = (os.environ.get(cal.api_key_env or "") or None) if ns.dry_run else (
            config.api_key(cal))
        secrets = {key: cal.api_key_env} if key else {}
        dep = deploy.plan(values, cal)
        pts, how, notes = points.choose(cal.concurrency, cal.max_concurrency, dep.predicted)
        if ns.dry_run:
            body = _dry_run(path, cal, dep, pts, how, notes, key)
        else:
            body = _measure(path, cal, dep, pts, how, notes, key,
                            lambda a: report.redact(sweep.text(a), secrets), ns.json)
    except KvfitError as err:
        err.message = report.redact(err.message, secrets)
        raise
    doc = report.document({}, body, secrets)
    if ns.dry_run and ns.output:
        print("kvfit: note: --dry-run writes no --output file.", file=sys.stderr)
    _emit(doc, ns.json or bool(values.get("json")), None if ns.dry_run else ns.output)
    if doc["exit_code"] == NOT_CALIBRATED:
        print(not_calibrated(doc["result"]["reasons"]), file=sys.stderr)
    return doc["exit_code"]


def not_calibrated(reasons: list[str]) -> str:
    """The one paragraph on stderr for exit 4: why the sweep did not calibrate (the report
    on stdout, or --output, has every point's reasons)."""
    from ..textsafe import safe

    why = "; ".join(reasons) or "no point qualified"
    why = why if len(why) <= 600 else why[:600] + "..."
    return safe(f"kvfit: not calibrated: {why}. The sweep ran, but its measurements do not "
                "qualify; the report lists each point's reasons (exit 4).", keep_newlines=False)


def entry() -> None:
    """Console script `kvfit-calibrate`: the same as `kvfit calibrate`."""
    from .main import entry as kvfit_entry
    sys.argv = [sys.argv[0], "calibrate", *sys.argv[1:]]
    kvfit_entry()
