"""A weight estimate from config shapes, for checkpoints whose bytes kvfit cannot read.

The architecture spec's `parameters:` block lists the checkpoint's tensors as expressions over
config fields; the checkpoint's own quantization declaration (targets and exclusion lists,
matched against each module path) decides which linear weights are stored quantized, and
specs/quant/weight_storage.yaml gives their stored bytes. Everything else is kept at the
model dtype. The result is an estimate with its basis, never checkpoint bytes: any input
kvfit lacks (a field, a format it has no storage rule for) makes it unavailable, with why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import translate
from functools import lru_cache

from ..errors import KvfitError
from ..expr import Expr, ExprError
from ..specs.parameters import Tensor
from ..state.evaluate import head_share
from ..state.fields import resolve_fields
from ..state.resolve import Resolution
from .quant import QuantSummary
from .storage import formats, source

_DIGIT_EXPERT = re.compile(r"experts\.(\d|\[)")
_MTP = re.compile(r"\bmtp\b")


class _Unavailable(Exception):
    """Why there is no estimate (one sentence)."""


@dataclass(frozen=True, slots=True)
class TensorBytes:
    """One spec tensor row: instances counted, elements per instance, stored bytes in all."""

    module: str
    instances: int
    elements: int
    bytes: int
    stored_as: str
    split: str
    heads: int | None = None
    routed: bool = False
    experts: int | None = None
    replicated: str | None = None
    layer_ids: tuple[int, ...] = ()     # the decoder layers it repeats over (empty: none)

    def on_rank(self, tp: int) -> int:
        if self.split == "none" or self.replicated:
            return self.bytes
        if self.split == "heads":
            return head_share(self.bytes, self.heads or 1, tp)
        return -(-self.bytes // tp)


@dataclass(frozen=True, slots=True)
class WeightEstimate:
    """Weight bytes estimated from config shapes, per tensor row, with the basis."""

    rows: tuple[TensorBytes, ...]
    detail: str

    @property
    def total_bytes(self) -> int:
        return sum(r.bytes for r in self.rows)

    def rank_bytes(self, tp: int) -> int:
        """Bytes one rank loads at tensor-parallel size `tp` (no expert parallelism)."""
        return sum(r.on_rank(tp) for r in self.rows)

    @property
    def replicated(self) -> tuple[int, str] | None:
        """(bytes, why) of the rows the spec marks `replicated` (held whole on every rank),
        or None when it marks none."""
        rows = [r for r in self.rows if r.replicated and r.bytes]
        if not rows:
            return None
        names = ", ".join(dict.fromkeys(r.module.rsplit(".", 1)[-1] for r in rows))
        whys = "; ".join(dict.fromkeys(r.replicated for r in rows))
        return sum(r.bytes for r in rows), f"{names}: {whys}"

    @property
    def replicated_rows(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """(bytes, decoder layer indices) of each row the spec marks `replicated`."""
        return tuple((r.bytes, r.layer_ids) for r in self.rows if r.replicated and r.bytes)


def _plain_name(entry: str) -> bool:
    """A module name (matched against runs of whole path segments), not a pattern."""
    return not entry.startswith("re:") and "*" not in entry and "?" not in entry \
        and "[" not in entry


class _Matcher:
    """Quantization targets and exclusions of one declaration, matched against module paths
    (`re:` entries as regular expressions, globs against the path and its ancestors, plain
    names against any run of whole path segments)."""

    def __init__(self, entries: tuple[str, ...]):
        self.globs, self.glob_re, self.regexes = [], None, []
        if all(map(_plain_name, entries)):
            self.plain = set(entries)  # plain names only (a per-module declaration: thousands)
        else:
            self.plain = {e for e in entries if _plain_name(e)}
            self.globs = [e for e in entries if not e.startswith("re:") and not _plain_name(e)]
            # one alternation of the globs (fnmatchcase semantics: translate + match), so a
            # path is tried once per ancestor, not once per glob (exclusions hold hundreds)
            self.glob_re = re.compile("|".join(map(translate, self.globs))) if self.globs \
                else None
            for e in entries:
                if e.startswith("re:"):
                    try:
                        self.regexes.append(re.compile(e[3:]))
                    except re.error:
                        raise _Unavailable(f"the quantization declaration's pattern {e!r} is "
                                           "not a valid regular expression") from None
        self.lengths, self.firsts = segment_counts(self.plain), first_segments(self.plain)
        self.all_linear = "Linear" in self.plain
        self.by_expert = names_experts(entries)

    def __call__(self, path: str) -> bool:
        if self.all_linear:
            return True
        if self.plain and not self.plain.isdisjoint(runs(path, self.lengths, self.firsts)):
            return True
        if self.glob_re is not None and any(self.glob_re.match(p) for p in _prefixes(path)):
            return True
        return any(r.match(path) for r in self.regexes)


def names_experts(entries) -> bool:
    """Whether a declaration names single experts ("experts.3", "experts.[0-7]")."""
    return _DIGIT_EXPERT.search("\n".join(entries)) is not None


def segment_counts(names) -> tuple[int, ...]:
    """The dotted-segment counts of `names` (a run of `path` can equal a name only when it
    has as many segments)."""
    return tuple(sorted({n.count(".") + 1 for n in names}))


def first_segments(names) -> frozenset[str]:
    """The first segment of every name (a run of `path` can equal a name only when it starts
    at a segment that begins some name)."""
    return frozenset(n.split(".", 1)[0] for n in names)


def runs(path: str, lengths: tuple[int, ...], firsts: frozenset[str]) -> list[str]:
    """Every run of whole dotted segments of `path` that is one of `lengths` segments long and
    starts with one of `firsts`: the runs a declaration of names with those segment counts and
    first segments can equal (a per-module declaration's names all begin with the model's
    top module, so a path's runs are tried from there only)."""
    parts = path.split(".")
    n = len(parts)
    return [".".join(parts[a:a + k]) for a in range(n) if parts[a] in firsts
            for k in lengths if a + k <= n]


@lru_cache(maxsize=65536)
def _prefixes(path: str) -> tuple[str, ...]:
    parts = path.split(".")
    return tuple(".".join(parts[:k]) for k in range(1, len(parts) + 1))


def _num(expr: Expr, names: dict, what: str) -> int:
    try:
        value = expr.evaluate(names)
    except ExprError as exc:
        raise _Unavailable(f"{what} '{expr.text}' cannot be computed: {exc.message}") from None
    if isinstance(value, bool) or value != int(value) or value < 0:
        raise _Unavailable(f"{what} '{expr.text}' gave {value}, not a whole count")
    return int(value)


class _Estimator:
    def __init__(self, res: Resolution, quant: QuantSummary | None, model_bytes, names: dict):
        self.res, self.names, self.model_bytes = res, names, model_bytes
        groups = quant.module_groups if quant else ()
        # a group of plain module names needs no matcher of its own: its names go to the
        # index fmt() looks paths up in (a per-module declaration is thousands of one-name
        # groups); a group with patterns or "Linear" is matched on its own, in order
        self.groups = [(fmt, tuple(t)) for fmt, t in groups]
        self._slow = [(i, _Matcher(t)) for i, (_, t) in enumerate(self.groups)
                      if "Linear" in t or not all(map(_plain_name, t))]
        self.excluded = _Matcher(quant.excluded_names if quant else ())
        self.quant, self.storage = quant, formats()
        self.used: set[str] = set()
        self._index: dict[str, int] | None = None
        self._lengths: tuple[int, ...] = ()
        self._firsts: frozenset[str] = frozenset()
        self._bytes: dict[tuple, int] = {}
        # declarations that name single experts are matched expert by expert; otherwise one
        # representative expert (index 0) stands for all of a layer's experts
        self.by_expert = self.excluded.by_expert or names_experts(
            e for _, t in self.groups for e in t)

    def fmt(self, path: str) -> str | None:
        """The stored format of a linear weight at `path` (None: the model dtype): the first
        declaration group that matches. Plain names of every group are looked up in one
        index (per-module NVFP4 declarations list thousands); only groups with globs,
        patterns or "Linear" are tried one by one, and only ahead of the first plain hit."""
        if not self.groups or self.excluded(path):
            return None
        if self._index is None:
            self._index = {}
            for i, (_, names) in enumerate(self.groups):
                for name in names:
                    if _plain_name(name):
                        self._index.setdefault(name, i)
            self._lengths = segment_counts(self._index)
            self._firsts = first_segments(self._index)
        index = self._index
        best = min((index[r] for r in runs(path, self._lengths, self._firsts) if r in index),
                   default=None)
        for i, m in self._slow:
            if best is not None and i >= best:
                break
            if m(path):
                best = i
                break
        return None if best is None else self.groups[best][0]

    def linear_bytes(self, fmt: str | None, rows: int, cols: int) -> int:
        if fmt is None:
            return int(rows * cols * self.model_bytes)
        key = (fmt, rows, cols)          # one storage expression per shape, not per expert
        if key not in self._bytes:
            self._bytes[key] = self._stored_bytes(fmt, rows, cols)
        self.used.add(fmt)
        return self._bytes[key]

    def _stored_bytes(self, fmt: str, rows: int, cols: int) -> int:
        if fmt not in self.storage:
            raise _Unavailable(f"kvfit has no storage rule for {fmt} weights "
                               f"({source()})")
        expr, needs, _ = self.storage[fmt]
        q = self.quant
        group = q.group_size if q.group_size and q.group_size > 0 else None
        block = q.block_size or (None, None)
        missing = [n for n, v in (("group", group), ("block", q.block_size),
                                  ("bits", q.weight_bits)) if n in needs and v is None]
        if missing:
            raise _Unavailable(f"the {fmt} declaration gives no single {missing[0]} size")
        vals = {"rows": rows, "cols": cols, "group": group or cols, "bits": q.weight_bits or 0,
                "block_rows": block[0] or 1, "block_cols": block[-1] or 1}
        return _num(expr, vals, f"{source()} {fmt} bytes")

    def row(self, t: Tensor) -> TensorBytes | None:
        names = self.names
        if t.when is not None and not t.when.evaluate(names):
            return None
        if t.layers == "*":
            layers = list(range(self.res.n_layers))
        elif t.layers is not None:
            layers = self.res.sets.get(t.layers, [])
        elif t.extra_layers is not None:
            n = _num(t.extra_layers, names, f"{t.module} extra_layers")
            layers = list(range(self.res.n_layers, self.res.n_layers + n))
        else:
            layers = [None]
        experts = _num(t.experts, names, f"{t.module} experts") if t.experts else None
        copies = _num(t.repeat, names, f"{t.module} repeat") if t.repeat is not None else 1
        heads = _num(t.heads, names, f"{t.module} heads") if t.heads is not None else None
        if t.shape is None:
            count = _num(t.count, names, f"{t.module} count")
            width = (t.element_bytes.evaluate(names) if t.element_bytes is not None
                     else self.model_bytes)
            n = len(layers) * (experts or 1) * copies
            return TensorBytes(t.module, n, count, int(n * count * width), "model dtype"
                               if t.element_bytes is None else f"{width} B", t.split, heads,
                               t.routed, experts, t.replicated, _ids(layers))
        rows, cols = (_num(e, names, f"{t.module} shape") for e in t.shape)
        each = range(experts) if experts and self.by_expert else [0]
        repeat = experts if experts and not self.by_expert else 1
        total, seen, renamed = 0, set(), dict(t.formats)
        if not self.groups:
            # no quantization declaration: fmt() is None for every path, the model dtype (a
            # `formats` key is always a format name)
            total = self.linear_bytes(None, rows, cols) * repeat * copies * len(layers) * len(each)
            seen = {"model dtype"} if layers else set()
        else:
            for i in layers:
                path = t.module if i is None else t.module.replace("{i}", str(i))
                path = path.replace("{r}", "0")  # one copy stands for all `repeat` copies
                for e in each:
                    fmt = self.fmt(path.replace("{e}", str(e)))
                    fmt = renamed.get(fmt, fmt)
                    seen.add(fmt or "model dtype")
                    total += self.linear_bytes(fmt, rows, cols) * repeat * copies
        n = len(layers) * (experts or 1) * copies
        return TensorBytes(t.module, n, rows * cols, total, "+".join(sorted(seen)), t.split,
                           heads, t.routed, experts, t.replicated, _ids(layers))


def _ids(layers: list) -> tuple[int, ...]:
    """A row's decoder layer indices ([None]: a row outside the layers)."""
    return () if layers == [None] else tuple(sorted(layers))


def estimate_weights(res: Resolution, quant: QuantSummary | None, model_bytes, mtp: bool = False
                     ) -> tuple[WeightEstimate | None, str]:
    """(estimate, basis) or (None, why not). `mtp`: count the tensors the spec marks as the
    checkpoint's MTP / draft layers (`when: mtp`), which only a speculative run loads."""
    params = res.arch.parameters
    if params is None:
        return None, f"spec '{res.arch.id}' lists no parameter shapes"
    if quant is not None and quant.weight_algorithm in ("unknown", "mixed-precision") \
            and not quant.module_groups:
        return None, f"the checkpoint's {quant.weight_algorithm} quantization has no storage rule"
    try:
        extra = resolve_fields(res.arch, res.root, res.prefix, params.fields, res.fields)
        if params.outer:
            top = res.config if res.config is not None else res.root
            extra |= resolve_fields(res.arch, top, "", params.outer, res.fields | extra)
        kinds = params.fields | params.outer
        # an absent optional list or string counts as empty (as an empty list counts as
        # absent in layer selectors), so `len(...) == 0` checks hold for configs that omit it
        empty = {"list": [], "string": ""}
        names = res.values | {k: (empty[kinds[k].type] if r.value is None else r.value)
                              for k, r in extra.items()
                              if r.value is not None or kinds[k].type in empty}
        # layer sets are visible to the checks as index lists (a field of the same name wins)
        checked = dict(res.sets) | names
        for check, message in params.requires:
            if not check.evaluate(checked):
                return None, f"{message} (check: {check.text})"
        est = _Estimator(res, quant, model_bytes, names | {"model_bytes": model_bytes,
                                                           "mtp": 1 if mtp else 0})
        every = [(t, est.row(t)) for t in params.tensors]
        rows = tuple(r for _, r in every if r is not None)
        # say "MTP layers included" only when a row gated on `mtp` was counted
        mtp_counted = any(r is not None and r.instances and t.when is not None and _MTP.search(t.when.text)
                          for t, r in every)
    except _Unavailable as exc:
        return None, str(exc)
    except ExprError as exc:
        return None, exc.message
    except KvfitError as exc:
        return None, exc.message.rstrip(".")
    stored = ", ".join(sorted(est.used)) or "none"
    detail = (f"estimate from config shapes (spec '{res.arch.id}' parameters, "
              f"{sum(r.instances for r in rows):,} tensors; quantized storage: {stored}"
              f"{' per ' + source() if est.used else ''}; everything else at "
              f"{model_bytes} B per element{'; MTP layers included' if mtp_counted else ''})")
    return WeightEstimate(rows, detail), detail
