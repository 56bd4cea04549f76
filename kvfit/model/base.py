"""The report model's base: the ABSENT marker, read-only `Frozen` mappings, `freeze`,
`to_plain` (a part as its JSON) and `Part`, the base of every frozen part.

A field holding `ABSENT` is a key the JSON leaves out (falsy, so `if lay.static:` reads
naturally). Open mappings (`engine_check`, RoPE `stated`/`engines`, `layer_sets`, a sweep
cell's `values`, an open part's `more`) are `Frozen`: read-only, deeply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass


class _Absent:
    """The one ABSENT marker: a key the JSON leaves out."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


class Frozen(Mapping):
    """A read-only mapping whose values are frozen too (dicts -> Frozen, lists -> tuples)."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping = ()):
        object.__setattr__(self, "_data", {k: freeze(v) for k, v in data.items()} if type(data)
                           is dict else {k: freeze(v) for k, v in dict(data).items()})

    def __setattr__(self, name, value):
        raise AttributeError("a Frozen mapping cannot be changed")

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Frozen({self._data!r})"


_SCALARS = frozenset({str, int, float, bool, type(None)})


def freeze(value):
    """`value` with every dict made a Frozen mapping and every list a tuple."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return Frozen(value)
    if kind is list or kind is tuple:
        return tuple(freeze(v) for v in value)
    if isinstance(value, Frozen) or is_dataclass(value):
        return value
    if isinstance(value, Mapping):
        return Frozen(value)
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def to_plain(value):
    """JSON-ready: dataclasses and Frozen mappings become dicts (ABSENT fields and fields
    marked json=False left out), tuples become lists."""
    if is_dataclass(value):
        out = {}
        for f in fields(value):
            v = getattr(value, f.name)
            if v is ABSENT or not f.metadata.get("json", True):
                continue
            if f.name == "more":              # an open part's other keys, inline
                out |= to_plain(v)
            else:
                out[f.name] = to_plain(v)
        return out
    if isinstance(value, Mapping):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


PART = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**PART)
class Part:
    """Base of every report part: `to_json()` is its JSON object."""

    def to_json(self) -> dict:
        return to_plain(self)
