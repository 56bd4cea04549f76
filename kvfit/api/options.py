"""A plan's keyword options <-> the CLI's flags: keywords are the flags' argparse destinations
(`--kv-dtype` -> kv_dtype), checked and converted by the CLI's own parser (kvfit.api.flags), so
a keyword is refused with the paragraph the flag's value gets on the command line."""

from __future__ import annotations

import argparse
import json
from functools import cache

from ..errors import UsageError

# Short keyword names of two long flags (also CLI aliases: --users, --branches).
SHORT = {"users": "concurrent_users", "branches": "active_sequences_per_user"}
# Parser destinations that are not a plan's question: other questions (listings, --sweep,
# --plot), output shapes, and argparse's own actions.
NOT_PLAN = frozenset({"help", "version", "model", "list_hardware", "list_systems", "json",
                      "verbose", "sweep", "plot"})
# Options that take a number as well as text (as a preset's keys do: kvfit.api.preset.ROOT_KEYS).
NUMBER_OR_TEXT = frozenset({"context", "tp"})


@cache
def parser() -> argparse.ArgumentParser:
    """The plan parser without help text extras, built once (parsing does not change it)."""
    from .flags import build_parser

    return build_parser()


@cache
def actions() -> dict[str, argparse.Action]:
    """Every option of the plan parser by its destination (kvfit.plan's keywords, plus the
    NOT_PLAN ones)."""
    return {a.dest: a for a in parser()._actions if a.option_strings}


def plan_keywords() -> list[str]:
    """kvfit.plan's keyword names, sorted (the short names SHORT included)."""
    return sorted([d for d in actions() if d not in NOT_PLAN] + list(SHORT))


def _unknown(key: str, allowed: list[str], what: str) -> UsageError:
    from difflib import get_close_matches

    near = get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = (f"Did you mean {near[0]}? " if near else "") + \
        "kvfit.plan_options_schema() lists every option."
    return UsageError(f"{what} has no option {key!r}.", hint=hint, fields=(key,))


def argv_of(options: dict, *, what: str = "kvfit.plan", extra: frozenset = frozenset()
            ) -> list[str]:
    """The command-line flags asking what `options` ask (None values left out), in the
    `--flag=value` form for values that begin with '-'. Unknown keywords, the same option
    given twice (users and concurrent_users) and values of the wrong kind are UsageError;
    the values themselves are checked when the flags are parsed. extra: NOT_PLAN names this
    caller also takes (sweep)."""
    known = actions()
    allowed = [d for d in known if d not in NOT_PLAN or d in extra] + list(SHORT)
    argv: list[str] = []
    seen: dict[str, str] = {}
    for key, value in options.items():
        dest = SHORT.get(key, key)
        if dest not in known or (dest in NOT_PLAN and dest not in extra):
            raise _unknown(key, sorted(allowed), what)
        if dest in seen:
            raise UsageError(f"{what}: {seen[dest]} and {key} are the same option; give one.",
                             fields=(key,))
        seen[dest] = key
        if value is None:
            continue
        argv += _flags(key, known[dest], value)
    return argv


def _flags(key: str, action: argparse.Action, value) -> list[str]:
    name = key if key in SHORT else action.dest       # --users for users=, else the dest's flag
    flag = next((f for f in action.option_strings if f[2:].replace("-", "_") == name),
                action.option_strings[0])
    if action.nargs == 0:                       # store_true
        if not isinstance(value, bool):
            raise _kind(key, value, "True or False")
        return [flag] if value else []
    if action.nargs == "+" or isinstance(action, argparse._AppendAction):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items or \
                not all(isinstance(v, str) for v in items):
            raise _kind(key, value, "a string or a list of strings")
        if isinstance(action, argparse._AppendAction):
            return [f"{flag}={v}" for v in items]
        if any(v.startswith("-") for v in items):
            raise UsageError(f"{key}: {items[0]!r} is not a value {flag} takes.", fields=(key,))
        return [flag, *items]
    return [f"{flag}={_text(key, value)}"]


def _text(key: str, value) -> str:
    if isinstance(value, bool):
        raise _kind(key, value, "a number or a string")
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, (str, int, float)):
        return str(value)
    raise _kind(key, value, "a number or a string")


def _kind(key: str, value, want: str) -> UsageError:
    from ..numbers import shown

    return UsageError(f"option {key} takes {want}, got {type(value).__name__} "
                      f"{shown(repr(value), 80)}.", fields=(key,))


def parsed(model, options: dict, *, extra: frozenset = frozenset(), what: str = "kvfit.plan"
           ) -> dict:
    """The parsed options (as the CLI's parser leaves them) of a plan of `model`."""
    import os

    if not isinstance(model, (str, os.PathLike)) or isinstance(model, bytes):
        raise UsageError(f"{what}: the model is a Hub id, a checkpoint folder, a config.json "
                         f"or a *.toml preset, given as text (got {type(model).__name__}).")
    argv = argv_of(options, what=what, extra=extra)
    return {"model": os.fspath(model)} | vars(parser().parse_args(argv))


def command_line(model, options: dict, *, extra: frozenset = frozenset()) -> str:
    """The `kvfit ...` command asking what `model` and `options` ask, shell-quoted."""
    import shlex

    parsed(model, options, extra=extra, what="kvfit.command_line")   # refuse what kvfit would
    words = [str(model)]
    for arg in argv_of(options, extra=extra):
        flag, eq, text = arg.partition("=")
        words += [flag, text] if eq and not text.startswith("-") else [arg]
    return shlex.join(["kvfit", *words])


def schema() -> dict:
    """JSON Schema (draft 2020-12) of kvfit.plan's keyword options, from the plan parser."""
    from ..numbers import FIELDS

    props: dict = {}
    for dest, action in sorted(actions().items()):
        if dest in NOT_PLAN:
            continue
        prop: dict = {"description": action.help or ""}
        kind = getattr(action.type, "__name__", None)
        if action.nargs == 0:
            prop["type"] = "boolean"
        elif action.nargs == "+":
            prop |= {"type": "array", "items": {"type": "string"}, "minItems": 1}
        elif action.choices:
            prop["enum"] = list(action.choices)
        elif kind in ("int", "float"):
            prop["type"] = "integer" if kind == "int" else "number"
            bounds = FIELDS.get(dest)
            if bounds:
                _flag, _kind_, lo, hi, *opens = bounds
                lo_open = bool(opens and opens[0])
                hi_open = len(opens) > 1 and bool(opens[1])
                prop["exclusiveMinimum" if lo_open else "minimum"] = lo
                prop["exclusiveMaximum" if hi_open else "maximum"] = hi
            else:
                prop["minimum"] = 0
        elif dest in NUMBER_OR_TEXT:
            prop["type"] = ["string", "integer"]
        else:
            prop["type"] = "string"
        props[dest] = prop
    for short, dest in SHORT.items():
        props[short] = props[dest] | {"description": f"short name of {dest}"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "kvfit.plan options",
            "description": "Keyword options of kvfit.plan(model, **options): the `kvfit MODEL` "
                           "flags by their destination (--kv-dtype -> kv_dtype).",
            "type": "object", "properties": props, "additionalProperties": False}
