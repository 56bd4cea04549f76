"""`kvfit catalog list|show`, the known-missing list, and what an offline miss says."""

from __future__ import annotations

import pytest

from kvfit.hub.catalog import catalog_repo_ids, load_entry
from kvfit.hub.catalog_info import base_name, missing_ids, nearest_ids

from conftest import run_cli, run_json, validate


@pytest.fixture(scope="module")
def listing():
    return run_json("catalog", "list")


def test_list_holds_every_entry_with_its_basis_and_revision(listing):
    code, out = listing
    assert code == 0
    entries = {e["repo_id"]: e for e in out["entries"]}
    assert sorted(entries) == catalog_repo_ids()
    for rid, e in entries.items():
        entry = load_entry(rid)
        if entry["total_size"] is not None:          # known only from a real index
            assert e["weights"] == e["weights"] | {"basis": "index", "bytes": entry["total_size"]}
        else:
            assert e["weights"]["basis"] != "index"
        if entry["hf_revision"] is None:
            assert e["revision"] == "Hub revision unknown" and e["hf_revision"] is None
        for f in e["files"]:
            assert f["pinned_from"] is None or f["pinned_from"]["commit"] in f["source"]


def test_brief_checkpoints_are_listed_or_named_missing(listing):
    _, out = listing
    ids = {e["repo_id"] for e in out["entries"]}
    # the product brief's checkpoints that have a real pinned config
    assert {"Qwen/Qwen3-32B", "zai-org/GLM-5.3", "nvidia/MiniMax-M3-NVFP4", "openai/gpt-oss-120b",
            "deepseek-ai/DeepSeek-V4-Flash", "moonshotai/Kimi-K3"} <= ids
    missing = {m["id"] for m in out["missing"]}
    assert {"deepseek-ai/DeepSeek-V4-Flash-DSpark", "thinkingmachines/Inkling-NVFP4"} <= missing
    assert not missing & ids
    assert {m["id"] for m in missing_ids()} == missing


def test_missing_ids_are_named_in_the_catalog_readme():
    from kvfit.hub.catalog import catalog_dir

    readme = catalog_dir().joinpath("README.md").read_text()
    for m in missing_ids():
        assert m["id"] in readme


def test_list_text_and_family(listing):
    code, out, err = run_cli("catalog", "list", "--family", "Qwen")
    assert code == 0 and err == ""
    rows = [line for line in out.splitlines()[2:] if line.strip()]
    assert rows and all(line.split()[0].startswith("Qwen/") for line in rows)
    code, out, err = run_cli("catalog", "list", "--family", "nosuch")
    assert code == 2 and "nosuch" in err and err.count("\n") == 1


def test_show_names_sources_and_siblings():
    code, out = run_json("catalog", "show", "qwen/qwen3-32b-fp8")       # any letter case
    assert code == 0 and out["repo_id"] == "Qwen/Qwen3-32B-FP8"
    assert set(out["siblings"]) == {"Qwen/Qwen3-32B", "Qwen/Qwen3-32B-FP8-Static-PerTensor",
                                    "nvidia/Qwen3-32B-NVFP4"}
    assert out["quantization_summary"]["weight_algorithm"] == "fp8-block"
    config = next(f for f in out["files"] if f["file"] == "config.json")
    assert config["pinned_from"]["host"] == "github.com"
    assert out["revision"] == "Hub revision unknown"
    code, text, _ = run_cli("catalog", "show", "Qwen/Qwen3-32B-FP8")
    assert "pinned from github.com/" in text and "Hub revision unknown" in text


def test_show_a_compressed_entry():
    code, out = run_json("catalog", "show", "nvidia/MiniMax-M3-NVFP4")
    assert code == 0 and out["model_type"] == "minimax_m3_vl"
    sizes = {f["file"]: f["bytes"] for f in out["files"]}
    assert sizes == {"config.json": 3087083, "hf_quant_config.json": 3081956}  # SOURCE.txt


def test_show_unknown_id_exits_2_with_did_you_mean():
    code, out, err = run_cli("catalog", "show", "Qwen/Qwen3-33B")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "Did you mean Qwen/Qwen3-32B" in err
    code, out, err = run_cli("catalog", "show", "thinkingmachines/Inkling-NVFP4")
    assert code == 2 and "known to be missing" in err


def test_offline_miss_names_the_nearest_ids_and_why_missing():
    code, out, err = run_cli("MiniMaxAI/MiniMax-M3", "--offline")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "nvidia/MiniMax-M3-NVFP4" in err and "known to be missing" in err and "CURATED" in err
    code, _, err = run_cli("deepseek-ai/DeepSeek-V4-Flash-DSpark", "--offline")
    assert code == 2 and "Nearest catalog ids: deepseek-ai/DeepSeek-V4-Flash" in err


def test_nearest_ids_and_base_names():
    assert nearest_ids("Qwen3-32B")[:2] == ["Qwen/Qwen3-32B", "Qwen/Qwen3-32B-FP8"]
    assert base_name("RedHatAI/DeepSeek-V4-Flash-NVFP4-FP8") == "deepseek-v4-flash"
    assert base_name("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic") == \
        "llama-4-scout-17b-16e-instruct"


def test_brief_minimax_m3_two_spark_json_example_runs_offline():
    """The brief's `kvfit nvidia/MiniMax-M3-NVFP4 --system dgx-spark --nodes 2 --tp 2
    --context 128k --json`, answered from the catalog. KV from the pinned text_config:
    2 (K,V) x 4 kv heads x 128 head_dim x 2 B (bf16) = 2,048 B per token and layer; x 60
    layers x 131,072 tokens = 16,106,127,360 B per sequence."""
    code, out = run_json("nvidia/MiniMax-M3-NVFP4", "--system", "dgx-spark", "--nodes", "2",
                         "--tp", "2", "--context", "128k", "--offline")
    assert code in (0, 1, 5)                  # 5 while minimax_m3 has no weight estimate
    assert out["model"]["origin"] == "catalog" and out["hardware"]["nodes"] == 2
    kv = next(c for c in out["state"]["components"] if c["name"] == "kv")
    assert kv["bytes_per_sequence"] == 16_106_127_360


def test_json_matches_its_schema(listing):
    import json
    from pathlib import Path

    import jsonschema

    path = Path(__file__).parents[1] / "schemas" / "catalog-list.schema.json"
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validate(listing[1], schema, cls=jsonschema.Draft202012Validator)
    _, one = run_json("catalog", "show", "zai-org/GLM-5.3")
    entry = schema | {"$ref": "#/$defs/entry"}
    for key in ("required", "properties", "additionalProperties"):
        entry.pop(key)
    validate(one, entry, cls=jsonschema.Draft202012Validator)
