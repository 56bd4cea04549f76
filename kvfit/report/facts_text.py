"""The provenance of a plan report in text: where each field, dtype and weight byte came from.

The default report carries one short `source_line`; `--verbose` adds the rest (field
provenance, layer sets, dtype sources, checkpoint details, expert ownership, assumptions).
JSON always has all of it. Renderers never compute: every value is read from the report.
"""

from __future__ import annotations

from ..model.plan import ModelInfo, Quantization, Report
from .words import count, gib, number

ASSUMPTIONS = (
    "Counted state is a static upper bound for fully resident sequences, not a runtime "
    "allocation or OOM guarantee; engine paging, CUDA graphs and activations are covered only "
    "by the utilization and reserve you chose.",
    "TP layouts assume ideal weight sharding inside each TP group; DP replicas hold full copies.",
)
EP_ASSUMPTION = ("Attention-DP + EP layouts distribute routed experts across each model group "
                 "and split every other tensor over the attention-TP ranks of each attention "
                 "group (replicated across groups); prefix sharing, HiCache, "
                 "context/pipeline parallelism and cross-node expert groups are not searched.")
ORIGINS = {"catalog": "kvfit's pinned offline catalog", "hub": "the Hugging Face Hub",
           "local": "local files", "gguf": "a GGUF file"}
WEIGHT_SOURCES = {"user": "stated with --weight-gib"}
VERBOSE_HINT = ("(--verbose adds field provenance, layer sets, dtype sources, checkpoint "
                "details, per-layout copy notes and the assumptions; --json has everything.)")


def source_line(r: Report) -> str:
    """One line: where the config and the weights came from (the short form of `facts`)."""
    m, w = r.model, r.weights
    rev = f" at {m.revision[:12]}" if m.revision else (
        " (Hub revision unknown)" if m.origin == "catalog" else "")
    origin = ORIGINS.get(m.origin, m.origin or "unknown")
    weights = ("weights unknown" if w.bytes is None else
               f"weights {gib(w.bytes)} ({WEIGHT_SOURCES.get(w.source, w.source)})")
    return f"Source: config from {origin}{rev}; {weights}."


def facts_lines(r: Report) -> list[str]:
    """Architecture fields with provenance, layer sets, dtypes, weights, headers, quantization
    and the checkpoint notes (the --verbose block)."""
    a, w, d = r.architecture, r.weights, r.dtypes
    out = ["", f"Architecture {a.id} ({a.spec}): {a.summary}"]
    out += [f"  {f.name} = {_value(f.value)} ({f.provenance})" for f in a.fields]
    out += [f"  layers {name}: {number(v.count)} [{v.layers}]"
            for name, v in a.layer_sets.items()]
    out += ["", "Dtypes:"] + [f"  {k}: {v.name} ({v.bytes_per_value} B/value; "
                               f"{v.provenance})" + (f"; {v.note}" if v.note else "")
                               for k, v in (("kv", d.kv), ("index", d.index),
                                            ("model", d.model))]
    out += ["", f"Weights: {gib(w.bytes)} ({w.source}: {w.detail})"]
    h = r.headers
    if h:
        dtypes = ", ".join(f"{k} {gib(v)}" for k, v in h.bytes_by_dtype.items())
        out.append(f"Headers: {count(h.tensors, 'tensor')}, {gib(h.tensor_bytes)} "
                   f"({h.source}){'; ' + dtypes if dtypes else ''}; all "
                   f"{number(h.layers_covered)} declared layers have tensors")
    return out + _quant_lines(r.quantization) + _model_notes(r.model)


def _value(v) -> str:
    """A config value: counts grouped like every other number, flags and names as given."""
    return number(v) if isinstance(v, int) and not isinstance(v, bool) else str(v)


def _quant_lines(q: Quantization | None) -> list[str]:
    if not q or not (q.weight_algorithm or q.kv_cache or q.kv_cache_source):
        return []
    scope = f"; mixed, {q.scope}" if q.mixed else (
        f"; {q.scope}" if q.scope else "")
    excl = (f"; {count(q.excluded_modules, 'excluded module pattern')}"
            if q.excluded_modules and "excluded" not in (q.scope or "") else "")
    kv = q.kv_cache or "none"
    src = f" ({q.kv_cache_source})" if q.kv_cache_source else ""
    return [f"Quantization: weights {q.weight_algorithm or 'none'}{scope}{excl}",
            f"KV-cache declaration: {kv}{src}"]


def _model_notes(m: ModelInfo) -> list[str]:
    notes = m.notes or []
    if not notes or m.origin == "local":
        return []
    return ["", "Checkpoint:"] + [f"  - {n}" for n in notes]


def experts_lines(r: Report) -> list[str]:
    """Expert ownership behind the attention-DP + EP rows (the --verbose block)."""
    ep = r.expert_parallel
    if not ep:
        return []
    return ["", f"Expert ownership ({ep.source}): {ep.detail}",
            f"  {gib(ep.routed_expert_bytes)} in {count(ep.routed_experts, 'routed expert')}"
            f" + {gib(ep.non_expert_bytes)} other tensors = {gib(ep.total_bytes)} of "
            "tensors in the whole checkpoint",
            f"  {ep.assumption}.",
            f"  Pool padding ({ep.engine}): {ep.padding_rule}."]


def assumptions_lines(r: Report) -> list[str]:
    out = ["", "Assumptions:"] + [f"  - {a}" for a in ASSUMPTIONS]
    if r.expert_parallel:
        out.append(f"  - {EP_ASSUMPTION}")
    return out
