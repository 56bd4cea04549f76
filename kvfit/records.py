"""`record`: a dataclass whose methods are shared closures over its field list, not compiled.

On Python 3.11 `dataclasses` compiles every generated method from source, one exec each: a
frozen class with equality gets six (__init__, __repr__, __eq__, __hash__, __setattr__,
__delattr__), and the 25 classes a plain plan defines cost it 65 compiles, about 12 ms, a
sixth of its cpu (issue 13, "warm local plan <= 8x a bare interpreter start"). A record
keeps dataclasses' field model (field(), fields(), replace(), asdict(), default factories,
__dataclass_fields__) and takes the methods from here, built once per class from the field
list: the same answers as the generated ones (checked against dataclasses' own in
tests/test_records.py):
- __init__: positional or keyword fields, defaults, a fresh default-factory value per
  instance, TypeError for a missing, unknown, doubled or extra argument; values set with
  object.__setattr__ in field order. A class with a __post_init__, an InitVar, ClassVar or
  KW_ONLY annotation, an init=False or kw_only field, or a base that is a dataclass but not
  a record, keeps dataclasses' own __init__ (and frozen guards);
- frozen guards: FrozenInstanceError on assigning or deleting, with dataclasses' words;
- __eq__ only between instances of the same class (NotImplemented otherwise), over the
  compared fields; __hash__ over the hashed fields when frozen, None when not; __repr__
  over the shown fields, "..." for a recursive one; a class's own methods are kept.
The generic __init__ costs about a microsecond more per instance than a compiled one; a
plain plan makes 165 instances, the bundled audit about 6,200.
"""

from __future__ import annotations

from _thread import get_ident
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, fields
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


def _init(cls):
    """__init__(self, *fields) in field order, defaults and default factories as dataclasses
    applies them, each value set with object.__setattr__ (as a frozen class's generated
    __init__ does), in field order (so vars() lists them as a generated __init__ would)."""
    flds = fields(cls)
    names = tuple(f.name for f in flds)
    known = frozenset(names)
    defaults = {f.name: f.default for f in flds if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in flds if f.default_factory is not MISSING}
    setter = object.__setattr__
    n = len(names)

    def __init__(self, *args, **kwargs):
        given = len(args)
        if given == n and not kwargs:                 # every field given in order
            for name, value in zip(names, args, strict=True):
                setter(self, name, value)
            return
        if given > n:
            raise TypeError(f"__init__() takes {n + 1} positional arguments but {given + 1} "
                            "were given")
        if kwargs and not kwargs.keys() <= known:
            extra = next(k for k in kwargs if k not in known)
            raise TypeError(f"__init__() got an unexpected keyword argument {extra!r}")
        if given:                                     # kwargs is this call's own dict
            for name in names[:given]:
                if name in kwargs:
                    raise TypeError(f"__init__() got multiple values for argument {name!r}")
            kwargs.update(zip(names, args, strict=False))   # fewer args than fields
        if len(kwargs) < n:
            for name in names:
                if name in kwargs:
                    continue
                if name in defaults:
                    kwargs[name] = defaults[name]
                elif name in factories:
                    kwargs[name] = factories[name]()
                else:
                    raise TypeError(f"__init__() missing 1 required positional argument: "
                                    f"{name!r}")
        for name in names:
            setter(self, name, kwargs[name])

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _frozen_guards(cls):
    """The generated __setattr__ and __delattr__ of a frozen dataclass, as closures."""
    names = frozenset(f.name for f in fields(cls))

    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        if fn.__name__ in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {fn.__name__} in class {cls.__name__}")
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
        setattr(cls, fn.__name__, fn)


_PLAIN = ("InitVar", "ClassVar", "KW_ONLY")


def _plain(cls, frozen: bool) -> bool:
    """A class whose __init__ is plain field assignment: no __post_init__, no InitVar,
    ClassVar or KW_ONLY annotation, no field(init=False) or kw_only field, and dataclass bases
    only if they are such records, frozen alike (dataclasses' own rule for frozen bases)."""
    for base in cls.__mro__[1:]:
        if "__dataclass_fields__" not in vars(base):
            continue
        if "_record_frozen" not in vars(base):
            return False
        if base._record_frozen != frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one" if frozen
                            else "cannot inherit non-frozen dataclass from a frozen one")
    if hasattr(cls, "__post_init__"):
        return False
    notes = cls.__dict__.get("__annotations__", {})
    if any(any(word in str(t) for word in _PLAIN) for t in notes.values()):
        return False
    return not any(isinstance(v, Field) and (not v.init or v.kw_only is True)
                   for v in cls.__dict__.values())


def record(cls=None, /, *, frozen: bool = False):
    """`@record` / `@record(frozen=True)`: `@dataclass` / `@dataclass(frozen=True)` with the
    same methods, shared rather than compiled per class. A class with a __post_init__,
    InitVar, ClassVar, KW_ONLY, init=False or kw_only field, or a dataclass base gets
    dataclasses' own __init__ (and frozen guards), and the shared __eq__/__hash__/__repr__."""

    def wrap(cls):
        class_hash = cls.__dict__.get("__hash__", MISSING)
        explicit_hash = not (class_hash is MISSING
                             or (class_hash is None and "__eq__" in cls.__dict__))
        if not _plain(cls, frozen):
            if any("_record_frozen" in vars(b) for b in cls.__mro__[1:]):
                raise TypeError(f"record {cls.__qualname__}: a record with a __post_init__, "
                                "InitVar, ClassVar or keyword-only field cannot extend a plain record")
            cls = dataclass(cls, frozen=frozen, eq=False, repr=False)
        else:
            own_init = "__init__" in cls.__dict__
            cls = dataclass(cls, init=False, eq=False, repr=False)
            if not own_init:
                cls.__init__ = _init(cls)
            if frozen:
                _frozen_guards(cls)
            cls._record_frozen = frozen
        _methods(cls, frozen, explicit_hash)
        return cls

    return wrap if cls is None else wrap(cls)
