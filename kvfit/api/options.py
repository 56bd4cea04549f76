"""Keyword options <-> the CLI's flags: keywords are the flags' argparse destinations
(`--kv-dtype` -> kv_dtype), checked and converted by the CLI's own parser (kvfit.api.flags for
a plan; kvfit.api.fitting.FIT and kvfit.api.explain.EXPLAIN for the subcommands), so a keyword
is refused with the paragraph the flag's value gets on the command line."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from ..errors import UsageError


@dataclass(frozen=True)
class Form:
    """One function's keywords: the command whose flags they are, its parser, the
    destinations it does not take, and short names (keyword -> destination)."""

    what: str
    command: str
    build: Callable[[], argparse.ArgumentParser]
    skip: frozenset = frozenset()
    short: dict = field(default_factory=dict)

    def parser(self) -> argparse.ArgumentParser:
        return _parser(self.build)

    def actions(self) -> dict[str, argparse.Action]:
        """The options this function takes, by destination."""
        return {d: a for d, a in _actions(self.build).items() if d not in self.skip}

    def keywords(self) -> list[str]:
        """Its keyword names, sorted (short names included)."""
        return sorted([*self.actions(), *self.short])

    def parse(self, options: dict, head: tuple[str, ...] = (), tail: tuple[str, ...] = ()
              ) -> dict:
        """The parsed options (as the CLI's parser leaves them); head and tail: positional
        arguments before and after the flags."""
        argv = argv_of(self, options)
        return vars(self.parser().parse_args([*head, *argv, *tail]))


@cache
def _parser(build) -> argparse.ArgumentParser:
    """A parser built once (parsing does not change it)."""
    return build()


@cache
def _actions(build) -> dict[str, argparse.Action]:
    return {a.dest: a for a in _parser(build)._actions if a.option_strings}


def _plan_parser() -> argparse.ArgumentParser:
    from .flags import build_parser

    return build_parser()


# A plan's keywords: the plan parser's options except other questions (listings, --sweep,
# --plot), output shapes and argparse's own; users and branches name the two long ones (also
# CLI aliases: --users, --branches).
PLAN = Form("kvfit.plan", "kvfit", _plan_parser,
            frozenset({"help", "version", "list_hardware", "list_systems", "json", "verbose",
                       "sweep", "plot"}),
            {"users": "concurrent_users", "branches": "active_sequences_per_user"})
SWEEP = Form("kvfit.sweep", "kvfit", _plan_parser, PLAN.skip - {"sweep"}, PLAN.short)
COMMAND = Form("kvfit.command_line", "kvfit", _plan_parser, SWEEP.skip, PLAN.short)

# Options that take a number as well as text (as a preset's keys do: kvfit.api.preset.ROOT_KEYS).
NUMBER_OR_TEXT = frozenset({"context", "tp"})
# Options whose text is JSON: a dict is passed as its JSON text.
JSON_OR_TEXT = frozenset({"rope_scaling", "hf_overrides", "json_model_override_args"})


def _unknown(key: str, form: Form) -> UsageError:
    from difflib import get_close_matches

    near = get_close_matches(key, form.keywords(), n=1, cutoff=0.6)
    hint = (f"Did you mean {near[0]}? " if near else "") + \
        f"The options are the flags of `{form.command} --help` by their destination " \
        "(--kv-dtype -> kv_dtype)."
    return UsageError(f"{form.what} has no option {key!r}.", hint=hint, fields=(key,))


def argv_of(form: Form, options: dict) -> list[str]:
    """The command-line flags asking what `options` ask (None values left out), each as
    `--flag=value` (so a value that begins with '-' stays a value). Unknown keywords, one
    option given twice (users and concurrent_users) and values of the wrong kind are
    UsageError; the values themselves are checked when the flags are parsed."""
    known = form.actions()
    argv: list[str] = []
    seen: dict[str, str] = {}
    for key, value in options.items():
        dest = form.short.get(key, key)
        if dest not in known:
            raise _unknown(key, form)
        if dest in seen:
            raise UsageError(f"{form.what}: {seen[dest]} and {key} are the same option; give "
                             "one.", fields=(key,))
        seen[dest] = key
        if value is not None:
            argv += _flags(key, known[dest], value)
    return argv


def _flags(key: str, action: argparse.Action, value) -> list[str]:
    # the flag spelled like the keyword (--users for users=, --kv-dtype for kv_dtype=)
    flag = next((f for f in action.option_strings if f[2:].replace("-", "_") == key),
                action.option_strings[0])
    if action.nargs == 0:                       # store_true
        if not isinstance(value, bool):
            raise _kind(key, value, "True or False")
        return [flag] if value else []
    if action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items or \
                not all(isinstance(v, str) for v in items):
            raise _kind(key, value, "a string or a list of strings")
        if isinstance(action, argparse._AppendAction):
            return [f"{flag}={v}" for v in items]
        bad = next((v for v in items if v.startswith("-")), None)
        if bad is not None:
            raise UsageError(f"option {key}: {bad!r} is not a value {flag} takes (it begins "
                             "with '-').", fields=(key,))
        return [flag, *items]
    return [f"{flag}={_text(key, action.dest, value)}"]


def _text(key: str, dest: str, value) -> str:
    if isinstance(value, bool):
        raise _kind(key, value, "a number or a string")
    try:
        if isinstance(value, dict) and dest in JSON_OR_TEXT:
            return json.dumps(value)
        if isinstance(value, (str, int, float)):
            return str(value)
    except ValueError:               # an int past Python's int-string limit (4,300 digits)
        raise UsageError(f"option {key}: {_shown(value)} is too large for any option.",
                         fields=(key,)) from None
    raise _kind(key, value, "a number or a string")


def _shown(value) -> str:
    """The value as a message quotes it, even one holding an int too long to print."""
    from ..numbers import shown

    if isinstance(value, int):
        return shown(value, 80)
    try:
        return shown(repr(value), 80)
    except ValueError:
        return f"a {type(value).__name__} holding a number of thousands of digits"


def _kind(key: str, value, want: str) -> UsageError:
    return UsageError(f"option {key} takes {want}, got {type(value).__name__} "
                      f"{_shown(value)}.", fields=(key,))


def text_of(value, what: str, name: str) -> str:
    """A model, path or log given as text (str or os.PathLike), else UsageError."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise UsageError(f"{what}: the {name} is given as text (got {type(value).__name__}).")
    return os.fspath(value)


def parsed(model, options: dict, form: Form = PLAN) -> dict:
    """The parsed options of a plan of `model` (the model first, as on the command line)."""
    model = text_of(model, form.what, "model (a Hub id, a checkpoint folder, a config.json "
                    "or a *.toml preset)")
    return {"model": model} | form.parse(options)


def command_line(model, options: dict) -> str:
    """The `kvfit ...` command asking what `model` and `options` ask, shell-quoted."""
    import shlex

    parsed(model, options, COMMAND)                 # refuse what kvfit would refuse
    words = [str(model)]
    for arg in argv_of(COMMAND, options):
        flag, eq, text = arg.partition("=")
        words += [flag, text] if eq and not text.startswith("-") else [arg]
    return shlex.join(["kvfit", *words])


def schema(form: Form = PLAN) -> dict:
    """JSON Schema (draft 2020-12) of a function's keyword options, from its parser."""
    from ..numbers import FIELDS

    props: dict = {}
    for dest, action in sorted(form.actions().items()):
        prop: dict = {"description": action.help or ""}
        kind = getattr(action.type, "__name__", None)
        if action.nargs == 0:
            prop["type"] = "boolean"
        elif action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction):
            prop |= {"type": "array", "items": {"type": "string"}, "minItems": 1}
        elif action.choices:
            prop["enum"] = list(action.choices)
        elif kind in ("int", "float"):
            prop["type"] = "integer" if kind == "int" else "number"
            long = next((k for k, d in form.short.items() if d == dest), dest)
            bounds = FIELDS.get(dest) or FIELDS.get(long)     # fit's --users: concurrent_users
            if bounds:
                lo, hi, *opens = bounds[2:]
                prop["exclusiveMinimum" if opens and opens[0] else "minimum"] = lo
                prop["exclusiveMaximum" if len(opens) > 1 and opens[1] else "maximum"] = hi
            else:
                prop["minimum"] = 0
        elif dest in NUMBER_OR_TEXT:
            prop["type"] = ["string", "integer"]
        elif dest in JSON_OR_TEXT:
            prop["type"] = ["string", "object"]
        else:
            prop["type"] = "string"
        props[dest] = prop
    for short, dest in form.short.items():
        props[short] = props[dest] | {"description": f"another name of {dest}"}
    required = sorted(d for d, a in form.actions().items() if a.required)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"{form.what} options",
            "description": f"Keyword options of {form.what}: the flags of `{form.command}` by "
                           "their destination (--kv-dtype -> kv_dtype).",
            "type": "object", "properties": dict(sorted(props.items())),
            **({"required": required} if required else {}), "additionalProperties": False}
