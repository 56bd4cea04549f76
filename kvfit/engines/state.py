"""Checkpoint metadata -> the state components an engine would cache, in the engine's
KV dtype and storage layout. Uses kvfit.state.* exactly like a plan does; only the KV dtype
resolution follows the engine's own `--kv-cache-dtype` rules (engines.md §3), through the one
`auto` resolver kvfit.checkpoint.kv_auto that the planner uses too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import dtypes
from ..checkpoint import kv_auto
from ..checkpoint.metadata import Metadata
from ..checkpoint.quant import summarize
from ..errors import UsageError
from ..state.evaluate import evaluate_components
from ..state.resolve import resolve_architecture


@dataclass(slots=True)
class EngineState:
    """What the engine caches for this checkpoint: components plus the facts behind them."""

    components: list
    arch_id: str
    kv: dtypes.CacheDtype
    layout: str | None
    quant: dict
    vocab: int | None
    max_context: int | None
    model_bytes: object
    warnings: list = field(default_factory=list)
    resolution: object = None   # the state.resolve.Resolution the components came from
    head_size: int | None = None   # the model's largest attention head size (model_head_size)


def _spelling(rules, text: str) -> dict:
    for entry in rules.dtypes:
        if entry["spelling"] == text:
            return entry
    known = ", ".join(e["spelling"] for e in rules.dtypes)
    raise UsageError(f"--kv-cache-dtype {text!r} is not a {rules.engine} spelling.",
                     hint=f"{rules.engine} accepts: {known}.")


def _applies(choice: dict, kv: str, roots: list[dict], capability: str | None) -> bool:
    if "when_kv" in choice and kv not in choice["when_kv"]:
        return False
    majors = choice.get("when_capability")
    if majors and (not capability or int(str(capability).split(".")[0]) not in majors):
        return False
    lacks = choice.get("when_config_lacks")
    if lacks and any(lacks in r for r in roots):
        return False
    cond = choice.get("when_config_in")
    if cond:
        value = next((r[cond["key"]] for r in roots if cond["key"] in r), None)
        return str(value) in cond["values"]
    return True


def _layout(rules, entry: dict, arch, kv: str, roots: list[dict],
            capability: str | None = None) -> str | None:
    """The storage layout the engine uses: a packed spelling's, else the first of the
    engine spec's `cache_layouts` that this architecture defines and whose conditions hold
    (a row with `when_capability` needs the GPU's compute capability to be known)."""
    names = {n for c in arch.components for n, _, _ in c.layouts}
    if entry.get("layout"):
        if entry["layout"] not in names:
            raise UsageError(f"--kv-cache-dtype {entry['spelling']} stores a packed layout "
                             f"('{entry['layout']}') that spec '{arch.id}' does not describe.")
        return entry["layout"]
    return next((c["layout"] for c in rules.layouts
                 if c["layout"] in names and _applies(c, kv, roots, capability)), None)


def _vocab(config: dict, root: dict) -> int | None:
    for d in (root, config):
        v = d.get("vocab_size")
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def engine_dtypes(meta: Metadata, res, rules, kv_spelling: str | None, quant: dict,
                  model_dtype: str | None = None, warnings: list | None = None,
                  capability: str | None = None):
    """(KV CacheDtype, model CacheDtype, storage layout) as the engine resolves them.

    kv_spelling: the engine's --kv-cache-dtype (None: auto); model_dtype: its --dtype;
    capability: the GPU's compute capability (None: unknown), for backend-specific layouts."""
    arch, root, root_name = res.arch, res.root, res.root_name
    warnings = [] if warnings is None else warnings
    entry = _spelling(rules, kv_spelling or "auto")
    if entry["kvfit"] == "auto":
        kv = kv_auto.resolve(rules, meta, root, root_name, quant, warnings, model_dtype,
                             capability)
    elif entry["kvfit"] == "layout":
        kv = dtypes.explicit("fp8", "--kv-cache-dtype")
    else:
        kv = dtypes.explicit(entry["kvfit"], f"--kv-cache-dtype {entry['spelling']} ->")
    model = kv_auto.served(rules, meta, root, root_name, model_dtype) or dtypes.CacheDtype(
        "bf16", dtypes.WIDTHS["bf16"], "assumption: bf16")
    layout = _layout(rules, entry, arch, kv.name, [root, meta.config], capability)
    return kv, model, layout


def model_head_size(rules, fields: dict) -> int | None:
    """The engine's whole-model head size: the largest of the architecture fields the rule
    attention_block_by_head_size names (vLLM takes the maximum over layers); None without it."""
    rule = rules.values.get("attention_block_by_head_size")
    if not rule:
        return None
    sizes = [fields[n].value for n in rule.get("head_size_fields", ()) if n in fields]
    sizes = [v for v in sizes if isinstance(v, int) and not isinstance(v, bool)]
    return max(sizes) if sizes else None


def index_default(rules, arch_id: str) -> dtypes.CacheDtype | None:
    """The sparse-indexer key dtype the engine uses for this architecture when none is stated
    (rule indexer_kv_default), or None: then it follows the KV dtype."""
    rule = rules.values.get("indexer_kv_default")
    for row in rule["value"] if rule else ():
        if row["architecture"] == arch_id:
            name = row["dtype"]
            return dtypes.CacheDtype(name, dtypes.WIDTHS[name], f"engine rule {rule['source']}")
    return None


def architectures(config: dict) -> tuple:
    """config.json's `architectures` class names (strings only; empty when absent)."""
    names = config.get("architectures") if isinstance(config, dict) else None
    return tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else ()


def vocab_size(meta: Metadata, res) -> int | None:
    """The model's vocabulary size (text config first), for the engines' activation terms."""
    return _vocab(meta.config, res.root)


def engine_state(meta: Metadata, rules, kv_spelling: str | None, context: int,
                 mtp: bool = False, model_dtype: str | None = None,
                 capability: str | None = None) -> EngineState:
    """Evaluate the checkpoint's components at `context` tokens in the engine's KV dtype.

    model_dtype: the engine's --dtype flag (None/auto: as the engine reads the config);
    capability: the GPU's compute capability (None: unknown), for backend-specific layouts."""
    res = resolve_architecture(meta.config)
    arch, fields, sets = res.arch, res.fields, res.sets
    warnings: list[str] = []
    quant = summarize(meta).to_json()
    kv, model, layout = engine_dtypes(meta, res, rules, kv_spelling, quant, model_dtype,
                                      warnings, capability)
    index = index_default(rules, arch.id) or kv
    names = {"kv_bytes": kv.bytes, "index_bytes": index.bytes, "model_bytes": model.bytes,
             "mtp": 1 if mtp else 0}
    comps = evaluate_components(arch, fields, sets, context, names, layout)
    return EngineState(comps, arch.id, kv, layout, quant, _vocab(meta.config, res.root),
                       fields["max_context"].value, model, warnings, res,
                       model_head_size(rules, fields))
