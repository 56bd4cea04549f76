"""Resolution through the real huggingface_hub code paths against the local test hub."""

from __future__ import annotations

import json

import pytest
from hubserver.repos import FIXTURES

from kvfit.checkpoint.artifacts import choose_weight_files
from kvfit.errors import HubError, UsageError
from kvfit.hub import parse_reference, resolve

OLD, NEW = "1" * 40, "2" * 40


def _config(sha: str) -> dict:
    return json.loads((FIXTURES / "repos" / "kvfit-test--moving" / sha / "config.json").read_text())


def test_branch_resolves_to_full_sha_and_reads_there(hub):
    meta = resolve(parse_reference("kvfit-test/moving@main"))
    assert meta.source == "kvfit-test/moving"
    assert meta.origin == "hub"
    assert (meta.revision_requested, meta.revision) == ("main", OLD)
    assert meta.config == _config(OLD)
    assert f"resolved main to commit {OLD}" in meta.notes[0]


def test_default_branch_records_none_as_requested(hub):
    meta = resolve(parse_reference("kvfit-test/moving"))
    assert (meta.revision_requested, meta.revision) == (None, OLD)


def test_full_sha_is_used_as_is(hub):
    meta = resolve(parse_reference(f"kvfit-test/moving@{NEW}"))
    assert (meta.revision_requested, meta.revision) == (NEW, NEW)
    assert meta.config == _config(NEW)
    assert meta.notes[0].startswith(f"pinned to commit {NEW}")


def test_config_is_read_at_the_resolved_sha_even_if_main_moves(hub):
    """main moves right after model_info answers; config.json must still come from OLD."""
    def move_after_info(hit):
        if hit.kind == "api":
            hub.state.move_ref("kvfit-test/moving", "main", NEW)

    hub.state.hooks.append(move_after_info)
    meta = resolve(parse_reference("kvfit-test/moving"))
    assert meta.revision == OLD
    assert meta.config == _config(OLD)
    resolved = [h.rev for h in hub.state.log if h.kind == "resolve"]
    assert resolved == [OLD]
    assert hub.state.repos["kvfit-test/moving"].refs["main"] == NEW


def test_weight_bytes_are_the_served_root_shards(hub):
    meta = resolve(parse_reference("kvfit-test/tiny-qwen3"))
    served = hub.state.repos["kvfit-test/tiny-qwen3"].commits[meta.revision]
    chosen, description = choose_weight_files(meta.files, None, index=meta.safetensors_index)
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert [f.path for f in chosen] == shards
    assert sum(f.size for f in chosen) == sum(served[p].size for p in shards)
    assert "not counted: consolidated*.safetensors" in description
    assert "original/" in description and "pytorch_model*.bin" in description
    sizes = {f.path: f.size for f in meta.files}
    assert sizes == {p: b.size for p, b in served.items()}


def test_quant_config_is_read_and_a_one_shard_index_is_not(hub):
    meta = resolve(parse_reference("kvfit-test/quantized"))
    assert meta.quant_config == {"quant_method": "fp8", "kv_cache_quant_algo": "FP8"}
    assert meta.notes[0].endswith("read at that commit: config.json, hf_quant_config.json")
    assert meta.safetensors_index is None and meta.notes[1].startswith(
        "model.safetensors.index.json not read: the root shards are one complete set "
        "(model-00001..00001-of-00001.safetensors)")


def test_split_gguf_url_sums_all_parts(hub):
    url = f"{hub.url}/kvfit-test/tiny-gguf/blob/main/Q4_K_M/tiny-Q4_K_M-00001-of-00003.gguf"
    meta = resolve(parse_reference(url))
    served = hub.state.repos["kvfit-test/tiny-gguf"].commits[meta.revision]
    parts = sorted(p for p in served if p.startswith("Q4_K_M/"))
    assert meta.origin == "gguf"
    assert meta.selected_artifact == "Q4_K_M/tiny-Q4_K_M-00001-of-00003.gguf"
    chosen, _ = choose_weight_files(meta.files, meta.selected_artifact)
    assert [f.path for f in chosen] == parts
    total = sum(served[p].size for p in parts)
    assert f"GGUF weights: 3 part(s), {total:,} bytes, file type MOSTLY_Q4_K_M" in meta.notes
    assert meta.config["model_type"] == "qwen3"
    assert meta.config["num_hidden_layers"] == 4 and meta.config["head_dim"] == 16
    assert meta.tensor_bytes is None


def test_gguf_headers_of_every_part_on_demand(hub):
    ref = parse_reference("hf://kvfit-test/tiny-gguf/Q4_K_M/tiny-Q4_K_M-00002-of-00003.gguf")
    meta = resolve(ref, read_headers=True)
    assert meta.tensor_bytes["blk.3.attn_q.weight"] == 64 * 64 * 2
    assert meta.tensor_bytes["blk.3.attn_k.weight"] == 32 * 64 * 4
    assert len(meta.tensor_bytes) == 9
    assert any("all 4 layers covered" in n for n in meta.notes)


def test_gguf_repo_with_several_variants_needs_a_selection(hub):
    with pytest.raises(UsageError, match="several weight variants"):
        resolve(parse_reference("kvfit-test/tiny-gguf"))
    meta = resolve(parse_reference(f"{hub.url}/kvfit-test/tiny-gguf/tree/main/Q4_K_M"))
    assert meta.origin == "gguf" and meta.config["num_hidden_layers"] == 4


def test_safetensors_headers_give_per_tensor_bytes(hub):
    meta = resolve(parse_reference("kvfit-test/tiny-qwen3"), read_headers=True)
    assert len(meta.tensor_bytes) == 28 * 2
    assert set(meta.tensor_bytes.values()) == {4 * 8 * 2}
    assert any(n.startswith("safetensors headers: 56 tensors in 2 file(s); BF16")
               for n in meta.notes)


def test_selected_safetensors_artifact(hub):
    url = f"{hub.url}/kvfit-test/tiny-qwen3/resolve/main/original/consolidated.safetensors"
    meta = resolve(parse_reference(url))
    assert meta.selected_artifact == "original/consolidated.safetensors"
    assert any(n.startswith("selected artifact original/consolidated.safetensors") for n in
               meta.notes)


def test_artifact_missing_from_the_commit(hub):
    # one GGUF file is read without the listing: the Hub's 404 EntryNotFound says it is absent
    url = f"{hub.url}/kvfit-test/tiny-gguf/blob/main/nope-Q2_K.gguf"
    with pytest.raises(HubError, match=r"nope-Q2_K.gguf is not in kvfit-test/tiny-gguf at main "
                                       r"\(HTTP 404\)"):
        resolve(parse_reference(url))
    # a missing file of a listing-read reference (a safetensors artifact) is found in the listing
    url = f"{hub.url}/kvfit-test/tiny-qwen3/blob/main/nope.safetensors"
    with pytest.raises(HubError, match="nope.safetensors is not a file of kvfit-test/tiny-qwen3"):
        resolve(parse_reference(url))


def test_hf_token_is_sent_for_private_repos(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_good")
    meta = resolve(parse_reference("kvfit-test/private"))
    assert meta.config["model_type"] == "qwen3"


def test_local_directories_are_left_to_kvfit_source(tmp_path):
    with pytest.raises(NotImplementedError):
        resolve(parse_reference(str(tmp_path)))
