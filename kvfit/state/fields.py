"""Resolve a spec's canonical fields from a config, recording where each value came from."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..dtypes import WIDTHS, normalize
from ..errors import ConfigError, KvfitError, UnsupportedArchitecture
from ..expr import ExprError
from ..specs.architecture import Architecture, Field

_MISSING = object()
_NULL = object()


@dataclass(frozen=True, slots=True)
class Resolved:
    """A field value with its provenance, e.g. 'config: num_key_value_heads'."""

    name: str
    value: object
    provenance: str


def lookup(root: dict, dotted: str):
    """The value at a dotted key path; _MISSING when absent, _NULL when explicitly null."""
    node = root
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return _NULL if node is None else node


def value_at(root: dict, dotted: str):
    """The value at a dotted key path, or None when it is absent or explicitly null."""
    found = lookup(root, dotted)
    return None if found is _MISSING or found is _NULL else found


def _coerce(f: Field, key: str, value):
    if f.type == "string" and isinstance(value, bool):
        # a key some configs write as a boolean and others as a word (Laguna's gating: true or
        # "per-head") reads as the boolean's JSON spelling, so an enum can name both
        value = "true" if value else "false"
    ok = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool) or (
              isinstance(v, float) and v.is_integer()),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "bool": lambda v: isinstance(v, bool), "list": lambda v: isinstance(v, list),
          "string": lambda v: isinstance(v, str),
          "dtype": lambda v: isinstance(v, str) and normalize(v) is not None}[f.type]
    if not ok(value):
        raise ConfigError(f"config key '{key}' should be {f.type} (read as field '{f.name}'), "
                          f"got {str(value)[:60]!r}.", fields=(key,))
    value = int(value) if f.type == "int" else value
    if f.type == "dtype":
        return WIDTHS[normalize(value)]
    if f.enum and value not in f.enum:
        raise UnsupportedArchitecture(
            f"config key '{key}' = {value!r} is not one the spec models (it accepts "
            f"{', '.join(f.enum)}).", fields=(key,))
    if f.min is not None and value < f.min:
        raise ConfigError(f"config key '{key}' = {value} is below the minimum {f.min:g} for "
                          f"'{f.name}'.", fields=(key,))
    if f.type == "list" and len(value) > 100_000:
        raise ConfigError(f"config key '{key}' is an absurdly long list.", fields=(key,))
    return value


def _from_config(f: Field, root: dict, prefix: str) -> Resolved | None:
    """The field from the first present key; None when absent (or null without null_value)."""
    found = [(k, lookup(root, k)) for k in f.keys]
    nulls = [k for k, v in found if v is _NULL]
    found = [(k, v) for k, v in found if v is not _MISSING and v is not _NULL]
    if not found and nulls and f.null_value is not None and not hasattr(f.null_value, "evaluate"):
        return Resolved(f.name, f.null_value, f"config: {prefix}{nulls[0]} = null -> {f.null_value}")
    if not found:
        return None
    key, value = found[0]
    for other, v in found[1:]:
        if v != value:
            raise ConfigError(f"config keys '{prefix}{key}' ({value!r}) and '{prefix}{other}' "
                              f"({v!r}) both set field '{f.name}' and disagree.",
                              fields=(prefix + key, prefix + other))
    return Resolved(f.name, _coerce(f, prefix + key, value), f"config: {prefix}{key}")


def _derived_min(f: Field, value, text: str) -> None:
    """`min:` holds for a value derived from other fields too (a head_dim of hidden // heads
    that comes out 0 would count no state)."""
    if f.min is not None and isinstance(value, (int, float, Fraction)) and value < f.min:
        raise ConfigError(f"'{f.name}' = {text} = {value} is below the minimum {f.min:g}: the "
                          "config's values for it do not make sense together.",
                          fields=(f.name,))


def _from_default(f: Field, values: dict, root: dict, prefix: str) -> Resolved:
    nulls = [k for k in f.keys if lookup(root, k) is _NULL]
    if nulls and hasattr(f.null_value, "evaluate"):
        try:
            value = f.null_value.evaluate(values)
        except ExprError as exc:
            raise ConfigError(f"'{f.name}' for an explicit null ({f.null_value.text}) cannot be "
                              f"computed: {exc.message}.", fields=(f.name,)) from None
        _derived_min(f, value, f.null_value.text)
        return Resolved(f.name, value, f"config: {prefix}{nulls[0]} = null -> {f.null_value.text}")
    if f.type == "dtype" and isinstance(f.default, (int, float)) and not isinstance(f.default, bool):
        why = f" ({f.default_source})" if f.default_source else ""
        return Resolved(f.name, Fraction(f.default), f"class default: {f.default} B{why}")
    if hasattr(f.default, "evaluate"):
        try:
            value = f.default.evaluate(values)
        except ExprError as exc:
            raise ConfigError(f"default for '{f.name}' ({f.default.text}) cannot be computed: "
                              f"{exc.message}.", fields=(f.name,)) from None
        if f.type == "int" and hasattr(value, "denominator"):
            value = int(value) if value == int(value) else value
        _derived_min(f, value, f.default.text)
        return Resolved(f.name, value, f"default: {f.default.text}")
    why = f" ({f.default_source})" if f.default_source else ""
    return Resolved(f.name, f.default, f"class default{why}")


def resolve_fields(arch: Architecture, root: dict, prefix: str = "", fields: dict | None = None,
                   known: dict[str, Resolved] | None = None) -> dict[str, Resolved]:
    """Resolve every field (of the spec, or the given `fields` with `known` ones available to
    their defaults); expression defaults are computed after the fields they use."""
    out: dict[str, Resolved] = {}
    fields = arch.fields if fields is None else fields
    known = known or {}
    pending = dict(fields)
    for name, f in list(pending.items()):
        r = _from_config(f, root, prefix)
        if r is not None:
            out[name] = r
            del pending[name]
    while pending:
        progressed = False
        for name, f in list(pending.items()):
            deps = set(getattr(f.default, "names", ())) | set(getattr(f.null_value, "names", ()))
            if f.default is None and f.null_value is None and not f.optional:
                keys = ", ".join(prefix + k for k in f.keys)
                raise ConfigError(f"the config lacks {keys}, which spec '{arch.id}' needs for "
                                  f"'{name}'.", fields=tuple(prefix + k for k in f.keys))
            if all(d in out for d in deps if d in fields):
                values = {k: r.value for k, r in (known | out).items()}
                out[name] = (_from_default(f, values, root, prefix)
                             if f.default is not None or f.null_value is not None
                             else Resolved(name, None, "absent"))
                del pending[name]
                progressed = True
        if not progressed:
            raise KvfitError(f"spec '{arch.id}': field defaults depend on each other in a "
                             f"cycle ({', '.join(sorted(pending))}).")
    return out
