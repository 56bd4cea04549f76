"""The JSON section of a config-declared integrated draft model (DeepSeek V4 DSpark)."""

from __future__ import annotations


def speculative_draft(values: dict, fields: dict, comps: list) -> dict:
    """{"speculative_draft": ...} for a config-declared DSpark draft (counted by the static
    plan, its use at launch unknown: `runtime_enabled` is always None), else {}."""
    if not values.get("dspark_block_size"):
        return {}
    layers = fields["dspark_layers"]
    return {"speculative_draft": {"kind": "dspark", "declaration_source": "model-config",
            "fields": {k: fields[k].value for k in ("dspark_block_size", "dspark_markov_rank",
                                                     "dspark_target_layer_ids")},
            "draft_layers": layers.value, "draft_layers_source": layers.provenance,
            "components": [c.name for c in comps if c.kind == "draft"],
            "runtime_enabled": None,
            "note": "the config declares an integrated DSpark draft; the static plan counts its "
                    "draft cache whether or not a launch enables it (a serving setting)"}}
