"""What a new user trips on (issue 27, item 4): --offline on every subcommand, silent ignores
said, no internal wording in messages, the packaged man page/examples/docs, a clean repo root,
the scale-out boundary in --list-systems and the DSpark declaration in JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
DSPARK = ROOT / "tests/architectures/deepseek_v4/configs/synthetic/synthetic--deepseek-v4-flash-dspark.json"
V4 = ROOT / "tests/architectures/deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash"


@pytest.mark.parametrize("argv", [
    ("fit", "--hardware", "dgx-spark", "--context", "8k", "--family", "openai"),
    ("catalog", "list", "--family", "openai"),
    ("catalog", "show", "openai/gpt-oss-20b"),
    ("specs", "list"),
    ("specs", "check", str(ROOT / "specs/architectures/qwen3.yaml")),
    ("openai/gpt-oss-20b", "--hardware", "rtx-5090-32", "--context", "8k"),
], ids=lambda a: " ".join(a[:2]))
def test_offline_and_json_are_accepted_and_exit_0(argv):
    code, out, err = run_cli(*argv, "--offline")
    assert code == 0, err
    code, out, err = run_cli(*argv, "--offline", "--json")
    assert code == 0, err
    json.loads(out)


def test_audit_takes_offline(tmp_path):
    audit = tmp_path / "a.toml"
    audit.write_text('[audit]\nname = "one"\noffline = false\n[[models]]\nfamily = "qwen3"\n'
                     'model = "Qwen/Qwen3-32B"\ncontexts = ["32k"]\n[[hardware]]\n'
                     'preset = "h100-80"\ncounts = [1]\n')
    code, out, err = run_cli("audit", str(audit), "--offline", "--json")
    assert code in (0, 1), err                       # answered: the file's offline = false lost
    assert json.loads(out)["offline"] is True


@pytest.mark.parametrize("argv", [("hardware", "detect"), ("explain-log", "no-such.log"),
                                  ("calibrate", "no-such.toml")])
def test_offline_is_never_an_unknown_argument(argv):
    _, _, err = run_cli(*argv, "--offline")
    assert "unrecognized arguments" not in err


def test_index_dtype_on_a_model_without_an_indexer_is_said():
    _, r = run_json("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--context", "8k",
                    "--index-dtype", "fp8")
    assert "--index-dtype fp8 is not used: qwen3 keeps no sparse-indexer keys." in r["warnings"]


def test_the_resolved_index_format_is_on_the_first_line():
    code, text, _ = run_cli(str(V4), "--gpus", "8", "--context", "32k", "--weight-gib", "150",
                            "--hardware", "b200-180", "--index-dtype", "fp4")
    assert text.splitlines()[0].endswith("| KV bf16, index mxfp4")


def test_no_context_says_the_declared_maximum_was_taken():
    _, text, _ = run_cli("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80")
    # Qwen3-32B config.json: max_position_embeddings 40960
    assert "| 40,960 tokens (the declared maximum: no --context given) |" in text.splitlines()[0]
    _, text, _ = run_cli("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--context", "8k")
    assert "declared maximum" not in text.splitlines()[0]


def test_no_internal_wording_in_kvfit():
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "kvfit").rglob("*")
            if p.is_file() and p.suffix in (".py", ".yaml", ".json", ".md", ".txt")
            and "the brief" in p.read_text("utf-8", errors="replace").lower()]
    assert hits == []
    readme = (ROOT / "README.md").read_text("utf-8").lower()
    assert "the brief" not in readme and "brief's" not in readme
    code, out, _ = run_cli("catalog", "list")
    assert "brief" not in out.lower()


def test_the_repo_root_holds_no_stray_outputs():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout: " + tracked.stderr.strip()[:100])
    top = {line.split("/")[0] for line in tracked.stdout.splitlines()}
    assert top <= {".ci", ".gitignore", "CONTRIBUTING.md", "README.md", "bench", "docs",
                   "examples", "kvfit", "man", "pyproject.toml", "schemas", "specs", "tests",
                   "uv.lock"}, top


def test_list_systems_shows_the_scale_out_boundary():
    code, out, _ = run_cli("--list-systems")
    lines = out.splitlines()
    assert code == 0 and "scale-out boundary" in lines[0]
    at = next(i for i, x in enumerate(lines) if x.startswith("gb200-nvl72 "))
    assert lines[at + 1].split(":")[0].strip() == "scale-out beyond 72 GPUs"
    at = next(i for i, x in enumerate(lines) if x.startswith("dgx-spark "))
    assert lines[at + 1].split(":")[0].strip() == "scale-out beyond 1 GPU"


def test_dspark_json_names_the_declaration_and_no_runtime_claim():
    _, r = run_json(str(DSPARK), "--context", "1m")
    d = r["speculative_draft"]
    assert d["declaration_source"] == "model-config" and d["runtime_enabled"] is None
    # synthetic config: dspark_block_size 5, dspark_markov_rank 256, no dspark_num_layers -> 3
    assert d["fields"]["dspark_block_size"] == 5 and d["draft_layers"] == 3
    assert d["components"] == ["dspark-draft-kv"]
    _, plain = run_json(str(V4), "--context", "32k")
    assert "speculative_draft" not in plain


def test_the_plot_hint_outside_a_checkout_names_no_checkout(monkeypatch, tmp_path):
    from kvfit import paths
    from kvfit.report import plot

    monkeypatch.setattr(paths, "data_root", lambda: tmp_path)      # as in a wheel install
    hint = plot.install_hint()
    assert "uv sync" not in hint and "checkout" not in hint
    assert f"{sys.executable} -m pip install 'matplotlib>=3.8'" in hint
    assert "pip install kvfit" not in hint                          # an unrelated package
    monkeypatch.setattr(paths, "data_root", lambda: ROOT)
    assert "uv sync --extra plot" in plot.install_hint()


def _uv() -> list[str] | None:
    if shutil.which("uv"):
        return ["uv"]
    probe = subprocess.run([sys.executable, "-m", "uv", "--version"], capture_output=True)
    return [sys.executable, "-m", "uv"] if probe.returncode == 0 else None


def test_sdist_and_wheel_carry_the_man_page_examples_and_docs(tmp_path):
    uv = _uv()
    if uv is None:
        pytest.skip("uv is not installed (neither on PATH nor as a module)")
    proc = subprocess.run([*uv, "build", "--offline", "-q", "--out-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip("uv build --offline could not get the build backend (hatchling) from "
                    f"uv's cache: {proc.stderr.strip()[-200:]}")
    wheel = next(tmp_path.glob("*.whl"))
    sdist = next(tmp_path.glob("*.tar.gz"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "kvfit-0.1.0.data/data/share/man/man1/kvfit.1" in names
    with tarfile.open(sdist) as tar:
        members = {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}
    for path in ("man/kvfit.1", "docs/agent-skill.md", "examples/qwen3-32b-h100.toml",
                 "examples/models/Qwen--Qwen3-32B/config.json", "README.md"):
        assert path in members, path
    man = zipfile.ZipFile(wheel).read("kvfit-0.1.0.data/data/share/man/man1/kvfit.1")
    assert man == (ROOT / "man/kvfit.1").read_bytes()
