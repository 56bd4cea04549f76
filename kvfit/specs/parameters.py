"""Compile an architecture spec's optional `parameters:` block: the checkpoint's tensors as
config expressions, used for a labelled weight estimate when no checkpoint bytes are known."""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import Expr


@dataclass(frozen=True)
class Tensor:
    """One checkpoint tensor (or a linear layer's weight), repeated over layers and experts.

    shape: [out, in] of a quantizable linear weight; count: elements kept at the model dtype.
    split: 'tp', 'vocab', 'none' or 'heads' (then `heads` gives the head count).
    """

    module: str
    shape: tuple[Expr, Expr] | None
    count: Expr | None
    layers: str | None
    extra_layers: Expr | None
    experts: Expr | None
    when: Expr | None
    split: str
    heads: Expr | None
    element_bytes: Expr | None


@dataclass(frozen=True)
class Parameters:
    """Estimate-only fields (resolved lazily), the tensors, and the sources of their shapes."""

    fields: dict
    tensors: tuple[Tensor, ...]
    sources: tuple[str, ...]
    requires: tuple[tuple[Expr, str], ...] = ()


def _tensor(c, i: int, raw: dict, sets: set[str]) -> Tensor | None:
    path = ("parameters", "tensors", i)
    opt = {k: c.expr(path + (k,)) if k in raw else None
           for k in ("count", "extra_layers", "experts", "when", "element_bytes")}
    shape = tuple(c.expr(path + ("shape", j)) for j in range(2)) if "shape" in raw else None
    split, heads = raw.get("split", "tp" if shape else "none"), None
    if isinstance(split, dict):
        split, heads = "heads", c.expr(path + ("split", "heads"))
    layers = raw.get("layers")
    if layers is not None and layers != "*" and layers not in sets:
        c.problems.append(c.doc.problem("KV124", path + ("layers",), f"unknown layer set "
                                        f"'{layers}'", f"defined sets: {', '.join(sorted(sets))}"))
    if layers is not None and opt["extra_layers"] is not None:
        c.problems.append(c.doc.problem("KV127", path, "a tensor gives both `layers` and "
                                        "`extra_layers`; use one"))
    return Tensor(raw["module"], shape, opt["count"], layers, opt["extra_layers"],
                  opt["experts"], opt["when"], split, heads, opt["element_bytes"])


def compile_parameters(c, raw: dict | None, sets: set[str]) -> Parameters | None:
    """The compiled block, or None when the spec has none (problems go to the compiler)."""
    if raw is None:
        return None
    extra = raw.get("fields", {})
    clash = sorted(set(extra) & set(c.fields))
    if clash:
        c.problems.append(c.doc.problem("KV128", ("parameters", "fields"), f"parameter "
                                        f"field(s) {', '.join(clash)} repeat top-level fields"))
    saved, c.names = c.names, c.names | set(extra)
    try:
        fields = {n: c.field(n, f, ("parameters", "fields")) for n, f in extra.items()}
        tensors = tuple(_tensor(c, i, t, sets) for i, t in enumerate(raw["tensors"]))
        requires = tuple((c.expr(("parameters", "requires", i, "check")), r["message"])
                         for i, r in enumerate(raw.get("requires", ())))
    finally:
        c.names = saved
    return Parameters(fields, tensors, tuple(raw["sources"]), requires)
