"""`record`: a dataclass whose __eq__, __hash__ and __repr__ are shared functions, not generated.

On Python 3.11 `dataclasses` compiles every generated method separately (one exec each): a
frozen class with equality gets six (__init__, __repr__, __eq__, __hash__, __setattr__,
__delattr__), about 0.8 ms per class, and a plain plan defines some 25 such classes, a
quarter of its cpu (issue 13, "warm local plan <= 8x a bare interpreter start"). A record
lets dataclasses generate only what depends on the fields' code (__init__, and the frozen
guards), and gives it the three methods that only read field values, built from the field
list with operator.attrgetter: the same answers as the generated ones (fields with repr=False
or compare=False left out alike, equality only between instances of the same class,
`NotImplemented` otherwise, the hash of the compared fields' tuple when frozen, unhashable
when not, "..." for a recursive repr, a class's own methods kept), checked against
dataclasses' own in tests/test_records.py. Everything else (fields, replace, asdict,
default factories, __post_init__) is dataclasses' own.
"""

from __future__ import annotations

from _thread import get_ident
from dataclasses import MISSING, dataclass, fields
from operator import attrgetter


def _values(names: tuple[str, ...]):
    """The tuple of those fields' values, as the generated methods build it."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _methods(cls, frozen: bool, explicit_hash: bool) -> None:
    flds = fields(cls)
    compared = _values(tuple(f.name for f in flds if f.compare))
    hashed = _values(tuple(f.name for f in flds if (f.compare if f.hash is None else f.hash)))
    shown = tuple(f.name for f in flds if f.repr)
    running: set = set()

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self):
        return hash(hashed(self))

    def __repr__(self):
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({inner})"

    own = cls.__dict__
    if "__repr__" not in own:
        __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
        cls.__repr__ = __repr__
    if "__eq__" not in own:
        __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
        cls.__eq__ = __eq__
    if not explicit_hash:                 # dataclasses' rule for eq=True, unsafe_hash=False
        if frozen:
            __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
            cls.__hash__ = __hash__
        else:
            cls.__hash__ = None


def record(cls=None, /, *, frozen: bool = False):
    """`@record` / `@record(frozen=True)`: `@dataclass` / `@dataclass(frozen=True)` with the
    same methods, three of them shared rather than compiled per class."""

    def wrap(cls):
        class_hash = cls.__dict__.get("__hash__", MISSING)
        explicit_hash = not (class_hash is MISSING
                             or (class_hash is None and "__eq__" in cls.__dict__))
        cls = dataclass(cls, frozen=frozen, eq=False, repr=False)
        _methods(cls, frozen, explicit_hash)
        return cls

    return wrap if cls is None else wrap(cls)
