"""Build the frozen report model (kvfit.report.model) from the planner's JSON-ready sections.

Each part is built by its field types: a nested part from its section, a tuple of parts from
a list, a `Frozen` mapping from an open blob. A key the model does not declare goes to an open
part's `more` (an engine prediction's engine-specific numbers); anywhere else it is a bug and
raises here rather than reaching the JSON unseen.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from functools import cache

from ..report import model as rm


@cache
def _hints(cls) -> dict:
    """{field: its type} of a part (the annotations are strings under `from __future__ import
    annotations`; they name kvfit.report.model's own classes)."""
    return {f.name: eval(f.type, vars(rm)) if isinstance(f.type, str) else f.type
            for f in fields(cls)}


def _convert(hint, value):
    """`value` (plain JSON data) as the type `hint` asks for."""
    if value is None or value is rm.ABSENT:
        return value
    origin, args = getattr(hint, "__origin__", None), getattr(hint, "__args__", ())
    if isinstance(hint, types.UnionType):
        for a in args:
            if (is_dataclass(a) and isinstance(value, Mapping)) or (
                    getattr(a, "__origin__", None) is tuple and isinstance(value, (list, tuple))):
                return _convert(a, value)
        return rm.freeze(value)
    if origin is tuple:
        return tuple(_convert(args[0], v) for v in value)
    if origin is Mapping:
        return rm.Frozen({k: _convert(args[1], v) for k, v in value.items()})
    if isinstance(hint, type) and is_dataclass(hint):
        return build(hint, value)
    return rm.freeze(value)


def build(cls, data: Mapping):
    """The part `cls` from its JSON-ready section `data`."""
    if isinstance(data, cls):
        return data
    hints = _hints(cls)
    extra = [k for k in data if k not in hints or k == "more"]
    if extra and "more" not in hints:
        raise TypeError(f"{cls.__name__} has no field for {sorted(extra)}")
    more = {"more": rm.Frozen({k: data[k] for k in extra})} if extra else {}
    return cls(**{k: _convert(hints[k], v) for k, v in data.items() if k not in extra}, **more)


def assemble(data: dict) -> rm.Report:
    """The frozen Report of a finished plan's fields, with its recommended layout in full as
    `Report.chosen` (the same object as its entry in `layouts`)."""
    from dataclasses import replace

    from .layouts import layout_of

    out = build(rm.Report, data)
    chosen = layout_of(out.layouts, out.recommended)
    return out if chosen is None else replace(out, chosen=chosen)
