"""One preparation per checkpoint and question, priced on many fleets (issue 13: an audit
"resolves each checkpoint, reads its weights and evaluates its state once, then prices every
fleet and context from those").

`kvfit.planner.build.prepare` (spec match, dtypes, context, state, weights, the engines' layout
judge, the report head) reads the request's fleet (--hardware/--gpus, --system/--nodes) only
for an engine's storage layout, which depends on the GPU's compute capability. Requests that
differ in their fleet alone, with the same capability, therefore share one preparation: the
plan prices each topology from the same Model, as the --systems search and the inverse
questions already do topology after topology. Nothing of the answer changes; the warnings
prepare() wrote are handed to every plan in the order a fresh preparation writes them."""

from __future__ import annotations

FLEET = ("hardware", "gpus", "system", "nodes")


class Preparations:
    """A prepare() that remembers: pass it to `plan(req, meta=..., prepared=...)` for the
    requests of one checkpoint read once (an audit's contexts and fleets of one model). Entries
    are kept with the metadata object they were prepared from; without one (the plan reads the
    checkpoint itself) nothing is kept, nor is a failed preparation (the next request raises
    the same refusal)."""

    def __init__(self) -> None:
        self._done: list[tuple] = []      # (request's other fields, capability, meta, result)

    def __call__(self, req, warnings: list[str], meta):
        from ..errors import KvfitError
        from .build import _capability, prepare

        if meta is None:                  # nothing read yet: the plan reads (or refuses) it
            return prepare(req, warnings, meta)
        try:
            capability = _capability(req) if req.engine else None
        except KvfitError:                # prepare() raises the same refusal, in its own order
            return prepare(req, warnings, meta)
        key = {k: v for k, v in vars(req).items() if k not in FLEET}    # every other field
        for k, cap, known, (m, head, written) in self._done:
            if known is meta and cap == capability and k == key:
                warnings.extend(written)
                return m, dict(head)      # the report's top level is its own; sections are read
        written: list[str] = []
        m, head = prepare(req, written, meta)
        self._done.append((key, capability, meta, (m, head, written)))
        warnings.extend(written)
        return m, dict(head)
