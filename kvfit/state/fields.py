"""Resolve a spec's canonical fields from a config, recording where each value came from."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError, KvfitError
from ..expr import ExprError
from ..specs.architecture import Architecture, Field

_MISSING = object()


@dataclass(frozen=True)
class Resolved:
    """A field value with its provenance, e.g. 'config: num_key_value_heads'."""

    name: str
    value: object
    provenance: str


def lookup(root: dict, dotted: str):
    """The value at a dotted key path, or _MISSING (null counts as missing)."""
    node = root
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return _MISSING if node is None else node


def _coerce(f: Field, key: str, value):
    ok = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool) or (
              isinstance(v, float) and v.is_integer()),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "bool": lambda v: isinstance(v, bool), "list": lambda v: isinstance(v, list),
          "string": lambda v: isinstance(v, str)}[f.type]
    if not ok(value):
        raise ConfigError(f"config key '{key}' should be {f.type} (read as field '{f.name}'), "
                          f"got {str(value)[:60]!r}.", fields=(key,))
    value = int(value) if f.type == "int" else value
    if f.min is not None and value < f.min:
        raise ConfigError(f"config key '{key}' = {value} is below the minimum {f.min:g} for "
                          f"'{f.name}'.", fields=(key,))
    if f.type == "list" and len(value) > 100_000:
        raise ConfigError(f"config key '{key}' is an absurdly long list.", fields=(key,))
    return value


def _from_config(f: Field, root: dict, prefix: str) -> Resolved | None:
    found = [(k, lookup(root, k)) for k in f.keys]
    found = [(k, v) for k, v in found if v is not _MISSING]
    if not found:
        return None
    key, value = found[0]
    for other, v in found[1:]:
        if v != value:
            raise ConfigError(f"config keys '{prefix}{key}' ({value!r}) and '{prefix}{other}' "
                              f"({v!r}) both set field '{f.name}' and disagree.",
                              fields=(prefix + key, prefix + other))
    return Resolved(f.name, _coerce(f, prefix + key, value), f"config: {prefix}{key}")


def _from_default(f: Field, values: dict) -> Resolved:
    if hasattr(f.default, "evaluate"):
        try:
            value = f.default.evaluate(values)
        except ExprError as exc:
            raise ConfigError(f"default for '{f.name}' ({f.default.text}) cannot be computed: "
                              f"{exc.message}.", fields=(f.name,)) from None
        if f.type == "int" and hasattr(value, "denominator"):
            value = int(value) if value == int(value) else value
        return Resolved(f.name, value, f"default: {f.default.text}")
    why = f" ({f.default_source})" if f.default_source else ""
    return Resolved(f.name, f.default, f"class default{why}")


def resolve_fields(arch: Architecture, root: dict, prefix: str = "") -> dict[str, Resolved]:
    """Resolve every field; expression defaults are computed after the fields they use."""
    out: dict[str, Resolved] = {}
    pending = dict(arch.fields)
    for name, f in list(pending.items()):
        r = _from_config(f, root, prefix)
        if r is not None:
            out[name] = r
            del pending[name]
    while pending:
        progressed = False
        for name, f in list(pending.items()):
            deps = f.default.names if hasattr(f.default, "names") else frozenset()
            if f.default is None and not f.optional:
                keys = ", ".join(prefix + k for k in f.keys)
                raise ConfigError(f"the config lacks {keys}, which spec '{arch.id}' needs for "
                                  f"'{name}'.", fields=tuple(prefix + k for k in f.keys))
            if all(d in out for d in deps if d in arch.fields):
                out[name] = (_from_default(f, {k: r.value for k, r in out.items()})
                             if f.default is not None else Resolved(name, None, "absent"))
                del pending[name]
                progressed = True
        if not progressed:
            raise KvfitError(f"spec '{arch.id}': field defaults depend on each other in a "
                             f"cycle ({', '.join(sorted(pending))}).")
    return out
