"""Report sections built from the pipeline's objects: the model echo (a JSON-ready dict), the
architecture and each state component (typed parts of kvfit.model)."""

from __future__ import annotations

from ..checkpoint.metadata import Metadata
from ..model.base import Frozen
from ..model.plan import ArchField, Architecture, LayerSet, State, StateComponent, WeightBytes
from ..specs.architecture import Architecture as ArchSpec
from ..state.evaluate import ComponentState
from ..state.kinds import DESCRIPTIONS


def model_section(meta: Metadata) -> dict:
    """What was read: source, revision, type, and how the metadata was obtained."""
    cfg = meta.config
    return {"source": meta.source, "origin": meta.origin,
            "revision_requested": meta.revision_requested, "revision": meta.revision,
            "model_type": _text(cfg.get("model_type")),
            "architectures": _names(cfg.get("architectures")),
            "artifact": meta.selected_artifact, "notes": list(meta.notes)}


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _names(value) -> list[str] | None:
    """config.json `architectures` as the report echoes it: a list of class names, or None
    when the config holds something else (a number, Infinity, a list of objects)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def architecture_section(arch: ArchSpec, fields, n_layers: int, sets: dict) -> Architecture:
    """The matched spec, every field with its provenance, and the layer schedule."""
    return Architecture(
        id=arch.id, spec=arch.file, summary=arch.summary,
        fields=tuple(ArchField(name=r.name, value=_plain(r.value), provenance=r.provenance)
                     for r in fields.values() if r.value is not None
                     and not isinstance(r.value, (list, dict))),
        layers=n_layers,
        layer_sets=Frozen({name: LayerSet(count=len(idx), layers=_ranges(idx))
                           for name, idx in sorted(sets.items())}))


def component_section(c: ComponentState) -> StateComponent:
    """One state component with its formula and numbers."""
    retention = DESCRIPTIONS[c.kind].replace("`window`", str(c.window)).replace(
        "`ratio`", str(c.ratio))
    return StateComponent(
        name=c.name, kind=c.kind, summary=c.summary, layer_set=c.layer_set, layers=c.layers,
        retention=retention, window=c.window, ratio=c.ratio,
        entries_per_layer=c.entries_per_layer, bytes_per_entry=c.bytes_per_entry,
        bytes_per_entry_formula=c.formula, layout=c.layout,
        shard="replicated" if c.heads is None else f"split by {c.heads} heads",
        bytes_per_sequence=c.bytes_per_sequence)


def state_sections(m, comps: list, ctx: int) -> dict:
    """The context, state and weights sections for `comps` counted at `ctx` (m: the prepared
    kvfit.planner.build.Model, whose weights they report)."""
    return {"context_tokens": ctx,
            "state": State(bytes_per_sequence=sum(c.bytes_per_sequence for c in comps),
                           components=tuple(component_section(c) for c in comps)),
            "weights": WeightBytes(bytes=m.weights.bytes, source=m.weights.source,
                                   detail=m.weights.detail)}


def quant_section(meta: Metadata, warnings: list[str]) -> dict:
    """The checkpoint's quantization declarations (weights and KV cache, separately)."""
    from ..checkpoint.quant import summarize

    summary = summarize(meta).to_json()
    warnings.extend(summary.get("warnings", ()))
    return summary


def rope_warning(root: dict, prefix: str, warnings: list[str]) -> None:
    """RoPE scaling is reported, never applied: the declared maximum context stands."""
    rope = root.get("rope_scaling")
    if isinstance(rope, dict) and rope:
        kind = rope.get("rope_type") or rope.get("type") or "unspecified"
        factor = rope.get("factor")
        warnings.append(f"The config declares RoPE scaling ({prefix}rope_scaling: type {kind}"
                        f"{f', factor {factor}' if factor is not None else ''}); kvfit reports "
                        "it but does not change the declared maximum context.")


def _plain(v):
    return str(v) if not isinstance(v, (int, float, bool, str)) else v


def _ranges(idx: list[int]) -> str:
    """[0,1,2,5,7,8] -> '0-2,5,7-8'."""
    parts, start = [], None
    for i, x in enumerate(idx):
        if start is None:
            start = x
        if i + 1 == len(idx) or idx[i + 1] != x + 1:
            parts.append(str(start) if start == x else f"{start}-{x}")
            start = None
    return ",".join(parts)
