"""Count the per-sequence state of a checkpoint: every component, whole model and per rank."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..errors import ConfigError, UnsupportedArchitecture, UsageError
from ..expr import Expr, ExprError
from ..specs.architecture import Architecture, Component
from .fields import Resolved
from .kinds import entries


def heads_per_rank(heads: int, tp: int) -> int:
    """Heads one rank holds when `heads` split across TP=`tp` (one, replicated, beyond)."""
    return heads // tp if tp <= heads else 1


def head_share(total: int, heads: int, tp: int) -> int:
    """Bytes of `total` (spread evenly over `heads`) that one rank holds, rounded up."""
    share = Fraction(total * heads_per_rank(heads, tp), heads)
    return -(-share.numerator // share.denominator)


@dataclass(frozen=True, slots=True)
class ComponentState:
    """One component's state for one sequence at the planned context.

    bytes_per_entry: bytes one layer keeps per retained entry (whole model, before sharding);
    entries_per_layer: entries each layer keeps at this context;
    bytes_per_sequence: layers x entries x bytes_per_entry.
    heads: the head count the state divides by across TP (None when replicated).
    """

    name: str
    kind: str
    summary: str
    layer_set: str
    layers: int
    entries_per_layer: int
    bytes_per_entry: int
    bytes_per_sequence: int
    heads: int | None
    formula: str
    layout: str
    window: int | None = None
    ratio: int | None = None
    layer_ids: tuple | None = None   # the model's layer indices (None: extra/draft layers)
    block_tokens: int | None = None     # the engine's own block for this storage (layout)
    page_alignment: int | None = None   # bytes the engine rounds each block's page up to

    def heads_per_rank(self, tp: int) -> int | None:
        """KV heads one rank keeps at this TP size (None when replicated)."""
        return None if self.heads is None else heads_per_rank(self.heads, tp)

    def per_rank(self, tp: int) -> int:
        """Bytes one rank keeps for one sequence at attention TP size `tp`."""
        if self.heads is None:
            return self.bytes_per_sequence
        return head_share(self.bytes_per_sequence, self.heads, tp)

    def tp_problem(self, tp: int) -> str | None:
        """Why TP=`tp` cannot shard this state evenly, or None."""
        h = self.heads
        if h is None or (tp <= h and h % tp == 0) or (tp > h and tp % h == 0):
            return None
        return f"{self.name}: {h} heads cannot be split evenly across TP={tp}"


def _int_bytes(expr: Expr, names: dict, what: str, arch: Architecture) -> int:
    try:
        value = expr.evaluate(names)
    except ExprError as exc:
        raise ConfigError(f"spec '{arch.id}': {what} '{expr.text}' cannot be computed: "
                          f"{exc.message}.") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, Fraction) and value.denominator == 1:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"spec '{arch.id}': {what} '{expr.text}' gave {value}, not a "
                          "non-negative whole number; bytes must be exact.")
    return value


def _layer_count(c: Component, names, sets, arch) -> int:
    if c.extra_layers is None:
        return len(sets[c.layers])
    n = _int_bytes(c.extra_layers, names, f"{c.name} extra_layers", arch)
    if n > 10_000:
        raise ConfigError(f"spec '{arch.id}': {c.name} extra_layers = {n} is absurd.")
    return n


def _when(c: Component, names: dict, arch: Architecture):
    try:
        return c.when.evaluate(names)
    except ExprError as exc:
        raise ConfigError(f"spec '{arch.id}': {c.name} when '{c.when.text}' cannot be computed: "
                          f"{exc.message}.") from None


def _component(c: Component, names, sets, ctx, layout, arch) -> ComponentState | None:
    if c.when is not None and not _when(c, names, arch):
        return None
    n_layers = _layer_count(c, names, sets, arch)
    if n_layers == 0:
        return None
    chosen = next(((n, e) for n, _, e in c.layouts if n == layout), None)
    expr = chosen[1] if chosen else c.bytes
    per_entry = _int_bytes(expr, names, f"{c.name} bytes", arch)
    param = None
    if c.window is not None or c.ratio is not None:
        param = _int_bytes(c.window or c.ratio, names, f"{c.name} window/ratio", arch)
        if param == 0:
            raise ConfigError(f"spec '{arch.id}': {c.name} window/ratio is 0.")
    kind, shard = c.kind, c.shard_heads
    for name, k, h in c.layout_shards:      # the engine stores this state another way
        if chosen and name == chosen[0]:
            kind, shard = k or kind, h if h is not None else shard
    paging = [None, None, None]             # ring window, engine block tokens, page alignment
    for name, *exprs in c.layout_paging:
        if chosen and name == chosen[0]:
            paging = [None if e is None else _int_bytes(e, names, f"{c.name} {name}", arch)
                      for e in exprs]
    if paging[0]:
        param = paging[0]
    heads = _int_bytes(shard, names, f"{c.name} heads", arch) if shard else None
    if heads == 0:
        raise UnsupportedArchitecture(f"{c.name}: the config gives 0 heads.")
    per_layer = entries(kind, ctx, param)
    return ComponentState(
        c.name, kind, c.summary, c.layers or "extra", n_layers, per_layer, per_entry,
        n_layers * per_layer * per_entry, heads, expr.text, chosen[0] if chosen else "logical",
        window=param if kind in ("sliding", "chunked", "draft") else None,
        ratio=param if kind == "compressed" else None, block_tokens=paging[1] or None,
        page_alignment=paging[2] or None,
        layer_ids=tuple(sets[c.layers]) if c.extra_layers is None else None)


def evaluate_components(arch: Architecture, fields: dict[str, Resolved], sets: dict,
                        ctx: int, dtype_names: dict, layout: str | None) -> list[ComponentState]:
    """Evaluate every counted component at context `ctx` (tokens)."""
    names = {k: r.value for k, r in fields.items() if r.value is not None} | dtype_names
    known = sorted({n for c in arch.components for n, _, _ in c.layouts})
    if layout is not None and layout not in known:
        offer = f"its layouts are: {', '.join(known)}" if known else "it defines no engine layouts"
        raise UsageError(f"--cache-layout {layout!r} is not defined by spec '{arch.id}'; {offer}.")
    out = []
    for c in arch.components:
        state = _component(c, names, sets, ctx, layout, arch)
        if state is not None:
            out.append(state)
    return out


def check_requirements(arch: Architecture, fields: dict[str, Resolved]) -> None:
    """Reject configs that fail the spec's `requires` checks."""
    names = {k: r.value for k, r in fields.items() if r.value is not None}
    for expr, message in arch.requires:
        try:
            ok = expr.evaluate(names)
        except ExprError as exc:
            raise UnsupportedArchitecture(f"spec '{arch.id}': check '{expr.text}' cannot be "
                                          f"evaluated for this config ({exc.message}).") from None
        if not ok:
            raise UnsupportedArchitecture(f"spec '{arch.id}': {message} (check: {expr.text})",
                                          fields=tuple(sorted(expr.names)))
