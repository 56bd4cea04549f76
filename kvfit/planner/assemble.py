"""Build the frozen report model (kvfit.model) from the planner's JSON-ready sections.

Each part is built by its field types: a nested part from its section, a tuple of parts from
a list, a `Frozen` mapping from an open blob; a part already built (an engine's prediction,
typed by kvfit.engines) is taken as it is. A key the model does not declare goes to an open
part's `more`; anywhere else it is a bug and raises here rather than reaching the JSON unseen.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from functools import cache

from .. import model
from ..model import base as rm

_PLAIN = (str, int, float, bool, type(None))


def _frozen(value):
    """A JSON value frozen (kvfit.model.base.freeze), scalars passed straight through."""
    return value if type(value) in _PLAIN else rm.freeze(value)


class _Names(dict):
    """Names in a part's annotations: the model's classes, found (and their submodule
    imported) only when a field holding one is built."""

    def __missing__(self, key):
        if key in model.HOME:
            return model.part(key)
        raise KeyError(key)


_NAMES = _Names(Mapping=Mapping, Frozen=rm.Frozen)


@cache
def _converters(cls) -> dict:
    """{field: the function converting its JSON value} of a part (the annotations are strings
    under `from __future__ import annotations`; they name kvfit.model's classes, resolved when
    a value of that field is first built)."""
    return {f.name: _lazy(f.type) for f in fields(cls)}


def _lazy(hint):
    """The converter of annotation `hint`, resolved on its first value that is not None/ABSENT
    (a plan imports only the model submodules of the parts it holds)."""
    if not isinstance(hint, str):
        return _converter(hint)
    conv = None

    def run(value):
        nonlocal conv
        if value is None or value is rm.ABSENT:
            return value
        if type(value) in (list, tuple) and not value:
            return ()                   # an empty list of parts needs no part class
        if conv is None:
            conv = _converter(eval(hint, {}, _NAMES))
        return conv(value)
    return run


def _converter(hint):
    """The function giving a JSON value (None and ABSENT kept) as the type `hint` asks for."""
    origin, args = getattr(hint, "__origin__", None), getattr(hint, "__args__", ())
    if isinstance(hint, types.UnionType):
        parts = [(a, _converter(a)) for a in args
                 if is_dataclass(a) or getattr(a, "__origin__", None) is tuple]

        def union(value):
            for a, conv in parts:
                if isinstance(value, Mapping if is_dataclass(a) else (list, tuple)):
                    return conv(value)
            return _frozen(value)
        return _keep(union)
    if origin is tuple:
        item = _converter(args[0])
        return _keep(lambda value: tuple(item(v) for v in value))
    if origin is Mapping:
        item = _converter(args[1])
        return _keep(lambda value: rm.Frozen({k: item(v) for k, v in value.items()}))
    if isinstance(hint, type) and is_dataclass(hint):
        return _keep(lambda value: build(hint, value))
    return _keep(_frozen)


def _keep(conv):
    """`conv` with None and ABSENT passed through unchanged."""
    return lambda value: value if value is None or value is rm.ABSENT else conv(value)


def build(cls, data: Mapping):
    """The part `cls` from its JSON-ready section `data`."""
    if isinstance(data, cls):
        return data
    convs = _converters(cls)
    extra = [k for k in data if k not in convs or k == "more"]
    if extra and "more" not in convs:
        raise TypeError(f"{cls.__name__} has no field for {sorted(extra)}")
    more = {"more": rm.Frozen({k: data[k] for k in extra})} if extra else {}
    return cls(**{k: convs[k](v) for k, v in data.items() if k not in extra}, **more)


def assemble(data: dict):
    """The frozen Report of a finished plan's fields, with its recommended layout in full as
    `Report.chosen` (the same object as its entry in `layouts`)."""
    from dataclasses import replace

    from ..model.plan import Report
    from .layouts import layout_of

    out = build(Report, data)
    chosen = layout_of(out.layouts, out.recommended)
    return out if chosen is None else replace(out, chosen=chosen)
