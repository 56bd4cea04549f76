"""The plan's cache dtypes: KV (the one `--kv-dtype auto` resolver, kvfit.checkpoint.kv_auto, or the
engine's own resolution), the sparse-indexer keys and the model dtype, and the engine's storage
layout when an engine answers."""

from __future__ import annotations

from .. import dtypes


def _index_dtype(req, kv, arch) -> dtypes.CacheDtype:
    """The sparse-indexer key dtype: the KV dtype under auto; `fp4` only where the architecture
    spec names the one 4-bit format its indexer takes (`index_fp4`), else ambiguous."""
    if req.index_dtype == "auto":
        return dtypes.CacheDtype(kv.name, kv.bytes, "same as the KV cache (--index-dtype auto)")
    if str(req.index_dtype).strip().lower() == "fp4" and arch.index_fp4:
        name, source = arch.index_fp4
        return dtypes.CacheDtype(name, dtypes.WIDTHS[name], f"user: --index-dtype fp4, resolved to "
                                 f"{name}, the one 4-bit format {arch.id}'s indexer takes ({source})")
    return dtypes.explicit(req.index_dtype, "--index-dtype")


def uses_index(arch, comps) -> bool:
    """True when a counted component is priced at the indexer dtype (`index_bytes`): DSA
    index keys, and DeepSeek-V4's compressed indexer keys (kind `compressed`)."""
    priced = {c.name for c in arch.components
              if "index_bytes" in c.bytes.names or any("index_bytes" in e.names for *_, e in c.layouts)}
    return any(c.name in priced for c in comps)


def cache_names(kv, index, arch, comps, index_dtype: str, warnings: list[str]) -> tuple:
    """(("KV", name),) plus ("index", name) when a counted component is priced at the indexer
    dtype; an --index-dtype that nothing uses is said in a warning."""
    if uses_index(arch, comps):
        return ("KV", kv.name), ("index", index.name)
    if index_dtype != "auto":
        warnings.append(f"--index-dtype {index_dtype} is not used: {arch.id} keeps no "
                        "sparse-indexer keys.")
    return (("KV", kv.name),)


def _static_auto(meta, root, root_name, quant, warnings):
    """`--kv-dtype auto` without --engine: the one resolver (kvfit.checkpoint.kv_auto) with the
    reference engine's rule (kvfit.engines.REFERENCE), so the static bound counts the cache
    vLLM would allocate."""
    from ..checkpoint import kv_auto
    from ..engines import REFERENCE
    from ..engines.spec import rules_for

    return kv_auto.resolve(rules_for(REFERENCE, None), meta, root, root_name, quant, warnings)


def cache_dtypes(req, meta, arch, root, root_name, quant, warnings, engine=None,
                 capability: str | None = None):
    """(KV, index, model) dtypes, and the engine's storage layout (None without an engine).

    engine: (rules, res, quant summary, kv spelling, --dtype) when an engine answers: the KV,
    index and model dtypes are then the engine's own resolution, so the plan counts one state;
    capability: the plan's GPU compute capability (some layouts depend on the backend)."""
    layout = None
    if engine is not None:
        from ..engines.state import engine_dtypes, index_default
        rules, res, summary, spelling, dtype_flag = engine
        kv, model, layout = engine_dtypes(meta, res, rules, spelling, summary, dtype_flag,
                                          warnings, capability)
        own = index_default(rules, arch.id) if req.index_dtype == "auto" else None
        return kv, own or _index_dtype(req, kv, arch), model, layout
    kv = (_static_auto(meta, root, root_name, quant, warnings)
          if req.kv_dtype == "auto" else dtypes.explicit(req.kv_dtype))
    index = _index_dtype(req, kv, arch)
    model = dtypes.model_dtype(meta.config, root, root_name) or dtypes.CacheDtype(
        "bf16", dtypes.WIDTHS["bf16"], "assumption: bf16")
    return kv, index, model, layout
