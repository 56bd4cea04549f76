"""The offline catalog: every entry valid and honest; offline and unreachable-Hub answers."""

from __future__ import annotations

import gzip
import hashlib
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from kvfit.errors import HubError
from kvfit.hub import lookup_catalog, parse_reference, resolve
from kvfit.hub.catalog import catalog_dir, catalog_file, catalog_repo_ids, load_entry
from kvfit.hub.catalog_build import build_from_hub

from conftest import validate

GLM_SHA = "aca966e4e02791568aa6a4ced368624b3d897f42"
SCHEMA = json.loads(resources.files("kvfit.hub").joinpath("catalog.schema.json").read_text())
FOLDERS = sorted(p for p in Path(str(catalog_dir())).iterdir() if p.is_dir())


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_catalog_is_large_and_spans_families():
    assert len(catalog_repo_ids()) >= 30
    types = {json.loads(catalog_file(r, "config.json")).get("model_type")
             for r in catalog_repo_ids()}
    assert len(types) >= 15
    assert "zai-org/GLM-5.3" in catalog_repo_ids()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_entry_is_valid_honest_and_matches_its_files(folder):
    entry = json.loads((folder / "entry.json").read_text())
    validate(entry, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert folder.name == entry["repo_id"].replace("/", "--", 1)
    stored = {p.name for p in folder.iterdir()} - {"entry.json"}
    assert stored == {f.get("stored_as", f["file"]) for f in entry["snapshot"]}
    for record in entry["snapshot"]:
        data = (folder / record.get("stored_as", record["file"])).read_bytes()
        if "stored_as" in record:   # a file over 1 MB, kept gzip-compressed
            assert record["stored_as"] == record["file"] + ".gz" and record["bytes"] > 1_000_000
            data = gzip.decompress(data)
        assert len(data) == record["bytes"]
        assert hashlib.sha256(data).hexdigest() == record["sha256"]
        origin = record["pinned_from"]
        if origin is not None and origin["host"] == "github.com":
            assert origin["sha256"] == record["sha256"]  # a byte-for-byte copy
    config_origin = next(f for f in entry["snapshot"] if f["file"] == "config.json")["pinned_from"]
    if entry["hf_revision"] is None:
        # pinned from a mirror: the Hub commit is unknown and no sizes are invented
        assert config_origin["host"] == "github.com"
        assert entry["checkpoint_files"] is None
    else:
        assert config_origin["commit"] == entry["hf_revision"]
    index = folder / "model.safetensors.index.json"
    expected_total = json.loads(index.read_text())["metadata"]["total_size"] if index.exists() \
        else None
    assert entry["total_size"] == expected_total


def test_lookup_mirror_entry_says_revision_unknown():
    meta = lookup_catalog("Qwen/Qwen3-32B")
    assert meta.origin == "catalog" and meta.source == "Qwen/Qwen3-32B"
    assert meta.revision is None and meta.files == ()
    assert meta.notes[0] == ("catalog snapshot (config pinned from ai-dynamo/aiconfigurator@"
                             "095f58a51c4ca8e61b66ec108d86f223f8d559ce; Hub revision unknown)")
    assert meta.config["num_hidden_layers"] == 64


def test_lookup_is_case_insensitive_and_knows_former_names():
    assert lookup_catalog("qwen/qwen3-32b").source == "Qwen/Qwen3-32B"
    assert lookup_catalog("meta-llama/Meta-Llama-3.1-70B").source == "meta-llama/Llama-3.1-70B"


def test_lookup_by_revision_only_matches_a_pinned_hub_commit():
    assert lookup_catalog("zai-org/GLM-5.3", GLM_SHA).revision == GLM_SHA
    assert lookup_catalog("zai-org/GLM-5.3", GLM_SHA[:7]).revision == GLM_SHA
    assert lookup_catalog("zai-org/GLM-5.3", "main") is not None
    assert lookup_catalog("zai-org/GLM-5.3", "b" * 40) is None
    assert lookup_catalog("Qwen/Qwen3-32B", "b" * 40) is None
    assert lookup_catalog("kvfit-test/not-there") is None


def test_glm_5_3_tensor_split_and_quantization_note():
    split = json.loads(catalog_file("zai-org/GLM-5.3", "checkpoint-tensor-split.json"))
    assert split["routed_expert_bytes"] + split["non_expert_bytes"] == 755617140416
    meta = lookup_catalog("zai-org/GLM-5.3")
    assert any("fp8 (e4m3) quantization_config" in n for n in meta.notes)
    assert load_entry("zai-org/GLM-5.3")["hf_revision"] == GLM_SHA


def test_index_total_size_is_reported():
    meta = lookup_catalog("openai/gpt-oss-20b")
    assert meta.safetensors_index["metadata"]["total_size"] == 13761264768
    assert "weights: 13,761,264,768 bytes of tensors" in " ".join(meta.notes)


def test_hf_hub_offline_answers_a_catalog_model_without_requests(hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    meta = resolve(parse_reference("Qwen/Qwen3-32B"))
    assert meta.origin == "catalog"
    assert meta.notes[0].startswith("answered from kvfit's offline catalog: offline mode")
    assert hub.state.count() == 0


def test_offline_argument(hub):
    meta = resolve(parse_reference(f"zai-org/GLM-5.3@{GLM_SHA}"), offline=True)
    assert (meta.origin, meta.revision) == ("catalog", GLM_SHA)
    assert hub.state.count() == 0


def test_offline_unknown_model_is_a_clear_error(hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError, match="neither in kvfit's offline catalog nor in its metadata"):
        resolve(parse_reference("kvfit-test/tiny-qwen3"))
    with pytest.raises(HubError, match="holds Qwen/Qwen3-32B only at an unknown Hub revision, "
                                       "and Qwen/Qwen3-32B@" + "b" * 40):
        resolve(parse_reference("Qwen/Qwen3-32B@" + "b" * 40))


def test_unreachable_hub_falls_back_to_the_catalog(dead_endpoint):
    meta = resolve(parse_reference("Qwen/Qwen3-8B"), timeout=2)
    assert meta.origin == "catalog"
    assert meta.notes[0].startswith("answered from kvfit's offline catalog: the Hub could not "
                                    f"be reached (could not connect to {dead_endpoint}")


def test_unreachable_hub_and_unknown_model(dead_endpoint):
    with pytest.raises(HubError, match="could not connect") as info:
        resolve(parse_reference("kvfit-test/tiny-qwen3"), timeout=2)
    assert "neither in kvfit's offline catalog" in info.value.message


def test_a_real_hub_404_is_not_replaced_by_the_catalog(hub):
    with pytest.raises(HubError, match="HTTP 404"):
        resolve(parse_reference("Qwen/Qwen3-32B"))


def test_offline_reuses_metadata_cached_by_an_online_run(hub, monkeypatch):
    online = resolve(parse_reference("kvfit-test/tiny-qwen3"), read_headers=True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = resolve(parse_reference("kvfit-test/tiny-qwen3"), read_headers=True)
    assert offline.origin == "hub" and offline.revision == online.revision
    assert offline.tensor_bytes == online.tensor_bytes
    assert offline.notes[0].startswith("answered from kvfit's metadata cache (the commit the "
                                       "default branch pointed at when last online)")


def test_catalog_build_from_the_test_hub(hub, tmp_path):
    folder = build_from_hub("kvfit-test/quantized", None, tmp_path)
    entry = json.loads((folder / "entry.json").read_text())
    validate(entry, SCHEMA, cls=jsonschema.Draft202012Validator)
    sha = hub.state.repos["kvfit-test/quantized"].refs["main"]
    served = hub.state.repos["kvfit-test/quantized"].commits[sha]
    assert entry["hf_revision"] == sha
    assert {f["path"]: f["size"] for f in entry["checkpoint_files"]} == \
        {p: b.size for p, b in served.items()}
    assert entry["total_size"] == 28 * 2 * 64
    assert (folder / "hf_quant_config.json").read_bytes() == served["hf_quant_config.json"].data


def test_a_repo_id_is_found_by_its_folder_and_other_spellings_by_the_index():
    """The folder named after a repo id answers with one entry read; another spelling of the
    case or a former name goes through the index of every entry (the same answers)."""
    from kvfit.hub import catalog

    index = catalog._folders()
    catalog._folders.cache_clear()
    catalog._folder_of.cache_clear()
    try:
        assert catalog._folder_of("openai/gpt-oss-20b") == "openai--gpt-oss-20b"
        assert catalog._folders.cache_info().currsize == 0          # no index was built
        assert catalog._folder_of("OpenAI/GPT-OSS-20B") == index["openai/gpt-oss-20b"]
        assert catalog._folder_of("meta-llama/Meta-Llama-3.1-8B") == \
            index["meta-llama/meta-llama-3.1-8b"] == "meta-llama--Llama-3.1-8B"
        assert catalog._folder_of("nobody/nothing") is None and catalog._folder_of("a/../b") is None
    finally:
        catalog._folder_of.cache_clear()


def test_each_folder_is_named_after_its_repo_and_siblings_are_found_by_it():
    """repo_ids_containing narrows by folder name, which is exact only because every folder is
    named after its entry's repo id; the quantized siblings found that way are the ones a test
    of every catalog id finds."""
    from kvfit.hub import catalog
    from kvfit.planner.suggest import QUANT_MARKS, siblings

    for folder in FOLDERS:
        assert json.loads((folder / "entry.json").read_text())["repo_id"].replace("/", "--", 1) \
            == folder.name

    def every(source):                       # the test over every repo id, as it was
        name = source.rsplit("/", 1)[-1].lower()
        out = []
        for rid in catalog.catalog_repo_ids():
            other = rid.rsplit("/", 1)[-1].lower()
            rest = other[len(name) + 1:] if other.startswith(name + "-") else ""
            if rest and any(mark in rest.split("-") for mark in QUANT_MARKS):
                out.append(rid)
        return sorted(out)

    sources = [json.loads((f / "entry.json").read_text())["repo_id"] for f in FOLDERS]
    found = {s: siblings(s) for s in sources}
    assert found == {s: every(s) for s in sources}
    assert sum(1 for v in found.values() if v) >= 3          # some models do have siblings
