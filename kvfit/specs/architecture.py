"""Compile a loaded architecture spec into frozen objects, collecting every problem.

The YAML says *what* a family keeps (fields, layer sets, components); the meaning of each
retention kind lives in kvfit.state.kinds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..expr import Expr, ExprError, compile_expr, non_number
from .loader import Doc

if TYPE_CHECKING:
    from ..errors import Problem
    from .experts import Experts
    from .parameters import Parameters


def __getattr__(name: str):
    """Experts (kvfit.specs.experts) loads when a spec has an `experts:` block."""
    if name == "Experts":
        from .experts import Experts
        return Experts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

INJECTED = frozenset({"kv_bytes", "index_bytes", "model_bytes", "mtp"})
TOKEN_KINDS = frozenset({"full", "sliding", "chunked", "latent", "index", "compressed", "draft"})
SELECTOR_KEYS = ("all", "where", "list", "chars", "indices", "except")


@dataclass(frozen=True, slots=True)
class Field:
    """A canonical field: config keys to read, type, and default (expression or literal)."""

    name: str
    keys: tuple[str, ...]
    type: str
    default: object            # None, a literal, or an Expr
    default_source: str | None
    optional: bool
    min: float | None
    null_value: object = None  # None, a literal, or an Expr (explicit null in the config)
    enum: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Selector:
    """A layer set definition (exactly one mode)."""

    mode: str
    expr: Expr | None = None
    field: str | None = None
    key: str | None = None
    values: tuple = ()
    fallback: Expr | None = None
    base: int = 0
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Component:
    """One kind of retained state over a layer set."""

    name: str
    summary: str
    kind: str
    layers: str
    bytes: Expr
    shard_heads: Expr | None
    window: Expr | None = None
    ratio: Expr | None = None
    when: Expr | None = None
    layouts: tuple[tuple[str, str, Expr], ...] = ()
    extra_layers: Expr | None = None
    # layout name -> (kind, shard heads) where that engine storage differs from the logical one
    layout_shards: tuple[tuple[str, str | None, Expr | None], ...] = ()
    # layout name -> (ring window, engine block tokens, page alignment), each Expr or None:
    # an engine that keeps this state with its own per-layer blocks and page padding
    layout_paging: tuple[tuple[str, Expr | None, Expr | None, Expr | None], ...] = ()


@dataclass(frozen=True, slots=True)
class Architecture:
    """A compiled architecture spec."""

    id: str
    file: str
    summary: str
    model_types: tuple[str, ...]
    architectures: tuple[str, ...]
    text_model_types: tuple[str, ...]
    config_root: str | None
    fields: dict[str, Field]
    requires: tuple[tuple[Expr, str], ...]
    layer_count: Expr
    layers: dict[str, Selector]
    partition: tuple[str, ...]
    components: tuple[Component, ...]
    tp_divides: tuple[Expr, ...]
    ignores: dict[str, str]
    sources: tuple[str, ...]
    experts: Experts | None = None
    # Parameters, None, or a _Deferred compile (see `parameters`)
    compiled_parameters: object = field(default=None, repr=False, compare=False)
    index_fp4: tuple[str, str] | None = None   # (format, source) that `--index-dtype fp4` means

    @property
    def parameters(self) -> Parameters | None:
        """The spec's `parameters:` block, compiled (None when it has none). A plan's spec,
        read from the validated cache, compiles it when first asked: a plan that knows its
        weight bytes never needs the config-shape estimate it is for."""
        value = self.compiled_parameters
        if isinstance(value, _Deferred):
            value = value()
            object.__setattr__(self, "compiled_parameters", value)   # compiled once
        return value

    def geometry_fields(self) -> frozenset[str]:
        """The fields the state's size depends on: those the layer count and the components'
        bytes and head shards read, and the fields their defaults read in turn."""
        exprs = [self.layer_count] + [e for c in self.components for e in (c.bytes, c.shard_heads)]
        todo = {n for e in exprs if e is not None for n in e.names}
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            f = self.fields.get(name)
            if f is None or name in seen:
                continue
            seen.add(name)
            if hasattr(f.default, "names"):
                todo |= set(f.default.names)
        return frozenset(seen)

    def class_default_warnings(self, fields: dict) -> list[str]:
        """A warning naming the geometry fields (whole numbers) a config left to its class's
        defaults, given the resolved fields (kvfit.state.fields.Resolved by name)."""
        geometry = self.geometry_fields()
        defaulted = [f"{n} = {r.value:,}" for n, r in fields.items() if n in geometry and r.value
                     and self.fields[n].type == "int" and r.provenance.startswith("class default")]
        return [f"The config omits {', '.join(defaulted)}: taken from the config class's "
                "defaults (architecture.fields names each source)."] if defaulted else []

    def read_keys(self) -> set[str]:
        """Every config key (first path segment) the spec reads or knowingly ignores."""
        keys = {k.split(".")[0] for f in self.fields.values() for k in f.keys}
        return keys | set(self.ignores)


class _Deferred:
    """The `parameters:` block of validated (cached) spec data, compiled when first read."""

    def __init__(self, doc: Doc, sets: set[str]):
        self.doc, self.sets = doc, sets

    def __call__(self) -> Parameters:
        from .parameters import compile_parameters

        c = _Compiler(self.doc)
        params = compile_parameters(c, self.doc.data["parameters"], self.sets)
        if c.problems:             # cached data passed this compile when it was validated
            from ..errors import SpecError
            raise SpecError(c.problems)
        return params


class _Compiler:
    def __init__(self, doc: Doc):
        self.doc, self.problems = doc, []
        self.fields = doc.data.get("fields", {}) if isinstance(doc.data, dict) else {}
        self.names = set(self.fields) | INJECTED
        self.texts = frozenset(n for n, f in self.fields.items()
                               if isinstance(f, dict) and f.get("type") in ("string", "list"))

    def expr(self, path: tuple, extra=frozenset(), number: bool = True) -> Expr | None:
        """The expression at `path`, compiled; with `number`, one that can yield a string
        or list field is a problem too (found when the spec loads, not when a plan runs)."""
        node = self.doc.data
        for key in path:
            node = node[key]
        try:
            expr = compile_expr(node, self.names | set(extra))
            found = non_number(expr, self.texts) if number else None
            if found:
                raise ExprError(f"the expression can yield '{found[0]}', a "
                                f"{self.fields[found[0]].get('type')} field, where a number "
                                "is needed", col=found[1], width=len(found[0]))
            return expr
        except ExprError as exc:
            where = " > ".join(map(str, path))
            self.problems.append(self.doc.problem(
                "KV201", path, exc.message, exc.help, at=f"architecture > {where}",
                col_offset=exc.col, width=exc.width))
            return None

    def field(self, name, raw, base: tuple = ("fields",)) -> Field:
        default = raw.get("default")
        text = raw.get("type") in ("string", "list")
        if isinstance(default, str):
            default = self.expr((*base, name, "default"), number=not text)
        if "from" not in raw and "default" not in raw:
            self.problems.append(self.doc.problem("KV120", (*base, name), f"field '{name}' "
                                 "has neither `from` nor `default`", "add `from: [config_key]`"))
        null_value = raw.get("null_value")
        if isinstance(null_value, str):
            null_value = self.expr((*base, name, "null_value"), number=not text)
        return Field(name, tuple(raw.get("from", ())), raw.get("type", "int"), default,
                     raw.get("default_source"), bool(raw.get("optional")), raw.get("min"),
                     null_value, tuple(raw.get("enum", ())))

    def selector(self, name, raw) -> Selector | None:
        modes = [k for k in SELECTOR_KEYS if k in raw]
        path = ("layers", name)
        if len(modes) != 1:
            self.problems.append(self.doc.problem("KV121", path, f"layer set '{name}' needs "
                                 f"exactly one of {', '.join(SELECTOR_KEYS)} (has {modes})"))
            return None
        mode = modes[0]
        if mode == "where":
            return Selector(mode, expr=self.expr(path + ("where",), {"i"}))
        if mode == "all":
            return Selector(mode)
        if mode == "except":
            return Selector(mode, names=tuple(raw["except"]))
        field = raw[mode]
        want = "string" if mode == "chars" else "list"
        if self.fields.get(field, {}).get("type") != want:
            self.problems.append(self.doc.problem("KV122", path + (mode,), f"'{field}' must "
                                 f"be a field of type {want}", f"declare `{field}: {{from: [...], "
                                 f"type: {want}, optional: true}}` under fields"))
        fallback = self.expr(path + ("fallback_where",), {"i"}) if "fallback_where" in raw else None
        if mode != "indices" and "in" not in raw:
            self.problems.append(self.doc.problem("KV121", path, f"layer set '{name}' with "
                                 f"`{mode}` needs `in: [values]`"))
        return Selector(mode, field=field, key=raw.get("key"), values=tuple(raw.get("in", ())),
                        fallback=fallback, base=raw.get("base", 0))

    def component(self, idx, raw) -> Component | None:
        path = ("components", idx)
        kind = raw["kind"]
        key = "bytes_per_token_per_layer" if kind in TOKEN_KINDS else "bytes_per_sequence_per_layer"
        need = [] if kind == "none" else [key]
        need += (["window"] if kind in ("sliding", "chunked", "draft") else []) + (
            ["ratio"] if kind == "compressed" else [])
        for k in need:
            if k not in raw:
                self.problems.append(self.doc.problem("KV123", path, f"component "
                                     f"'{raw['name']}' of kind {kind} needs `{k}`"))
        if any(k not in raw for k in need):
            return None
        raw_layouts = raw.get("layouts", {})
        keys = {n: _bytes_key(v.get("kind", kind)) for n, v in raw_layouts.items()}
        layouts = tuple((n, v["summary"], self.expr(path + ("layouts", n, keys[n])))
                        for n, v in raw_layouts.items() if keys[n] in v)
        for n, v in raw_layouts.items():
            if v.get("kind") == "sliding" and "window" not in v:
                self.problems.append(self.doc.problem("KV123", path + ("layouts", n), f"layout "
                                     f"'{n}' of kind sliding needs `window`"))
        paging = tuple((n, *(self.expr(path + ("layouts", n, k)) if k in v else None
                             for k in _PAGING)) for n, v in raw_layouts.items()
                       if any(k in v for k in _PAGING))
        shards = tuple((n, v.get("kind"), self.expr(path + ("layouts", n, "shard", "heads"))
                        if "shard" in v else None)
                       for n, v in raw.get("layouts", {}).items() if "kind" in v or "shard" in v)
        opt = {k: self.expr(path + (k,)) for k in ("window", "ratio", "when", "extra_layers")
               if k in raw}
        heads = self.expr(path + ("shard", "heads")) if "heads" in raw["shard"] else None
        bytes_ = compile_expr(0, set()) if kind == "none" else self.expr(path + (key,))
        return Component(raw["name"], raw.get("summary", ""), kind, raw.get("layers", ""),
                         bytes_, heads, layouts=layouts, layout_shards=shards,
                         layout_paging=paging, **opt)


_PAGING = ("window", "block_tokens", "page_alignment")


def _bytes_key(kind: str) -> str:
    return "bytes_per_token_per_layer" if kind in TOKEN_KINDS else "bytes_per_sequence_per_layer"


def _experts(c: _Compiler, raw: dict | None) -> Experts | None:
    """The optional `experts:` block: a regex with an `expert` group, and a count expression."""
    if raw is None:
        return None
    try:
        pattern = re.compile(raw["routed_tensors"])
    except re.error as exc:
        c.problems.append(c.doc.problem("KV126", ("experts", "routed_tensors"),
                                        f"not a valid regular expression: {exc}"))
        return None
    if "expert" not in pattern.groupindex:
        c.problems.append(c.doc.problem("KV126", ("experts", "routed_tensors"), "the pattern "
                                        "needs a named group `expert` capturing the expert index",
                                        r"write `(?P<expert>\d+)` where the index appears"))
        return None
    count = c.expr(("experts", "count"))
    from .experts import Experts

    return None if count is None else Experts(pattern, count)


def compile_architecture(doc: Doc, defer_parameters: bool = False
                         ) -> tuple[Architecture | None, list[Problem]]:
    """Compile a schema-valid document; returns (architecture or None, problems).

    defer_parameters: for data from the validated cache (doc.tree is None: every check,
    the parameters' compile included, passed when it was stored), compile the `parameters:`
    block when Architecture.parameters is first read."""
    c, d = _Compiler(doc), doc.data
    fields = {n: c.field(n, raw) for n, raw in d["fields"].items()}
    layers = {n: c.selector(n, raw) for n, raw in d["layers"].items()}
    comps = [c.component(i, raw) for i, raw in enumerate(d["components"])]
    names = set(layers)
    refs = [(("partition", i), n) for i, n in enumerate(d["partition"])]
    refs += [(("components", i, "layers"), raw["layers"]) for i, raw in enumerate(d["components"])
             if "layers" in raw]
    refs += [(("layers", n, "except"), x) for n, raw in d["layers"].items() for x in raw.get("except", ())]
    for path, ref in refs:
        if ref not in names:
            c.problems.append(doc.problem("KV124", path, f"unknown layer set '{ref}'",
                                          f"defined sets: {', '.join(sorted(names))}"))
    requires = tuple((c.expr(("requires", i, "check")), r["message"])
                     for i, r in enumerate(d.get("requires", ())))
    count = c.expr(("layer_count",))
    divides = tuple(c.expr(("tensor_parallel", "divides", i))
                    for i, _ in enumerate(d.get("tensor_parallel", {}).get("divides", ())))
    experts = _experts(c, d.get("experts"))
    if d.get("parameters") is None:
        params = None
    elif defer_parameters and doc.tree is None:
        params = _Deferred(doc, set(layers))
    else:
        from .parameters import compile_parameters
        params = compile_parameters(c, d["parameters"], set(layers))
    if "max_context" not in fields:
        c.problems.append(doc.problem("KV125", ("fields",), "every architecture needs a "
                          "`max_context` field (the declared maximum context)",
                          "add `max_context: {from: [max_position_embeddings]}`", key=True))
    if c.problems:
        return None, c.problems
    m = d["match"]
    return Architecture(
        d["id"], doc.file, d["summary"], tuple(m["model_type"]), tuple(m.get("architectures", ())),
        tuple(m.get("text_model_type", ())), m.get("config_root"), fields, requires, count,
        layers, tuple(d["partition"]), tuple(comps), divides, dict(d.get("ignores", {})),
        tuple(d["sources"]), experts, params, _index_fp4(d.get("index_fp4"))), []


def _index_fp4(raw: dict | None) -> tuple[str, str] | None:
    return None if raw is None else (raw["format"], raw["source"])
