"""Compile an architecture spec's optional `parameters:` block: the checkpoint's tensors as
config expressions, used for a labelled weight estimate when no checkpoint bytes are known."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..expr import Expr


@dataclass(frozen=True, slots=True)
class Tensor:
    """One checkpoint tensor (or a linear layer's weight), repeated over layers and experts.

    shape: [out, in] of a quantizable linear weight; count: elements kept at the model dtype.
    split: 'tp', 'vocab', 'none' or 'heads' (then `heads` gives the head count).
    repeat: copies outside the decoder schedule and the experts (a vision tower's blocks,
    index `{r}`).
    routed: a routed-expert tensor (spread over the EP ranks by expert-parallel placements);
    the spec's `routed`, by default whether the row has `experts`.
    replicated: why the engines hold this tensor whole on every rank at any TP (the spec's
    `replicated`), or None: the row counts in the checkpoint share divided over TP.
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
    repeat: Expr | None = None
    # declared format -> the format this checkpoint family really stores it in
    formats: tuple[tuple[str, str], ...] = ()
    routed: bool = False
    replicated: str | None = None


@dataclass(frozen=True, slots=True)
class Parameters:
    """Estimate-only fields (resolved lazily), the tensors, and the sources of their shapes."""

    fields: dict
    tensors: tuple[Tensor, ...]
    sources: tuple[str, ...]
    requires: tuple[tuple[Expr, str], ...] = ()
    # fields read from the top of the config, outside the spec's config_root (a multimodal
    # wrapper's tie_word_embeddings, its vision_config)
    outer: dict = field(default_factory=dict)


def _tensor(c, i: int, raw: dict, sets: set[str]) -> Tensor | None:
    path = ("parameters", "tensors", i)
    opt = {k: c.expr(path + (k,)) if k in raw else None
           for k in ("count", "extra_layers", "experts", "when", "element_bytes", "repeat")}
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
                  opt["experts"], opt["when"], split, heads, opt["element_bytes"],
                  opt["repeat"], tuple(sorted(raw.get("formats", {}).items())),
                  bool(raw.get("routed", "experts" in raw)), raw.get("replicated"))


def compile_parameters(c, raw: dict | None, sets: set[str]) -> Parameters | None:
    """The compiled block, or None when the spec has none (problems go to the compiler)."""
    if raw is None:
        return None
    extra, outer_raw = raw.get("fields", {}), raw.get("outer_fields", {})
    for key, names in (("fields", extra), ("outer_fields", outer_raw)):
        clash = sorted(set(names) & (set(c.fields) | (set(extra) if names is outer_raw
                                                       else set())))
        if clash:
            c.problems.append(c.doc.problem("KV128", ("parameters", key), f"parameter "
                                            f"field(s) {', '.join(clash)} repeat other fields"))
    saved, c.names = c.names, c.names | set(extra) | set(outer_raw)
    try:
        fields = {n: c.field(n, f, ("parameters", "fields")) for n, f in extra.items()}
        outer = {n: c.field(n, f, ("parameters", "outer_fields")) for n, f in outer_raw.items()}
        tensors = tuple(_tensor(c, i, t, sets) for i, t in enumerate(raw["tensors"]))
        # a check may also name a layer set (the list of its layer indexes), so
        # `len(some_set) == 0` refuses a schedule the tensor list does not describe
        requires = tuple((c.expr(("parameters", "requires", i, "check"), sets), r["message"])
                         for i, r in enumerate(raw.get("requires", ())))
    finally:
        c.names = saved
    return Parameters(fields, tensors, tuple(raw["sources"]), requires, outer)
