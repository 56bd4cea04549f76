"""Entry point: dispatch subcommands, run plans, map errors to exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable

from ..errors import KvfitError

# name -> (module, its entry `run(argv) -> exit code`, its parser builder). main() dispatches
# through this table and the man page (kvfit/cli/manpage.py) documents every entry from its
# own parser, so a subcommand added here appears in both.
SUBCOMMANDS = {
    "specs": ("kvfit.cli.specs_cmd", "run", "build_parser"),
    "hardware": ("kvfit.cli.hardware_cmd", "run", "parser"),
    "explain-log": ("kvfit.cli.explain_log", "run", "build_parser"),
    "calibrate": ("kvfit.cli.calibrate_cmd", "run", "build_parser"),
    "audit": ("kvfit.cli.audit_cmd", "run", "build_parser"),
    "fit": ("kvfit.cli.fit_cmd", "run", "parser"),
    "catalog": ("kvfit.cli.catalog_cmd", "run", "parser"),
    "mcp": ("kvfit.cli.mcp_cmd", "run", "parser"),
    "serve": ("kvfit.cli.serve_cmd", "run", "parser"),
}


def subcommand(name: str, part: str):
    """The `run` or `parser` function of subcommand `name` (imported only when needed)."""
    from importlib import import_module

    module, run, parser = SUBCOMMANDS[name]
    return getattr(import_module(module), run if part == "run" else parser)


def _list_hardware(as_json: bool) -> int:
    import json

    from ..api import list_hardware
    rows = list_hardware().to_json()
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        vis = f"{r['visible_mib']:,} MiB visible" if r["visible_mib"] else "visible: n/a"
        print(f"{r['id']:<16} {r['nominal_gib']:>7g} GiB nominal  {vis:<22} {r['name']}")
    return 0


def _list_systems(as_json: bool) -> int:
    import json

    from ..api import list_systems
    rows = list_systems().to_json()
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    print("A TP group inside one scale-up domain is node-local; past the scale-out boundary "
          "(more GPUs than one domain) it is cross-domain.")
    for r in rows:
        print(f"{r['id']:<12} {r['accelerators']:>3} x {r['hardware']:<11} scale-up domain "
              f"{r['scale_up_domain_accelerators']:>2}  memory domains {r['memory_domains']:>2}  "
              f"{r['name']}")
        n = r["scale_up_domain_accelerators"]
        print(f"{'':<12} scale-out beyond {n} GPU{'s' if n != 1 else ''}: "
              f"{r['scale_out_fabric'] or 'not documented'}")
    return 0


def run_plan(argv: list[str], started: float | Callable[[], float] | None = None) -> int:
    """One plan; `started` (a time.monotonic() reading, or a function giving it when the Hub
    is first needed) is when --timeout starts counting."""
    from .plan_args import build_parser

    ns = vars(build_parser().parse_args(argv))
    if ns.pop("list_hardware", False):
        return _list_hardware(ns.get("json", False))
    if ns.pop("list_systems", False):
        return _list_systems(ns.get("json", False))
    verbose = ns.pop("verbose", False)
    if "sweep" in ns or "plot" in ns:
        from ..planner.tune import check_single
        check_single(bool(ns.get("tune")))
        from .sweep_cmd import run_sweep
        return run_sweep(ns, ns.pop("sweep", []), ns.pop("plot", None))
    from ..api import outcome, plan_request
    req, report = plan_request(ns, started)
    if req.json:
        from ..report.jsonout import render_json
        sys.stdout.write(render_json(report.to_json()))
    else:
        from ..report.text import render_text
        from ..textsafe import escape_controls
        text = render_text(report, verbose=verbose)
        sys.stdout.write(escape_controls(text))   # config text may hold escapes
    code, note = outcome(report)
    if note:
        print(note, file=sys.stderr)
    return code


def main(argv: list[str] | None = None, started: float | Callable[[], float] | None = None
         ) -> int:
    """Run kvfit ARGV; the exit code. started: when the process began (the console entry
    passes it, so a plan's --timeout bounds the whole run), or a function giving it; None:
    from the first Hub request."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return subcommand(argv[0], "run")(argv[1:])
        return run_plan(argv, started)
    except KvfitError as err:
        if _json_errors(argv):
            import json
            print(json.dumps({"error": err.to_json() | {"exit_code": err.exit_code}}, indent=2))
        print(err.render(), file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("kvfit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the outer guard: no traceback reaches a user
        return _internal_error(exc, argv)


INTERNAL_ERROR = 70  # EX_SOFTWARE: never 1 ("does not fit") or 2 (bad input)


def _json_errors(argv: list[str]) -> bool:
    """An error is a JSON object on stdout with --json, or a plan preset's [output] json."""
    if "--json" in argv:
        return True
    if argv and argv[0] in SUBCOMMANDS:
        return False
    from ..api.preset import wants_json
    return wants_json(argv)


def _internal_error(exc: Exception, argv: list[str]) -> int:
    """One paragraph for an unexpected exception (exit 70); KVFIT_DEBUG=1 adds the traceback."""
    import os

    from ..textsafe import safe

    shown = " ".join(argv)
    shown = shown if len(shown) <= 300 else shown[:300] + "..."
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    message = (f"an unexpected {what} while handling `kvfit {shown}`; this is a kvfit bug, "
               "please report it with that command line and its input (set KVFIT_DEBUG=1 to "
               "see the traceback).")
    message = safe(message, keep_newlines=False)
    if os.environ.get("KVFIT_DEBUG", "").strip() not in ("", "0"):
        import traceback
        print(safe("".join(traceback.format_exception(exc))), file=sys.stderr, end="")
    if _json_errors(argv):
        import json
        print(json.dumps({"error": {"kind": "internal error", "message": message, "hint": None,
                                    "fields": [], "exit_code": INTERNAL_ERROR}}, indent=2))
    print(f"kvfit: internal error: {message}", file=sys.stderr)
    return INTERNAL_ERROR


def _process_started() -> float:
    """The time.monotonic() reading at which this process started (kvfit.hub.deadline)."""
    from ..hub.deadline import process_started

    return process_started()


def entry() -> None:
    """Console-script entry; a closed pipe (kvfit ... | head) ends quietly. The process start
    is read only if a plan goes to the Hub (the same instant then: it is the start's age
    subtracted from the clock), so a local plan imports nothing of kvfit.hub."""
    import gc
    # A run is short and allocates mostly objects that live to its end (modules, classes,
    # spec data), so the collector runs less often than at its default threshold.
    gc.set_threshold(50_000, 10, 10)
    try:
        code = main(started=_process_started)
        sys.stdout.flush()
    except BrokenPipeError:
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    # Exiting: the interpreter's last full collection would walk every object of every
    # imported module (a twentieth of a plan) to free memory the exit returns anyway; Python
    # never promised __del__ for objects alive at exit, and output is flushed above.
    gc.freeze()
    sys.exit(code)
