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
The shared __init__ fills a copy of a per-class template: about 3.8 us for a keyword call
of PlanRequest (54 fields) against 3.3 us for the compiled one; `replace` copies a plain
record's fields instead of dataclasses.replace's per-field walk (7.5 against 28.9 us).
"""

from __future__ import annotations

from _thread import get_ident
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, fields
from dataclasses import replace as dataclasses_replace
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


_UNSET = object()


def _init(cls):
    """__init__(self, *fields) in field order, defaults and default factories as dataclasses
    applies them, the values written to the instance's __dict__ in field order (as a frozen
    class's generated __init__ sets them with object.__setattr__, so vars() lists them as a
    generated __init__ would). Keyword calls fill a copy of a per-class template (every
    field in order, its default where it has one) instead of testing each field: PlanRequest
    has 54 fields, and the bundled audit builds hundreds."""
    flds = fields(cls)
    names = tuple(f.name for f in flds)
    known = frozenset(names)
    defaults = {f.name: f.default for f in flds if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in flds if f.default_factory is not MISSING}
    required = tuple(name for name in names if name not in defaults and name not in factories)
    template = {name: defaults.get(name, _UNSET) for name in names}
    n = len(names)

    def __init__(self, *args, **kwargs):
        given = len(args)
        if given == n and not kwargs:                 # every field given in order
            self.__dict__.update(zip(names, args, strict=True))
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
        values = template.copy()
        values.update(kwargs)
        if len(kwargs) < n:
            for name in required:
                if name not in kwargs:
                    raise TypeError(f"__init__() missing 1 required positional argument: "
                                    f"{name!r}")
            for name, make in factories.items():
                if name not in kwargs:
                    values[name] = make()
        self.__dict__.update(values)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def replace(obj, /, **changes):
    """dataclasses.replace(obj, **changes): a new instance with those fields changed. For a
    record with the shared __init__ the field values are copied as they are (what replace's
    call of that __init__ amounts to), without dataclasses' per-field walk (7.5 against 29 us
    for a PlanRequest, which every plan replaces at least once). Anything else goes to
    dataclasses.replace."""
    cls = obj.__class__
    names = cls.__dict__.get("_record_names")
    if names is None:
        return dataclasses_replace(obj, **changes)
    if changes and not changes.keys() <= cls._record_known:
        extra = next(k for k in changes if k not in cls._record_known)
        raise TypeError(f"__init__() got an unexpected keyword argument {extra!r}")
    values = dict(zip(names, cls._record_values(obj), strict=True))
    values.update(changes)
    new = object.__new__(cls)
    new.__dict__.update(values)
    return new


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
    """A class whose __init__ is plain field assignment: no __post_init__ or __slots__, no InitVar,
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
    if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
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
                if cls.__new__ is object.__new__:
                    # kvfit.records.replace copies such an instance's fields directly
                    names = tuple(f.name for f in fields(cls))
                    cls._record_names, cls._record_known = names, frozenset(names)
                    cls._record_values = staticmethod(_values(names))
            if frozen:
                _frozen_guards(cls)
            cls._record_frozen = frozen
        _methods(cls, frozen, explicit_hash)
        return cls

    return wrap if cls is None else wrap(cls)
