"""kvfit's Python API: the questions the CLI answers, as functions returning typed results.

    import kvfit
    report = kvfit.plan("Qwen/Qwen3-32B", hardware="h100-80", gpus=8, context="32k")
    report.fits, report.recommended, report.to_json()    # to_json() == the CLI's --json
    kvfit.exit_code(report)                               # 0 fits, 1 not met, 5 not judged

Keyword options are the `kvfit MODEL` flags by their argparse destination (--kv-dtype ->
kv_dtype, --concurrent-users -> concurrent_users, or its short name users), checked by the
CLI's own parser: a bad option raises kvfit.BadInput with the paragraph the CLI prints.
Nothing here prints or exits; a note the CLI would print on stderr (a preset value the
options replace) is logged at INFO on the "kvfit" logger. Every call is independent, so the
API may be called from several threads.
"""

from __future__ import annotations

from ..errors import BadInput, ConfigError, HubError, KvfitError, SpecError, Unsupported, UsageError

__all__ = ["BadInput", "ConfigError", "HubError", "KvfitError", "SpecError", "Unsupported",
           "UsageError", "command_line", "exit_code", "plan", "plan_options_schema"]


def plan(model, **options):
    """Plan `model` (a Hub id, checkpoint folder, config.json or *.toml preset) with the
    `kvfit MODEL` flags as keywords; returns the frozen Report (kvfit.report.model.Report),
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

    return line(model, options, extra=frozenset({"sweep"}))


def plan_options_schema() -> dict:
    """JSON Schema (draft 2020-12) of kvfit.plan's keyword options, made from the plan parser:
    each option's type, bounds, choices and help text."""
    from .options import schema

    return schema()
