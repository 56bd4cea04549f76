"""A stated RoPE scaling raises the declared maximum context (factor x original), is recorded
in the report and reaches the launch command; without it a too-long context says how to state
it. Spellings: --rope-scaling, vLLM --hf-overrides, SGLang --json-model-override-args, presets.

Qwen3-32B (pinned catalog config): max_position_embeddings 40,960, 64 layers, 8 KV heads of
head_dim 128, no rope_scaling of its own.
"""

from __future__ import annotations

import json
import shlex

import pytest

from conftest import run_cli, run_json, validate

YARN = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 32768}
ROPE = json.dumps(YARN)
# The brief's first quick-start example, with its scaling stated.
BRIEF = ("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "128k",
         "--kv-dtype", "fp8", "--offline")
SCALED = 4 * 32768            # factor x original_max_position_embeddings = 131,072 tokens


def _clean(code, err, needle):
    assert code == 2, err
    assert needle in err, err
    assert "Traceback" not in err and err.count("\n") == 1, err


def test_brief_example_works_with_its_scaling_stated():
    code, r = run_json(*BRIEF, "--rope-scaling", ROPE)
    assert code == 0 and r["fits"] is True
    assert r["context_tokens"] == 128 * 1024 == SCALED
    assert r["max_context_tokens"] == SCALED and r["hypothetical"] is False
    rope = r["rope_scaling"]
    assert rope["stated"] == YARN and rope["source"] == "user: --rope-scaling"
    assert (rope["declared_max_tokens"], rope["original_max_position_embeddings"],
            rope["factor"], rope["max_context_tokens"]) == (40960, 32768, 4, SCALED)
    assert set(rope["engines"]) == {"vllm", "sglang"}
    assert "model.py:2599-2634" in rope["engines"]["vllm"]
    assert "common.py:677-694" in rope["engines"]["sglang"]
    # fp8 KV: 64 layers x 8 heads x 128 x 2 (K and V) x 1 B = 131,072 B per token, and
    # x 131,072 tokens = 17,179,869,184 B (16 GiB) per sequence
    assert r["state"]["bytes_per_sequence"] == 64 * 8 * 128 * 2 * 131072


def test_text_verdict_names_the_scaling():
    code, out, _ = run_cli(*BRIEF, "--rope-scaling", ROPE)
    head = out.splitlines()[0]
    assert code == 0
    assert "131,072 tokens" in head
    assert "RoPE yarn x4 (user: --rope-scaling): maximum 40,960 -> 131,072" in head


def test_without_scaling_the_refusal_says_how_to_state_it():
    code, out, err = run_cli(*BRIEF)
    _clean(code, err, "exceeds the checkpoint's declared maximum of 40,960")
    # 131,072 / 40,960 = 3.2, so the smallest whole factor over the declared maximum is 4
    assert ("--rope-scaling '{\"rope_type\":\"yarn\",\"factor\":4,"
            "\"original_max_position_embeddings\":40960}'") in err
    assert "--hf-overrides" in err and "--json-model-override-args" in err
    assert "--allow-context-overflow" in err


def test_beyond_the_raised_maximum_is_still_refused():
    code, _, err = run_cli(*BRIEF[:6], "256k", "--offline", "--rope-scaling", ROPE)
    _clean(code, err, "exceeds the checkpoint's declared maximum of 131,072")
    assert "Raise the factor" in err


def test_default_context_is_the_raised_maximum_and_original_defaults_to_declared():
    # no original: factor 2 x the declared 40,960 = 81,920
    code, r = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline",
                       "--rope-scaling", '{"rope_type": "yarn", "factor": 2}')
    assert code in (0, 1)
    assert r["context_tokens"] == r["max_context_tokens"] == 2 * 40960
    assert r["rope_scaling"]["original_max_position_embeddings"] == 40960
    assert "RoPE yarn factor 2 x original 40,960 = 81,920" in r["context_source"]


