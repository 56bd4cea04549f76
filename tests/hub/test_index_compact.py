"""A large safetensors index is cached as a summary: one weight_map entry per (layer, shard)
instead of one per tensor, keeping what kvfit reads from it (total_size, the shard files and
the layers that have tensors), so a warm plan does not read megabytes back."""

from __future__ import annotations

import json

from hubserver.repos import QWEN3_CONFIG

from kvfit.checkpoint.artifacts import check_index_covers_layers
from kvfit.hub import parse_reference, resolve
from kvfit.hub.snapshot import compact_index

LAYERS = json.loads(QWEN3_CONFIG)["num_hidden_layers"]
PARTS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
         "input_layernorm", "post_attention_layernorm")


def _index(skip_layer: int | None = None) -> dict:
    """Every layer's 9 tensors (x 3 experts' worth of names), 2 shards split by layer halves."""
    weight_map = {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                  "lm_head.weight": "model-00002-of-00002.safetensors"}
    for n in range(LAYERS):
        if n == skip_layer:
            continue
        shard = f"model-0000{1 + (n >= LAYERS // 2)}-of-00002.safetensors"
        for e in range(3):
            for p in PARTS:
                weight_map[f"model.layers.{n}.e{e}.{p}.weight"] = shard
    return {"metadata": {"total_size": 123_456_789}, "weight_map": weight_map}


def test_compaction_keeps_what_kvfit_reads():
    full = _index(skip_layer=2)
    small = compact_index(full)
    assert small["metadata"] == full["metadata"]
    assert set(small["weight_map"].values()) == set(full["weight_map"].values())
    assert check_index_covers_layers(small, LAYERS) == check_index_covers_layers(full, LAYERS) == [2]
    # one entry per layer (each layer sits in one shard) + the two unlayered tensors
    assert len(small["weight_map"]) == (LAYERS - 1) + 2
    assert len(full["weight_map"]) == (LAYERS - 1) * 27 + 2


def test_the_cached_snapshot_holds_the_summary(hub, tmp_path):
    # a stale model.safetensors next to the shards: the index decides the weights, so it is read
    files = {"config.json": QWEN3_CONFIG,
             "model.safetensors.index.json": json.dumps(_index()).encode(),
             "model.safetensors": b"x" * 32,
             "model-00001-of-00002.safetensors": b"x" * 64,
             "model-00002-of-00002.safetensors": b"x" * 64}
    sha = hub.state.add_commit("kvfit-test/big-index", files)
    meta = resolve(parse_reference("kvfit-test/big-index"))
    assert meta.safetensors_index["metadata"]["total_size"] == 123_456_789
    cached = tmp_path / "hf-home" / "kvfit" / "kvfit-test--big-index" / sha / "snapshot.json"
    doc = json.loads(cached.read_text())["data"]     # {"format": ..., "data": snapshot}
    assert len(doc["index"]["weight_map"]) == LAYERS + 2
    again = resolve(parse_reference(f"kvfit-test/big-index@{sha}"))
    assert again.safetensors_index == meta.safetensors_index
