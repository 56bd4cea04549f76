"""The contributor tools on a scratch checkout (offline): `kvfit specs diff`, `specs check`'s
checks against pinned configs and cases, `specs pin`, `specs new`, and CONTRIBUTING.md's
commands followed as a newcomer would."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
PHI_COMMIT = "53ca1a97573e0a0133c7c3949a9caa84a44a2449"   # tests/architectures/phi SOURCES.yaml


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "commit.gpgsign=false", *args], check=True,
                          capture_output=True, text=True).stdout


def checkout(tmp: Path, cases=("llama", "llava"), without=()) -> Path:
    """A git repo (branch main) holding specs/, schemas/, the records and the cases of
    `cases` - what `kvfit specs` reads of a checkout."""
    root = tmp / "repo"
    skip = shutil.ignore_patterns(*(f"{s}.yaml" for s in without))
    shutil.copytree(ROOT / "specs", root / "specs", ignore=skip)
    shutil.copytree(ROOT / "schemas", root / "schemas")
    for spec in cases:
        shutil.copytree(ROOT / "tests" / "architectures" / spec,
                        root / "tests" / "architectures" / spec)
    probe = root / "tests" / "engine_probe"
    probe.mkdir(parents=True)
    for name in ("vllm-0.33.0-kv.jsonl", "sglang-0.5.23-kv.jsonl"):
        shutil.copy(ROOT / "tests" / "engine_probe" / name, probe / name)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    return root


def _edit(path: Path, old: str, new: str) -> int:
    """Replace `old` (present once) and return the 1-based line it is on."""
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return text[:text.index(old)].count("\n") + 1


def test_diff_lists_every_llama_case_and_the_vllm_disagreement(tmp_path, monkeypatch):
    root = checkout(tmp_path)
    monkeypatch.chdir(root)
    code, out, err = run_cli("specs", "diff", "HEAD")
    assert (code, err) == (0, ""), err
    assert "no change" in out
    _edit(root / "specs" / "architectures" / "llama.yaml",
          '"2 * kv_heads * head_dim * kv_bytes"', '"2 * kv_heads * (head_dim + 8) * kv_bytes"')
    code, out, err = run_cli("specs", "diff", "HEAD")
    assert code == 1, err
    # Llama-3.1 8B / 70B (8 KV heads, head_dim 128, bf16): 2 x 8 x 128 x 2 = 4,096 B per token
    # per layer before, 2 x 8 x (128 + 8) x 2 = 4,352 B after: +256 / 4,096 = +6.25 %.
    for case in ("llama/llama31_8b_128k_bf16", "llama/llama31_70b_h100x8_32k_bf16"):
        assert f"{case}: kv 4,096 -> 4,352 B/token/layer (+6.25 %)" in out
    # 32 KV heads (Llama-2-7B; llava-1.5-7b's default Llama geometry): 2 x 32 x 128 x 2 =
    # 16,384 -> 2 x 32 x 136 x 2 = 17,408 (+6.25 %).
    for case in ("llama/llama2_7b_mha_4k_bf16", "llava/llava15_7b_4k",
                 "llava/llava15_7b_h100x8_tp_1_2_8"):
        assert f"{case}: kv 16,384 -> 17,408 B/token/layer (+6.25 %)" in out
    # FP8 KV (1 B): 2 x 8 x 128 = 2,048 -> 2 x 8 x 136 = 2,176 (+6.25 %).
    assert ("llama/llama31_70b_fp8_kv_from_checkpoint: kv 2,048 -> 2,176 B/token/layer "
            "(+6.25 %)") in out
    # 8B at 128k: 32 layers x 4,352 B x 131,072 = 18,253,611,008 B (was 17,179,869,184).
    assert "per sequence 17,179,869,184 -> 18,253,611,008 B (+6.25 %)" in out
    # The recorded vLLM 0.33 plans of the 4 pinned llama dirs and llava-1.5-7b, whose text
    # model is llama's (5 dirs x TP 1, 2, 8 x auto, fp8 = 30 rows) agreed with kvfit before
    # the change and no longer do.
    assert "vLLM 0.33.0: 30 recorded points; agreed before 30, agree now 0" in out
    assert "disagrees now (num_blocks kvfit" in out
    code, out, _ = run_cli("specs", "diff", "HEAD", "--json")
    data = json.loads(out)
    assert code == 1 and data["changed"] and data["changed_specs"] == ["llama", "llava"]
    assert {m["id"] for m in data["models"]} == {
        "llama/llama31_8b_128k_bf16", "llama/llama31_70b_h100x8_32k_bf16",
        "llama/llama2_7b_mha_4k_bf16", "llama/llama31_70b_fp8_kv_from_checkpoint",
        "llava/llava15_7b_4k", "llava/llava15_7b_h100x8_tp_1_2_8"}


def test_diff_of_spec_folders_and_bad_sides(tmp_path, monkeypatch):
    root = checkout(tmp_path, cases=("phi",))
    before = tmp_path / "before"
    shutil.copytree(root / "specs", before / "specs")
    monkeypatch.chdir(root)
    _edit(root / "specs" / "architectures" / "phi.yaml", "summary: Phi-1/1.5/2 decoder",
          "summary: The Phi-1/1.5/2 decoder")
    code, out, _ = run_cli("specs", "diff", str(before / "specs"))
    # The file changed but no planned number did: "no change", exit 0.
    assert code == 0 and "no change (no planned model moved)" in out
    code, _, err = run_cli("specs", "diff", "no-such-ref")
    assert code == 2 and "no-such-ref" in err and "Traceback" not in err


def test_check_reports_config_root_alias_and_layer_gap_at_their_lines(tmp_path, monkeypatch):
    root = checkout(tmp_path, cases=("llama", "llava", "phi"))
    monkeypatch.chdir(root)
    specs = root / "specs" / "architectures"
    line = _edit(specs / "llava.yaml", "config_root: text_config", "config_root: text_confg")
    code, out, _ = run_cli("specs", "check", "specs/architectures/llava.yaml")
    assert code == 2
    assert "error[KV130]: config_root 'text_confg' is in none of the 1 pinned config(s)" in out
    assert f"--> specs/architectures/llava.yaml:{line}:" in out
    line = _edit(specs / "phi.yaml", "q_heads: {from: [num_attention_heads]",
                 "q_heads: {from: [num_attention_head]")
    code, out, err = run_cli("specs", "check", "specs/architectures/phi.yaml")
    assert code == 0, out           # a warning, not an error (phi-2 has the field anyway)
    assert ("warning[KV131]: field 'q_heads': no pinned config has 'num_attention_head'"
            in err)
    assert f"--> specs/architectures/phi.yaml:{line}:" in err
    assert "did you mean 'num_attention_heads'?" in err
    _edit(specs / "phi.yaml", "num_attention_head]", "num_attention_heads]")
    _edit(specs / "phi.yaml", "all: {all: true}", 'all: {where: "i < layers - 2"}')
    line = (specs / "phi.yaml").read_text().splitlines().index("partition:") + 1
    code, out, _ = run_cli("specs", "check", "specs/architectures/phi.yaml")
    assert code == 2
    # phi-2 has 32 layers (0..31); `i < 30` leaves layers 30 and 31 to no set.
    assert "error[KV134]: microsoft--phi-2: layer 30 matches none of the layer kinds" in out
    assert f"--> specs/architectures/phi.yaml:{line}:" in out


def test_check_names_class_defaults_and_flags_stale_derivations(tmp_path, monkeypatch):
    root = checkout(tmp_path)
    monkeypatch.chdir(root)
    code, out, err = run_cli("specs", "check", "specs/architectures/llava.yaml")
    assert code == 0
    # llava-1.5-7b's text_config omits num_hidden_layers: LlamaConfig's default 32.
    assert ("note[KV133]: llava-hf--llava-1.5-7b-hf: layers = 32 is not in the config: it is "
            "the class default (transformers LlamaConfig default num_hidden_layers=32)") in err
    cases = root / "tests" / "architectures" / "llama" / "cases.yaml"
    line = _edit(cases, "bytes_per_entry: 4096\n", "bytes_per_entry: 4352\n")  # comment kept
    code, out, _ = run_cli("specs", "check", "specs/architectures/llama.yaml")
    assert code == 2
    # The comment above still derives 4,096 B (and 17,179,869,184 B for the sequence).
    assert ("error[KV135]: case llama31_8b_128k_bf16: state.components[name=kv].bytes_per_entry "
            "expects 4,352, but the derivation above it arrives at") in out
    assert f"--> tests/architectures/llama/cases.yaml:{line}:" in out


def test_check_plan_flags_a_wrong_expected_value(tmp_path, monkeypatch):
    root = checkout(tmp_path, cases=("phi",))
    monkeypatch.chdir(root)
    cases = root / "tests" / "architectures" / "phi" / "cases.yaml"
    line = _edit(cases, "layouts[tp=8].max_sequences: 909", "layouts[tp=8].max_sequences: 990")
    code, out, _ = run_cli("specs", "check", "--plan", "specs/architectures/phi.yaml")
    assert code == 2
    assert ("case phi_2_h100x8_tp_1_2_8: layouts[tp=8].max_sequences expects 990, the plan "
            "gives 909") in out
    assert f"--> tests/architectures/phi/cases.yaml:{line}:" in out


def test_extends_an_unknown_spec_is_located(tmp_path, monkeypatch):
    root = checkout(tmp_path)
    monkeypatch.chdir(root)
    line = _edit(root / "specs" / "architectures" / "llava.yaml", "extends: llama",
                 "extends: lama")
    code, out, _ = run_cli("specs", "check", "specs/architectures/llava.yaml")
    assert code == 2 and "error[KV127]: `extends: lama`: no spec lama.yaml" in out
    assert f"--> specs/architectures/llava.yaml:{line}:" in out


def test_pin_refuses_what_it_cannot_state(tmp_path, monkeypatch):
    root = checkout(tmp_path, cases=())
    monkeypatch.chdir(root)
    src = tmp_path / "phi-2"
    src.mkdir()
    shutil.copy(ROOT / "tests/architectures/phi/configs/microsoft--phi-2/config.json", src)
    code, _, err = run_cli("specs", "pin", "phi", str(src), "--source-commit", "53ca1a9")
    assert code == 2 and "not a full 40-character git sha" in err
    code, _, err = run_cli("specs", "pin", "phi", str(tmp_path / "nothing"))
    assert code == 2 and "no such file or folder" in err and "Traceback" not in err
    code, out, _ = run_cli("specs", "pin", "phi", str(src))
    assert code == 0
    sources = (root / "tests/architectures/phi/configs/phi-2/SOURCES.yaml").read_text()
    # No provenance given: none is written but the file's own sha256 (sha256sum of phi-2's
    # config.json, as tests/architectures/phi/configs/microsoft--phi-2/SOURCES.yaml records).
    assert "f2c5e62a1a93e5d81c19de3d4d4bcb1c7bf15cbd3158fca8ece8ede1c940efb9" in sources
    assert "source: not stated" in sources and "source_commit" not in sources


def _console_commands(text: str) -> list[str]:
    blocks = re.findall(r"```console\n(.*?)```", text, re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_contributing_walkthrough_adds_phi(tmp_path, monkeypatch):
    """CONTRIBUTING.md's kvfit commands, in order, on a checkout without phi: pin, new, the
    hand arithmetic, check --plan, diff main."""
    commands = [c for c in _console_commands((ROOT / "CONTRIBUTING.md").read_text())
                if c.startswith("uv run kvfit ")]
    assert [c.split()[4] for c in commands] == ["pin", "new", "check", "diff"]
    root = checkout(tmp_path, cases=(), without=("phi",))
    monkeypatch.chdir(root)
    src = tmp_path / "src" / "phi-2"          # the folder a newcomer has: config and index
    src.mkdir(parents=True)
    for name in ("config.json", "model.safetensors.index.json"):
        shutil.copy(ROOT / "tests/architectures/phi/configs/microsoft--phi-2" / name, src)
    results = {}
    for command in commands:
        argv = command.replace("~/src/phi-2", str(src)).split()[4:]
        if argv[0] == "check":                # the hand arithmetic comes before the check
            cases = root / "tests/architectures/phi/cases.yaml"
            text = cases.read_text()
            assert text.count("TODO") == 4
            text = text.replace(
                "    # TODO: per token per layer: 2 (K,V) x kv_heads x head_dim x bytes = ? B\n"
                "    state.components[name=kv].bytes_per_entry: TODO\n",
                "    # 2 (K,V) x 32 KV heads x (2560 / 32 = 80) x 2 B (float16) = 10,240 B\n"
                "    state.components[name=kv].bytes_per_entry: 10240\n")
            text = text.replace(
                "    # TODO: layers x per-layer bytes x 2,048 tokens = ? B\n"
                "    state.bytes_per_sequence: TODO\n",
                "    # 32 layers x 10,240 B x 2,048 tokens = 671,088,640 B\n"
                "    state.bytes_per_sequence: 671088640\n")
            cases.write_text(text)
        results[argv[0]] = run_cli("specs", *argv)
    assert results["pin"][0] == 0 and results["new"][0] == 0
    sources = (root / "tests/architectures/phi/configs/microsoft--phi-2/SOURCES.yaml").read_text()
    assert f"source_commit: {PHI_COMMIT}" in sources and "hf_repo: microsoft/phi-2" in sources
    code, out, err = results["check"]
    assert code == 0, out + err
    assert "ok: 1 architecture spec" in out and "every pinned case planned as expected" in out
    code, out, err = results["diff"]
    # main has no phi spec: its case was refused there and is planned now.
    assert code == 1, err
    assert "specs: phi" in out and "phi/phi_2_2048: answer:" in out


def test_new_for_a_wrapper_extends_the_text_models_spec(tmp_path, monkeypatch):
    root = checkout(tmp_path, cases=(), without=("llava",))
    monkeypatch.chdir(root)
    src = ROOT / "tests/architectures/llava/configs/llava-hf--llava-1.5-7b-hf"
    code, out, err = run_cli("specs", "new", "llava", "--from", str(src))
    assert code == 0, err
    spec = (root / "specs/architectures/llava.yaml").read_text()
    assert "extends: llama" in spec and "config_root: text_config" in spec
    # llava-1.5-7b's text_config has no num_hidden_layers, num_attention_heads or hidden_size:
    # the skeleton asks for LlamaConfig's defaults rather than guessing them.
    for line in ("#   layers: from num_hidden_layers", "#   q_heads: from num_attention_heads",
                 "#   hidden: from hidden_size"):
        assert line in spec
    code, out, _ = run_cli("specs", "new", "llava", "--from", str(src))
    assert code == 2 and "already exists" in out + _
