"""JSON Schema validation of loaded specs, with each error mapped to its file position."""

from __future__ import annotations

import json
from functools import cache

from ..errors import Problem
from ..paths import schema_path
from .loader import Doc


@cache
def validator(name: str):
    """A Draft 2020-12 validator for schemas/<name> (jsonschema is imported on first use)."""
    import jsonschema

    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _describe(err) -> tuple[str, str | None, bool]:
    """(message, help, point_at_key) for one jsonschema error."""
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        word = "unknown key" if len(extra) == 1 else "unknown keys"
        return f"{word}: {', '.join(extra)}", f"allowed keys here: {allowed}", False
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        example = err.schema.get("properties", {}).get(missing, {}).get("examples", [None])[0]
        hint = f"add `{missing}: {json.dumps(example)}`" if example is not None else f"add `{missing}`"
        return f"missing required key '{missing}'", hint, False
    if err.validator == "enum":
        return (f"{err.instance!r} is not one of the allowed values",
                "allowed: " + ", ".join(map(str, err.validator_value)), False)
    if err.validator == "type":
        return f"expected {err.validator_value}, got {json.dumps(err.instance)[:60]}", None, False
    desc = err.schema.get("description")
    return err.message[:200], (f"this field: {desc}" if desc else None), False


def check(doc: Doc, schema_name: str) -> list[Problem]:
    """Validate `doc.data` against a schema; one Problem per error, best match first."""
    problems = []
    errors = sorted(validator(schema_name).iter_errors(doc.data),
                    key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    seen = set()
    for err in errors:
        path = tuple(err.absolute_path)
        msg, help_, _ = _describe(err)
        if (path, msg) in seen:
            continue
        seen.add((path, msg))
        where = " > ".join(map(str, path)) or "(top level)"
        problems.append(doc.problem("KV110", path, msg, help_, at=where))
    return problems
