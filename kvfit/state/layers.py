"""Evaluate a spec's named layer sets against resolved fields, and check the partition."""

from __future__ import annotations

from ..errors import ConfigError, UnsupportedArchitecture
from ..expr import ExprError
from ..specs.architecture import Architecture, Selector

MAX_LAYERS = 10_000


def _entry(value, key: str | None):
    for part in (key.split(".") if key else ()):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _per_layer(sel: Selector, values: dict, n: int, arch: Architecture):
    seq = values.get(sel.field)
    if not seq:                      # absent, or an empty list ("none declared")
        return None
    if len(seq) != n:
        raise ConfigError(f"'{_keys(arch, sel.field)}' has {len(seq)} entries but the model has "
                          f"{n} layers.", fields=(_keys(arch, sel.field),))
    return [_entry(v, sel.key) for v in seq]


def _keys(arch: Architecture, field: str) -> str:
    return "/".join(arch.fields[field].keys) or field


def _where(expr, values: dict, n: int, arch: Architecture) -> set[int]:
    names = dict(values)      # one copy; only "i" changes from layer to layer
    if "i" not in expr.names:     # a rule that does not read i has one answer for every layer
        return set(range(n)) if n and _holds(expr, names, 0, arch) else set()
    return {i for i in range(n) if _holds(expr, names, i, arch)}


def _holds(expr, names: dict, i: int, arch: Architecture) -> bool:
    names["i"] = i
    try:
        return bool(expr.evaluate(names))
    except ExprError as exc:
        raise ConfigError(f"spec '{arch.id}': layer rule '{expr.text}' failed at layer {i}: "
                          f"{exc.message}.") from None


def _select(name: str, sel: Selector, values: dict, n: int, arch, done: dict) -> set[int]:
    if sel.mode == "all":
        return set(range(n))
    if sel.mode == "where":
        return _where(sel.expr, values, n, arch)
    if sel.mode == "except":
        taken = set().union(*(done[x] for x in sel.names))
        return set(range(n)) - taken
    if sel.mode == "indices":
        nums = values.get(sel.field) or []
        bad = [x for x in nums if not isinstance(x, int) or not 0 <= x - sel.base < n]
        if bad:
            span = f"1..{n}" if sel.base else f"0..{n - 1}"
            raise ConfigError(f"'{_keys(arch, sel.field)}' lists layer numbers {bad[:5]} outside "
                              f"{span}.", fields=(_keys(arch, sel.field),))
        return {x - sel.base for x in nums}
    entries = _per_layer(sel, values, n, arch)
    if entries is None:
        return _where(sel.fallback, values, n, arch) if sel.fallback else set()
    return {i for i, v in enumerate(entries) if v in sel.values}


def evaluate_layers(arch: Architecture, values: dict) -> tuple[int, dict[str, list[int]]]:
    """(layer count, {set name: sorted layer indexes}); raises when the partition fails."""
    try:
        n = arch.layer_count.evaluate(values)
    except ExprError as exc:
        raise ConfigError(f"spec '{arch.id}': layer count '{arch.layer_count.text}' cannot be "
                          f"computed: {exc.message}.") from None
    if not isinstance(n, int) or not 0 < n <= MAX_LAYERS:
        raise ConfigError(f"layer count {n!r} is not a whole number from 1 to {MAX_LAYERS}.")
    done: dict[str, set[int]] = {}
    pending = dict(arch.layers)
    while pending:
        ready = [k for k, sel in pending.items() if all(x in done for x in sel.names)]
        if not ready:
            raise ConfigError(f"spec '{arch.id}': layer sets {sorted(pending)} refer to each "
                              "other in a cycle.")
        for name in ready:
            done[name] = _select(name, pending.pop(name), values, n, arch, done)
    _check_partition(arch, values, n, done)
    return n, {k: sorted(v) for k, v in done.items()}


def _check_partition(arch: Architecture, values: dict, n: int, done: dict) -> None:
    for i in range(n):
        owners = [p for p in arch.partition if i in done[p]]
        if len(owners) == 1:
            continue
        facts = [f"{_keys(arch, s.field)}[{i}]{'.' + s.key if s.key else ''} = "
                 f"{_describe(values.get(s.field), i, s.key)}"
                 for s in _feeding(arch) if s.field and s.mode in ("list", "chars")
                 and values.get(s.field) is not None]
        detail = f" ({'; '.join(sorted(set(facts)))})" if facts else ""
        what = ("matches none of" if not owners else
                f"matches more than one ({', '.join(owners)}) of")
        raise UnsupportedArchitecture(
            f"layer {i}{detail} {what} the layer kinds of spec '{arch.id}' "
            f"({', '.join(arch.partition)}); the declarations conflict or name a kind the spec "
            "does not model, and kvfit will not guess its state.",
            fields=tuple(sorted({_keys(arch, s.field) for s in arch.layers.values() if s.field})))


def _feeding(arch: Architecture) -> list:
    """The selectors the partition is built from (directly or through `except`), so a
    refusal names only the facts that decide a layer's kind (not, say, weight-only sets)."""
    seen, todo = set(), list(arch.partition)
    while todo:
        name = todo.pop()
        if name not in seen and name in arch.layers:
            seen.add(name)
            todo.extend(arch.layers[name].names)
    return [arch.layers[n] for n in sorted(seen)]


def _describe(seq, i: int, key: str | None):
    try:
        return repr(_entry(seq[i], key))
    except (IndexError, TypeError):
        return "?"