def test_a_scaling_below_the_declared_maximum_keeps_it():
    # 1.0 x 32,768 = 32,768 < 40,960: the declared maximum stands, with a warning
    code, r = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline", "--rope-scaling",
                       '{"rope_type": "yarn", "factor": 1, "original_max_position_embeddings": '
                       '32768}')
    assert r["max_context_tokens"] == 40960
    assert any("the declared maximum stands" in w for w in r["warnings"])


@pytest.mark.parametrize("flag,text", [
    ("--hf-overrides", json.dumps({"rope_scaling": YARN})),
    ("--json-model-override-args", json.dumps({"rope_scaling": YARN})),
])
def test_engine_spellings_give_the_same_plan(flag, text):
    _, base = run_json(*BRIEF, "--rope-scaling", ROPE)
    _, other = run_json(*BRIEF, flag, text)
    assert other["rope_scaling"]["source"] == f"user: {flag}"
    for key in ("context_tokens", "max_context_tokens", "layouts", "recommended", "fits"):
        assert other[key] == base[key]
    # the same knob stated twice with the same value is fine
    assert run_json(*BRIEF, "--rope-scaling", ROPE, flag, text)[0] == 0


def test_two_spellings_with_different_values_exit_2_naming_both():
    other = json.dumps({"rope_scaling": {"rope_type": "yarn", "factor": 2}})
    code, _, err = run_cli(*BRIEF, "--rope-scaling", ROPE, "--hf-overrides", other)
    _clean(code, err, "set the same knob to different values")
    assert "--rope-scaling" in err and "--hf-overrides" in err


@pytest.mark.parametrize("args,needle", [
    (("--rope-scaling", "{bad"), "is not valid JSON"),
    (("--rope-scaling", "[1]"), "must be a JSON object"),
    (("--rope-scaling", '{"factor": 4}'), "needs a rope_type"),
    (("--rope-scaling", '{"rope_type": "yarn", "factor": 0.5}'), "factor must be a number"),
    (("--rope-scaling", '{"rope_type": "yarn", "factor": "4"}'), "factor must be a number"),
    (("--rope-scaling", '{"rope_type": "yarn", "factor": 4, '
      '"original_max_position_embeddings": -1}'), "must be a whole number"),
    (("--hf-overrides", '{"num_hidden_layers": 2}'), "sets num_hidden_layers"),
    (("--hf-overrides", '{"rope_theta": 1}'), "kvfit models only rope_scaling"),
    (("--json-model-override-args", "{}"), "reads only a rope_scaling object"),
])
def test_bad_scaling_is_one_paragraph(args, needle):
    code, _, err = run_cli(*BRIEF, *args)
    _clean(code, err, needle)


def _override(cmd: str, option: str) -> dict:
    words = shlex.split(cmd)
    return json.loads(words[words.index(option) + 1])


@pytest.mark.parametrize("engine,option,length", [
    ("vllm", "--hf-overrides", "--max-model-len"),
    ("sglang", "--json-model-override-args", "--context-length"),
])
def test_print_command_passes_the_scaling_on(engine, option, length):
    code, r = run_json(*BRIEF, "--rope-scaling", ROPE, "--print-command", engine)
    cmd = r["engine_command"]["launch"]
    assert code == 0
    # both engines take max_position_embeddings as the maximum when the YaRN scaling names its
    # original length, so the override carries the raised maximum beside rope_scaling
    assert _override(cmd, option) == {"rope_scaling": YARN, "max_position_embeddings": SCALED}
    words = shlex.split(cmd)
    assert words[words.index(length) + 1] == str(SCALED)


def test_print_command_without_scaling_has_no_override():
    _, r = run_json(*BRIEF[:6], "32k", "--offline", "--print-command", "vllm")
    assert "--hf-overrides" not in r["engine_command"]["launch"]
    assert "rope_scaling" not in r


