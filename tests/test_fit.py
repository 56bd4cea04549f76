"""`kvfit fit`: every listed checkpoint is the single plan's answer with the same flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.hub.catalog import catalog_file, catalog_repo_ids

from conftest import run_cli, run_json, validate

FIXTURES = Path(__file__).parent / "fixtures" / "model-configs"
SPARK = ("--hardware", "dgx-spark", "--context", "128k")
GIB = 2**30


@pytest.fixture(scope="module")
def spark():
    """One fit of the whole catalog on one DGX Spark at 128k (about 120 plans)."""
    code, out = run_json("fit", *SPARK)
    return code, out


def test_fit_lists_catalog_checkpoints_that_fit_one_spark(spark):
    code, out = spark
    assert code == 0
    fits = out["rows"]["fits"]
    assert out["counts"]["fits"] == len(fits) >= 5
    assert out["planned"] == sum(out["counts"].values())
    assert out["plan_flags"] == ["--offline", "--hardware", "dgx-spark", "--context", "128k"]
    assert out["target"]["hardware"]["id"] == "dgx-spark"
    assert out["target"]["context_tokens"] == 131072
    families = {r["architecture"] for r in fits}
    assert len(families) >= 5                      # the list spans architectures
    ranks = [(-r["max_sequences"], r["weights"]["bytes"]) for r in fits]
    assert ranks == sorted(ranks)                  # best first: sequences, then weights
    assert all(r["status"] == "fits" and r["max_sequences"] >= 1 for r in fits)


def test_every_listed_checkpoint_is_verified_by_a_single_plan(spark):
    _, out = spark
    for row in out["rows"]["fits"]:
        code, single = run_json(row["model"], *out["plan_flags"])
        assert code == 0, row["model"]
        assert single["recommended"]["max_sequences"] == row["max_sequences"], row["model"]
        assert single["recommended"]["label"] == row["recommended"]["label"], row["model"]
        assert single["weights"]["bytes"] == row["weights"]["bytes"], row["model"]


def test_rows_that_are_not_listed_match_their_single_plan_exit(spark):
    _, out = spark
    for status, want in (("does not fit", 1), ("not judged", 5), ("refused", 2)):
        rows = out["rows"][status]
        assert rows, status
        for row in rows[:3]:
            code, _, err = run_cli(row["model"], *out["plan_flags"])
            assert code == want == row["exit_code"], (row["model"], err)
            assert row["reason"]


def test_llama_3_1_8b_on_a_spark_by_hand(spark):
    """meta-llama/Llama-3.1-8B, from its pinned config (no index: the config estimate).

    Parameters: embed 128256*4096 = 525,336,576, untied lm_head the same; per layer
    q,o 4096*4096 = 16,777,216 each, k,v 4096*(8*128) = 4,194,304 each, MLP 3*4096*14336 =
    176,160,768, two norms 8,192: 218,112,000 x 32 layers = 6,979,584,000; final norm 4,096.
    Total 8,030,261,248 parameters x 2 B (bf16) = 16,060,522,496 B.
    KV: 2 (K,V) x 8 heads x 128 x 2 B x 32 layers = 131,072 B/token; x 131,072 tokens =
    17,179,869,184 B per sequence. Budget: the spec's unified_planning_gib 121.69 GiB x 0.9.
    """
    config = json.loads(catalog_file("meta-llama/Llama-3.1-8B", "config.json"))
    assert (config["hidden_size"], config["num_hidden_layers"], config["num_key_value_heads"],
            config["intermediate_size"], config["vocab_size"]) == (4096, 32, 8, 14336, 128256)
    weights, per_seq = 16_060_522_496, 17_179_869_184
    budget = int(round(121.69 * GIB) * 0.9)
    row = next(r for r in spark[1]["rows"]["fits"] if r["model"] == "meta-llama/Llama-3.1-8B")
    assert row["weights"] == row["weights"] | {"bytes": weights, "basis": "estimate"}
    assert row["max_sequences"] == (budget - weights) // per_seq == 5
    assert row["recommended"]["label"] == "TP=1 x DP=1"


def test_quantized_siblings_name_other_catalog_entries_of_the_base_model(spark):
    rows = {r["model"]: r for rs in spark[1]["rows"].values() for r in rs}
    assert set(rows["Qwen/Qwen3-32B"]["siblings"]) == {
        "Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-32B-FP8-Static-PerTensor", "nvidia/Qwen3-32B-NVFP4"}
    assert rows["nvidia/Qwen3.6-35B-A3B-NVFP4"]["siblings"] == ["Qwen/Qwen3.6-35B-A3B"]


def test_a_local_folder_is_planned_like_its_catalog_twin(tmp_path):
    folder = FIXTURES / "meta-llama--Llama-3.1-8B"
    code, out = run_json("fit", *SPARK, "--no-catalog", str(folder))
    assert code == 0 and out["planned"] == 1
    row = out["rows"]["fits"][0]
    assert row["origin"] == "local" and row["model"] == str(folder)
    assert row["max_sequences"] == 5 and row["weights"]["bytes"] == 16_060_522_496
    assert row["siblings"] == ["meta-llama/Llama-3.1-8B"]      # its catalog twin, by name


def test_text_output_and_all(spark):
    code, out, err = run_cli("fit", *SPARK, "--family", "meta-llama", "--all")
    assert code == 0 and err == ""                 # no progress when stderr is not a terminal
    assert "meta-llama/Llama-3.1-8B" in out and "TP=1 x DP=1" in out
    assert "Refused (" in out and "declared maximum of 4,096 tokens" in out   # Llama-2
    assert "plan one with --rope-scaling" in out
    assert "Each row is one plan: kvfit MODEL --offline --hardware dgx-spark" in out
    code, out, _ = run_cli("fit", *SPARK, "--family", "nvidia", "--family", "Qwen")
    line = next(x for x in out.splitlines() if x.startswith("  nvidia/Qwen3.5-122B-A10B-NVFP4"))
    assert line.endswith("Qwen/Qwen3.5-122B-A10B (does not fit)")   # a sibling's own status


def test_family_filter_and_users():
    code, out = run_json("fit", *SPARK, "--family", "QWEN3_MOE", "--users", "3")
    assert out["target"]["target"]["concurrent_users"] == 3
    planned = {r["model"] for rs in out["rows"].values() for r in rs}
    want = {r for r in catalog_repo_ids()
            if json.loads(catalog_file(r, "config.json")).get("model_type") == "qwen3_moe"}
    assert planned == want and "Qwen/Qwen3-30B-A3B" in want


def test_none_fits_exits_1():
    code, out = run_json("fit", "--hardware", "custom:1", "--context", "32k", "--family", "qwen2")
    assert code == 1 and out["counts"]["fits"] == 0 and out["planned"] > 0


@pytest.mark.parametrize("args, words", [
    (("--context", "128k"), "needs the hardware"),
    (("--hardware", "dgx-sprak", "--context", "128k"), "Did you mean"),
    (("--hardware", "dgx-spark", "--context", "lots"), "context"),
    (("--hardware", "dgx-spark", "--context", "8k", "--family", "nosuch"), "Known:"),
    (("--hardware", "dgx-spark", "--context", "8k", "./no/such/folder"), "no such checkpoint"),
    (("--hardware", "dgx-spark"), "--context"),
])
def test_bad_input_is_one_paragraph_and_exit_2(args, words):
    code, out, err = run_cli("fit", *args)
    assert code == 2 and out == ""
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_fit_json_matches_its_schema(spark):
    import jsonschema

    schema = json.loads((Path(__file__).parents[1] / "schemas" / "fit.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validate(spark[1], schema, cls=jsonschema.Draft202012Validator)


def test_hardware_auto_is_read_once_and_planned_on_the_preset(tmp_path, monkeypatch):
    """A fake nvidia-smi reporting two RTX 5090s (PATH holds only its folder)."""
    calls = tmp_path / "calls"
    tool = tmp_path / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\necho x >> {calls}\n"
                    "echo 'NVIDIA GeForce RTX 5090, 32607, 31500'\n"
                    "echo 'NVIDIA GeForce RTX 5090, 32607, 30000'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out = run_json("fit", "--hardware", "auto", "--context", "32k", "--family", "openai")
    assert code == 0
    assert out["plan_flags"][:5] == ["--offline", "--hardware", "rtx-5090-32", "--gpus", "2"]
    assert "planned on 2 x rtx-5090-32" in out["detected_hardware"]
    assert len(calls.read_text().splitlines()) == 1
    assert {r["model"] for r in out["rows"]["fits"]} >= {"openai/gpt-oss-20b"}
