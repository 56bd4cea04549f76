"""kvfit.records.record against dataclasses' own generated methods: each class below is built
twice, once with @dataclass and once with @record (same arguments), and every instance pair
must give the same repr, the same equality answers (with each other's kind, with other
classes, with NotImplemented) and the same hash, or be unhashable alike."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import field

import pytest

from kvfit.records import record


def _body(kind: str) -> dict:
    """A class namespace (fresh each time: the decorators write into it)."""
    if kind == "plain":
        return {"__annotations__": {"a": "int", "b": "str"}, "b": "x"}
    if kind == "one":
        return {"__annotations__": {"a": "float"}}
    if kind == "empty":
        return {"__annotations__": {}}
    if kind == "options":           # repr=False, compare=False, hash=, default_factory
        return {"__annotations__": {"a": "int", "hidden": "int", "loose": "int", "h": "int",
                                    "items": "list"},
                "hidden": field(default=0, repr=False),
                "loose": field(default=0, compare=False),
                "h": field(default=0, hash=False),
                "items": field(default_factory=list)}
    if kind == "own":               # the class's own __eq__ and __repr__ are kept
        return {"__annotations__": {"a": "int"},
                "__eq__": lambda self, other: True, "__repr__": lambda self: "mine"}
    if kind == "own-hash":
        return {"__annotations__": {"a": "int"}, "__hash__": lambda self: 7}
    raise AssertionError(kind)


KINDS = ("plain", "one", "empty", "options", "own", "own-hash")
ARGS = {"plain": [(1,), (1, "y"), (2,)], "one": [(1.5,), (math.nan,), (2.0,)],
        "empty": [(), ()], "options": [(1,), (1, 2, 3, 4), (1, 0, 9, 9), (2,)],
        "own": [(1,), (2,)], "own-hash": [(1,), (2,)]}


def _twins(kind: str, frozen: bool):
    a = dataclasses.dataclass(type("C", (), _body(kind)), frozen=frozen)
    b = record(type("C", (), _body(kind)), frozen=frozen)
    return a, b


def _hash(obj):
    try:
        return hash(obj)
    except TypeError as exc:
        return str(exc)


@pytest.mark.parametrize("frozen", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_record_methods_answer_as_dataclasses_do(kind, frozen):
    ref_cls, rec_cls = _twins(kind, frozen)
    ref = [ref_cls(*args) for args in ARGS[kind]]
    rec = [rec_cls(*args) for args in ARGS[kind]]
    assert [repr(r) for r in rec] == [repr(r) for r in ref]
    assert [_hash(r) for r in rec] == [_hash(r) for r in ref]
    assert [[x == y for y in rec] for x in rec] == [[x == y for y in ref] for x in ref]
    assert [[x != y for y in rec] for x in rec] == [[x != y for y in ref] for x in ref]
    assert [r.__eq__(object()) for r in rec] == [r.__eq__(object()) for r in ref]
    assert rec[0] != ref[0] or kind == "own"          # another class is never equal
    assert (rec_cls.__hash__ is None) == (ref_cls.__hash__ is None)


def test_a_record_nan_field_compares_as_the_generated_tuple_does():
    """The generated __eq__ compares tuples, which take an identical object as equal: a
    one-field record holding the same NaN equals itself, as a dataclass does."""
    ref_cls, rec_cls = _twins("one", True)
    nan = math.nan
    assert (rec_cls(nan) == rec_cls(nan)) is (ref_cls(nan) == ref_cls(nan)) is True


def test_frozen_records_stay_frozen_and_keep_the_dataclass_helpers():
    _, rec_cls = _twins("options", True)
    obj = rec_cls(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.a = 3
    assert dataclasses.replace(obj, a=5).a == 5
    assert dataclasses.asdict(obj) == {"a": 1, "hidden": 2, "loose": 0, "h": 0, "items": []}
    assert [f.name for f in dataclasses.fields(obj)] == ["a", "hidden", "loose", "h", "items"]


def test_a_recursive_repr_shows_dots_as_dataclasses_does():
    ref_cls, rec_cls = _twins("one", False)
    ref, rec = ref_cls(0.0), rec_cls(0.0)
    ref.a, rec.a = [ref], [rec]
    assert repr(rec) == repr(ref) == "C(a=[...])"


def _base_and_sub():
    """A frozen record and a frozen record subclass adding a defaulted field."""
    @record(frozen=True)
    class Base:
        a: int

    @record(frozen=True)
    class Sub(Base):
        b: int = 0

    return Base, Sub


def test_subclass_records_compare_their_own_fields():
    Base, Sub = _base_and_sub()
    assert repr(Sub(1, 2)) == "_base_and_sub.<locals>.Sub(a=1, b=2)"
    assert Sub(1, 2) != Sub(1, 3) and Sub(1, 2) == Sub(1, 2) and Base(1) != Sub(1, 0)
    assert hash(Sub(1, 2)) == hash((1, 2))


def _call(cls, args, kwargs):
    """(vars in order, or the error's type) of cls(*args, **kwargs)."""
    try:
        obj = cls(*args, **kwargs)
    except TypeError:
        return "TypeError"
    return list(vars(obj).items())


@pytest.mark.parametrize("frozen", [True, False])
def test_record_init_takes_what_the_generated_init_takes(frozen):
    """Positional and keyword arguments, defaults, a fresh default_factory value per
    instance, and a TypeError for a missing, unknown, doubled or extra argument; the fields
    set in field order."""
    ref_cls, rec_cls = _twins("options", frozen)
    calls = [((1,), {}), ((1, 2), {"h": 5}), ((), {"a": 3, "items": [1]}), ((1, 2, 3, 4, [5]), {}),
             ((), {}), ((1,), {"a": 2}), ((1,), {"nope": 1}), ((1, 2, 3, 4, [], 6), {}),
             ((), {"loose": 1})]
    for args, kwargs in calls:
        assert _call(rec_cls, args, kwargs) == _call(ref_cls, args, kwargs), (args, kwargs)
    assert rec_cls(1).items is not rec_cls(1).items


def test_frozen_records_refuse_assignment_and_deletion_as_dataclasses_do():
    ref_cls, rec_cls = _twins("plain", True)
    for obj in (ref_cls(1), rec_cls(1)):
        obj.__dict__["scratch"] = 0
    messages = []
    for obj in (ref_cls(1), rec_cls(1)):
        got = []
        for act, args in ((setattr, ("a", 2)), (delattr, ("b",)), (setattr, ("other", 1))):
            with pytest.raises(dataclasses.FrozenInstanceError) as exc:
                act(obj, *args)
            got.append(str(exc.value))
        messages.append(got)
    assert messages[0] == messages[1] == ["cannot assign to field 'a'", "cannot delete field 'b'",
                                          "cannot assign to field 'other'"]


def test_a_record_with_a_post_init_keeps_dataclasses_own_init():
    @record(frozen=True)
    class Checked:
        a: int

        def __post_init__(self):
            if self.a < 0:
                raise ValueError("negative")

    assert Checked(1).a == 1 and Checked(1) == Checked(1)
    with pytest.raises(ValueError):
        Checked(-1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Checked(1).a = 2


def test_a_frozen_record_cannot_extend_a_mutable_one():
    @record
    class Base:
        a: int

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        @record(frozen=True)
        class Sub(Base):
            b: int = 0


@pytest.mark.parametrize("frozen", [True, False])
def test_records_replace_answers_as_dataclasses_replace(frozen):
    """kvfit.records.replace copies a record's fields without dataclasses' walk: the same
    fields in the same order, the changes applied, a default factory's value kept (not made
    anew), an attribute that is not a field left behind, and a TypeError for a name that is
    not a field. A class that is not such a record goes to dataclasses.replace."""
    from kvfit.records import replace

    ref_cls, rec_cls = _twins("options", frozen)
    assert not hasattr(ref_cls, "_record_names") and rec_cls._record_names[0] == "a"
    ref, rec = ref_cls(1, 2, h=4, items=[7]), rec_cls(1, 2, h=4, items=[7])
    for obj in (ref, rec):
        obj.__dict__["scratch"] = "not a field"
    for changes in ({}, {"a": 9}, {"loose": 5, "items": []}):
        want, got = dataclasses.replace(ref, **changes), replace(rec, **changes)
        assert type(got) is rec_cls and list(vars(got).items()) == list(vars(want).items())
        assert (got.items is rec.items) == (want.items is ref.items)
    for obj, how in ((ref, dataclasses.replace), (rec, replace)):
        with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
            how(obj, nope=1)
    assert replace(ref, a=3) == ref_cls(3, 2, h=4, items=[7])     # a plain dataclass: its own
    if frozen:
        with pytest.raises(dataclasses.FrozenInstanceError):
            replace(rec).a = 0


def test_records_replace_of_a_subclass_record_and_of_a_plain_subclass():
    from kvfit.records import replace

    Base, Sub = _base_and_sub()

    class Loose(Base):          # not a record: dataclasses.replace builds it
        pass

    assert replace(Sub(1, 2), b=3) == Sub(1, 3) and type(replace(Sub(1), a=2)) is Sub
    loose = replace(Loose(1), a=2)
    assert type(loose) is Loose and loose.a == 2
