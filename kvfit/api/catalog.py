"""kvfit's offline catalog as the API answers about it: one entry described as `kvfit catalog
show ID --json` prints it, and a search of the repo ids (kvfit.catalog_search)."""

from __future__ import annotations

import json
from typing import Any


def _quant_label(q: dict[str, Any]) -> str:
    """One short phrase for the weights' declared quantization."""
    algo = q.get("weight_algorithm")
    if not algo:
        return "none declared"
    block = q.get("block_size")
    text = algo + (f" {'x'.join(str(b) for b in block)} blocks" if block else "")
    text += " (some modules excluded)" if q.get("mixed") else ""
    return text + (f", KV {q['kv_cache']} declared" if q.get("kv_cache") else "")


def _origin(record: dict[str, Any]) -> str:
    o = record.get("pinned_from")
    if o is None:
        return "derived by a tool (not copied)"
    return f"{o['host']}/{o['repo']}/{o['path']}@{o['commit']}"


def describe(repo_id: str) -> dict[str, Any]:
    """One entry as `kvfit catalog` shows it (weights' basis: the plan's own weight count)."""
    from ..checkpoint.quant import summarize
    from ..hub.catalog import catalog_file, load_entry, lookup_catalog
    from ..hub.catalog_info import siblings

    entry = load_entry(repo_id)
    config = json.loads(catalog_file(entry["repo_id"], "config.json"))
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    quant = summarize(lookup_catalog(entry["repo_id"])).to_json()
    archs = config.get("architectures") or text.get("architectures") or [None]
    return {
        "repo_id": entry["repo_id"], "aliases": entry.get("aliases", []),
        "architecture": archs[0], "model_type": config.get("model_type"),
        "text_model_type": text.get("model_type"),
        "quantization": _quant_label(quant), "quantization_summary": quant,
        "weights": _weights(entry),
        "hf_revision": entry["hf_revision"],
        "revision": entry["hf_revision"] or "Hub revision unknown",
        "files": [{"file": f["file"], "bytes": f["bytes"], "sha256": f["sha256"],
                   "fidelity": f["fidelity"], "pinned_from": f["pinned_from"],
                   "source": _origin(f)} for f in entry["snapshot"]],
        "siblings": siblings(entry["repo_id"]),
        "notes": entry.get("notes", []),
    }


def _weights(entry: dict[str, Any]) -> dict[str, Any]:
    """The weights' basis as a plan counts them (kvfit.planner.build's own weight count) from the
    catalog's metadata, without hardware."""
    if entry.get("total_size") is not None:
        return {"basis": "index", "bytes": entry["total_size"],
                "detail": "metadata.total_size of the pinned model.safetensors.index.json"}
    from .. import dtypes
    from ..errors import KvfitError
    from ..hub.catalog import lookup_catalog
    from ..planner.build import checkpoint_weights
    from ..planner.request import PlanRequest
    from ..planner.sections import quant_section
    from ..state.resolve import resolve_architecture

    meta = lookup_catalog(entry["repo_id"])
    try:
        res = resolve_architecture(meta.config)
        model = dtypes.model_dtype(meta.config, res.root, res.root_name)
        weights, _ = checkpoint_weights(PlanRequest(model=entry["repo_id"]), meta, res,
                                  quant_section(meta, []),
                                  model.bytes if model else dtypes.WIDTHS["bf16"], [])
    except KvfitError as exc:
        return {"basis": "not planned", "bytes": None, "detail": exc.message}
    basis = {"config estimate": "estimate", "unknown": "unknown"}.get(weights.source,
                                                                       weights.source)
    return {"basis": basis, "bytes": weights.bytes, "detail": weights.detail}


def search(query: str, limit: int) -> list[str]:
    """Catalog repo ids (or former ids) holding `query` (any letter case), best first: the
    id or its name equal to it, then names starting with it, then ids starting with it, then
    the rest; shorter ids first within each."""
    from ..hub.catalog import catalog_repo_ids, load_entry

    q = query.strip().casefold()
    found = []
    for rid in catalog_repo_ids():
        names = [rid, *(load_entry(rid) or {}).get("aliases", [])]
        ranks = [_rank(n.casefold(), q) for n in names if q in n.casefold()]
        if ranks:
            found.append((min(ranks), len(rid), rid.casefold(), rid))
    return [r for *_, r in sorted(found)][:limit]


def _rank(name: str, q: str) -> int:
    short = name.rpartition("/")[2]
    return 0 if q in (name, short) else 1 if short.startswith(q) else 2 if name.startswith(q) \
        else 3
