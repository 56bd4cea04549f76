"""kvfit's Python API: the questions the CLI answers, as functions returning typed results.

    import kvfit
    report = kvfit.plan("Qwen/Qwen3-32B", hardware="h100-80", gpus=8, context="32k")
    report.fits, report.recommended, report.to_json()    # to_json() == the CLI's --json
    kvfit.exit_code(report)                               # 0 fits, 1 not met, 5 not judged

Keyword options are the `kvfit MODEL` flags by their argparse destination (--kv-dtype ->
kv_dtype, --concurrent-users -> concurrent_users, or its short name users), checked by the
CLI's own parser: a bad option raises kvfit.BadInput with the paragraph the CLI prints.
Nothing here prints or exits; a note the CLI would print on stderr (a preset value the
options replace) is logged at INFO on the "kvfit" logger. A call changes no process-wide
state (no environment variable, no stream, no module setting), so calls may come from
several threads.
"""

from __future__ import annotations

from ..errors import BadInput, ConfigError, HubError, KvfitError, SpecError, Unsupported, UsageError

__all__ = ["BadInput", "ConfigError", "HubError", "KvfitError", "SpecError", "Unsupported",
           "UsageError", "catalog_search", "command_line", "exit_code", "explain_log", "fit",
           "list_hardware", "list_systems", "plan", "plan_options_schema", "sweep"]


def plan(model, **options):
    """Plan `model` (a Hub id, checkpoint folder, config.json or *.toml preset) with the
    `kvfit MODEL` flags as keywords; returns the frozen Report (kvfit.model.plan.Report),
    whose to_json() is the dict `kvfit MODEL ... --json` prints.

    Raises BadInput (bad options, values, preset or config), Unsupported (no spec covers the
    architecture), HubError (the Hub or the local cache could not answer) or SpecError."""
    from .options import parsed

    return plan_request(parsed(model, options), note=log_note)[1]


def plan_request(ns: dict, started=None, note=None):
    """(PlanRequest, Report) of parsed plan flags `ns` (the CLI's and plan()'s one path).
    started: when a plan's --timeout starts counting (see kvfit.cli.main.run_plan); note: where
    preset notes go (default: stderr)."""
    from ..planner.build import plan as build
    from .request import planned, request_from

    req = request_from(ns, note)
    req.hub_started = started
    return req, planned(req, lambda: build(req))


def sweep(model, sweep, **options):
    """Plan `model` once per value of each axis: sweep is "AXIS=V1,V2,..." or a list of one
    or two of them (context, users, gpus, nodes, kv-dtype; as `kvfit MODEL --sweep`), the
    other keywords as kvfit.plan's. Returns the Report whose `sweep` holds every cell; its
    to_json() is `kvfit MODEL ... --sweep ... --json`, exit_code() the sweep's (0 every cell
    meets the target, 1 some does not, 5 some could not be judged)."""
    from .options import SWEEP, parsed

    ns = parsed(model, {**options, "sweep": sweep}, SWEEP)
    specs = ns.pop("sweep", None)          # None: an option given None is not given
    if not specs:
        raise UsageError("kvfit.sweep needs sweep: \"AXIS=V1,V2,...\" or a list of one or two "
                         "of them (e.g. \"context=8k,32k\").", fields=("sweep",))
    return sweep_request(ns, specs, note=log_note)[1]


def sweep_request(ns: dict, specs: list[str], started=None, note=None):
    """(PlanRequest, Report, the cells a chart draws) of parsed plan flags and --sweep specs
    (none: a single plan, one cell); the CLI's --sweep and --plot, and sweep()."""
    from ..planner import sweep as sweeps
    from ..planner.build import plan as build
    from ..planner.tune import check_single
    from .request import planned, request_from

    check_single(bool(ns.get("tune")))
    flags = set(ns)
    req = request_from(ns, note)
    req.hub_started = started
    axes = sweeps.parse_axes(specs, flags, vars(req)) if specs else []
    if axes:
        report = planned(req, lambda: sweeps.run(req, axes))
        return req, report, report.sweep.cells
    report = planned(req, lambda: build(req))
    return req, report, [sweeps.cell_result(report, {})]


def fit(*, paths=(), **options):
    """Which catalog checkpoints (and local checkpoint folders `paths`) meet the target on
    the hardware, best first, as `kvfit fit` answers: keywords are its flags (hardware, gpus,
    system, nodes, tp, context, users or concurrent_users, kv_dtype, engine, utilization,
    family, no_catalog). Returns a FitResult; to_json() is `kvfit fit ... --json`."""
    import argparse

    from .fitting import FIT, answer
    from .options import text_of

    if isinstance(paths, (str, bytes)) or not isinstance(paths, (list, tuple)):
        paths = [paths]
    paths = [text_of(p, FIT.what, "checkpoint folder") for p in paths]
    return answer(argparse.Namespace(**FIT.parse(options, tail=("--", *paths))))