def test_an_unchecked_engine_version_says_what_to_pass():
    code, r = run_json(*BRIEF, "--rope-scaling", ROPE, "--print-command", "vllm",
                       "--engine", "vllm@0.19.0")
    cmd = r["engine_command"]
    assert "--hf-overrides" not in cmd["launch"]
    assert any("no checked spelling for the stated RoPE scaling" in n for n in cmd["notes"])


@pytest.mark.parametrize("table", [
    "[rope_scaling]\nrope_type = \"yarn\"\nfactor = 4\noriginal_max_position_embeddings = 32768\n",
    "rope_scaling = {rope_type = \"yarn\", factor = 4, original_max_position_embeddings = 32768}\n",
])
def test_presets_state_scaling_as_a_table(tmp_path, table):
    preset = tmp_path / "q.toml"
    root = ('model = "Qwen/Qwen3-32B"\nhardware = "h100-80"\ngpus = 8\ncontext = "128k"\n'
            'kv_dtype = "fp8"\noffline = true\n')
    # an inline table is a root key; a [table] must follow the root keys
    preset.write_text(root + table)
    code, r = run_json(str(preset))
    assert code == 0 and r["max_context_tokens"] == SCALED
    assert r["rope_scaling"]["source"] == "preset rope_scaling"
    # the command line overrides the preset
    code, r = run_json(str(preset), "--rope-scaling", '{"rope_type": "yarn", "factor": 8}')
    assert r["rope_scaling"]["source"] == "user: --rope-scaling"
    assert r["max_context_tokens"] == 8 * 40960


def test_a_bad_preset_scaling_is_refused(tmp_path):
    preset = tmp_path / "q.toml"
    preset.write_text('model = "Qwen/Qwen3-32B"\n[rope_scaling]\nfactor = 4\n')
    code, _, err = run_cli(str(preset), "--offline")
    _clean(code, err, f"preset rope_scaling ({preset.resolve()}:2) needs a rope_type")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_engine_capacity_admits_the_raised_maximum(engine):
    """Without scaling (only --allow-context-overflow) vLLM refuses 131,072 > its derived
    40,960; with the stated scaling the engine's own maximum is the raised one."""
    code, r = run_json(*BRIEF, "--rope-scaling", ROPE, "--engine", engine)
    assert code == 0 and r["capacity_model"]["name"] == engine
    assert r["recommended"]["max_sequences"] > 0
    if engine == "vllm":
        code, r = run_json(*BRIEF, "--allow-context-overflow", "--engine", "vllm")
        assert code == 1 and r["hypothetical"] is True
        assert "greater than the derived max_model_len (40960)" in r["layouts"][0]["reason"]


def test_a_config_scaling_is_replaced_and_said_so():
    # Llama-3.1-8B declares llama3 x8 over 8,192 with max_position_embeddings 131,072; a
    # stated yarn x2 without an original counts from the declared 131,072: 262,144 tokens
    code, r = run_json("meta-llama/Llama-3.1-8B", "--hardware", "h100-80", "--offline",
                       "--rope-scaling", '{"rope_type": "yarn", "factor": 2}',
                       "--print-command", "sglang")
    assert r["max_context_tokens"] == 2 * 131072
    assert any("The config already declares rope_scaling" in w for w in r["warnings"])
    override = _override(r["engine_command"]["launch"], "--json-model-override-args")
    # the original is written out, so SGLang's key merge cannot keep the config's 8,192
    assert override["rope_scaling"]["original_max_position_embeddings"] == 131072


def test_rope_reports_validate_against_the_schema():
    from pathlib import Path

    schema = json.loads((Path(__file__).parents[1] / "schemas" / "report.schema.json")
                        .read_text())
    for extra in ((), ("--print-command", "sglang"), ("--engine", "vllm")):
        code, r = run_json(*BRIEF, "--rope-scaling", ROPE, *extra)
        validate(r, schema)