def explain_log(text, **options):
    """Compare a vLLM or SGLang start-up log (its text) with kvfit's prediction, as
    `kvfit explain-log FILE` does: keywords are its flags (model_dir or config, engine_version,
    tp, hardware, weight_gib, predict_weights, and the engine's own flags). Returns an
    ExplainResult; to_json() is `kvfit explain-log FILE --json`."""
    from .explain import EXPLAIN, MAX_LOG_BYTES, answer

    if not isinstance(text, str):
        raise UsageError(f"kvfit.explain_log: the log is given as text (got "
                         f"{type(text).__name__}).")
    if len(text) > MAX_LOG_BYTES:
        raise UsageError(f"the log is {len(text):,} characters; kvfit explain-log reads at "
                         f"most {MAX_LOG_BYTES:,} bytes of a start-up log.",
                         hint="Pass the start-up part: from the launch to the KV-cache lines.")
    return answer(EXPLAIN.parse(options, head=("-",)), lambda: text)


def list_hardware():
    """The accelerator presets (a Listing of rows: id, name, aliases, nominal_gib,
    visible_mib, unified), as `kvfit --list-hardware --json`."""
    from ..hardware.presets import accelerators
    from ..model.base import Frozen
    from .results import Listing

    accs = sorted({a.id: a for a in accelerators().values()}.values(), key=lambda a: a.id)
    return Listing(rows=tuple(Frozen({
        "id": a.id, "name": a.name, "aliases": list(a.aliases), "nominal_gib": a.nominal_gib,
        "visible_mib": a.visible_mib, "unified": a.unified}) for a in accs))


def list_systems():
    """The system presets (a Listing of rows: id, name, hardware, accelerators, hosts,
    scale-up domain, memory domains, fabrics), as `kvfit --list-systems --json`."""
    from ..model.base import Frozen
    from ..planner.systems import listing
    from .results import Listing

    return Listing(rows=tuple(Frozen(r) for r in listing()))


def catalog_search(query: str = "", limit: int = 20):
    """Offline catalog entries whose repo id (or former id) holds `query` (any letter case;
    "" matches all), best first, at most `limit`: a Listing of the objects
    `kvfit catalog show ID --json` prints."""
    from ..model.base import Frozen
    from ..numbers import whole
    from .catalog import describe, search
    from .results import Listing

    if not isinstance(query, str):
        raise UsageError(f"kvfit.catalog_search: the query is text (got {type(query).__name__}).")
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise UsageError(f"kvfit.catalog_search: limit is a whole number (got "
                         f"{type(limit).__name__}).")
    limit = whole(limit, "kvfit.catalog_search limit", 1, 10_000)
    return Listing(rows=tuple(Frozen(describe(r)) for r in search(query, limit)))


def log_note(text: str) -> None:
    """A note the CLI prints on stderr, logged at INFO on the "kvfit" logger instead."""
    import logging

    from ..textsafe import safe

    logging.getLogger("kvfit").info(safe(text, keep_newlines=False))


def outcome(result) -> tuple[int, str | None]:
    """(exit code, the note the CLI prints on stderr with it, or None) of a result."""
    if isinstance(result, KvfitError):
        return result.exit_code, None
    code = getattr(result, "exit_code", None)
    if isinstance(code, int) and not isinstance(code, bool):     # fit, explain-log, listings
        return code, None
    if getattr(result, "sweep", None):
        return result.sweep.exit_code, None
    from .request import verdict_code

    code = verdict_code(result)
    if result.engine_check:
        from ..preflight import exit_code as checked

        return checked(result.engine_check, code)
    return code, None


def exit_code(result) -> int:
    """The CLI's exit code for a result (or a KvfitError): a plan's 0 fits, 1 not met, 5 not
    judged (2 or 3 from an engine check); a sweep's over its cells; fit's 0 some checkpoint
    fits, 1 none; 2 for bad input. See README "Exit codes"."""
    return outcome(result)[0]


def command_line(model, **options) -> str:
    """The `kvfit ...` command (shell-quoted) asking what kvfit.plan(model, **options) asks;
    also takes sweep=[...] (kvfit.sweep's axes). Bad options raise BadInput."""
    from .options import command_line as line

    return line(model, options)


def plan_options_schema() -> dict:
    """JSON Schema (draft 2020-12) of kvfit.plan's keyword options, made from the plan parser:
    each option's type, bounds, choices and help text."""
    from .options import schema

    return schema()
