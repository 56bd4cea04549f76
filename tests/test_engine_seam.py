"""The engine seam: no engine-name comparison outside kvfit/engines/, and a third engine added
from one spec file plus one module plans with nothing in kvfit/planner/ touched.

What counts as naming an engine (a string literal in Python code, docstrings excepted):
  - a literal equal to an engine id or an attention-DP mode name, in any letter case:
    `x == "vllm"`, `x != "sglang"`, `x in ("vllm", "sglang")`, `x.startswith("vllm")`,
    `{"vllm": ...}[x]`, `d.get("sglang")`, `x.lower() == "VLLM"`, `p == "vllm-dp-ep"`;
  - a literal made of an engine id, a separator (- : @ /) and more, without spaces:
    `name.startswith("vllm:")`, `"sglang@0.5"`, `"vllm-cache"`, also inside an f-string.
Sentences that mention an engine ("--engine vllm or --engine sglang") are prose, not a choice.

Allowed: kvfit/engines/ (the engines themselves) and the installed-engine probe scripts
(PROBE_SCRIPTS): they run in the engine's own interpreter, import no kvfit, and import the
engine's packages by name; kvfit chooses which one to run through Engine.probe_script.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
KVFIT = ROOT / "kvfit"
TOY = ROOT / "tests" / "fixtures" / "toy_engine"
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
PROBE_SCRIPTS = {"kvfit/preflight/probe_vllm.py", "kvfit/preflight/probe_sglang.py",
                 "kvfit/preflight/_probe_lib.py", "kvfit/preflight/_vllm_steps.py"}
ENGINE_IDS = ("vllm", "sglang")
MODES = ("vllm-dp-ep", "sglang-dpa")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def engine_names(source: str, ids=ENGINE_IDS, modes=MODES) -> list[tuple[int, str]]:
    """(line, literal) of every string literal in `source` that names an engine."""
    exact = {n.casefold() for n in (*ids, *modes)}
    token = re.compile(rf"(?i)^(?:{'|'.join(map(re.escape, ids))})[-:@/]\S*$")
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip
            and (node.value.strip().casefold() in exact or token.match(node.value.strip()))]


def scan(root: Path, ids=ENGINE_IDS, modes=MODES) -> dict[str, list]:
    """{path: [(line, literal)]} for kvfit's modules outside kvfit/engines and the probes."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith("kvfit/engines/") or rel in PROBE_SCRIPTS:
            continue
        hits = engine_names(path.read_text(encoding="utf-8"), ids, modes)
        if hits:
            out[rel] = hits
    return out


@pytest.mark.parametrize("code", [
    'x == "vllm"', 'x != "sglang"', 'x in ("vllm", "sglang")', 'x.startswith("vllm")',
    '{"vllm": 1}[x]', 'd.get("sglang")', 'x.lower() == "VLLM"', 'p == "vllm-dp-ep"',
    'p != "sglang-dpa"', 'm.startswith("vllm:")', 'x == "sglang@0.5"', 'f"vllm:{k}"',
    'rules_for("vllm", None)', 'x is not "vLLM"'])
def test_the_scan_finds_every_form_of_engine_name(code):
    assert engine_names(code), code


@pytest.mark.parametrize("code", [
    'hint = "Pass --engine vllm or --engine sglang."', 'def f():\n    """vllm or sglang."""',
    'x == "vllm.log"', 'name = "VLLM_NO_USAGE_STATS"'])
def test_prose_and_other_words_are_not_engine_names(code):
    assert engine_names(code) == []


def test_no_engine_name_outside_kvfit_engines():
    from kvfit.engines import names, parallelisms

    ids = tuple({*ENGINE_IDS, *names()})
    found = scan(KVFIT, ids, tuple({*MODES, *parallelisms()}))
    assert found == {}, "engine names outside kvfit/engines (ask kvfit.engines.get(...)):\n" + \
        json.dumps(found, indent=1)


@pytest.fixture
def toy(monkeypatch):
    """The toy engine, registered from its spec file; its module found on sys.path."""
    from kvfit import engines

    monkeypatch.syspath_prepend(str(TOY))
    name = engines.register(TOY / "toy.yaml")
    yield name
    engines.unregister(name)


def test_the_toy_engine_is_one_spec_file_and_one_module(toy):
    from kvfit import engines

    assert toy == "toy" and "toy" in engines.names()
    assert engines.get("toy").title == "Toy"
    assert sorted(p.name for p in TOY.iterdir() if p.suffix in (".yaml", ".py")) == [
        "kvfit_toy_engine.py", "toy.yaml"]


def test_a_plan_with_the_toy_engine_takes_its_capacity(toy):
    # Qwen3-32B (tests/architectures/qwen3/configs/Qwen--Qwen3-32B/config.json): 64 layers,
    # 8 KV heads, head_dim 128, bf16 -> K and V per token = 2 x 64 x 8 x 128 x 2 B = 262,144 B
    # at TP 1. The toy rule (toy.yaml): pool = 0.5 x 80 GiB - 20 GiB weights = 20 GiB
    # = 21,474,836,480 B -> 21,474,836,480 / (1,024 x 262,144) = 80 blocks of 1,024 tokens;
    # a 32,768-token request pins 32 blocks -> 80 // 32 = 2 sequences per instance; 2 GPUs
    # at TP 1 are 2 instances -> 4 sequences.
    code, out, err = run_cli(QWEN, "--engine", "toy", "--context", "32768", "--hardware",
                             "h100-80", "--device-memory-gib", "80", "--gpus", "2",
                             "--weight-gib", "20", "--concurrent-users", "4", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["capacity_model"]["name"] == "toy"
    assert r["capacity_model"]["label"] == "Toy 1.0 prediction"
    tp1 = next(lay for lay in r["layouts"] if lay["id"] == "tp1")
    assert tp1["capacity_model"] == "toy"
    assert tp1["engine"]["engine"] == "toy"
    assert tp1["engine"]["num_blocks"]["value"] == 80
    assert tp1["engine"]["blocks_per_request"]["value"] == 32
    assert tp1["engine"]["pool_bytes"]["value"] == 21_474_836_480
    assert (tp1["sequences_per_group"], tp1["max_sequences"], tp1["fits"]) == (2, 4, True)
    assert tp1["static"]["max_sequences"] != 4          # the static bound answers otherwise


def test_nothing_in_plan_names_the_toy_engine():
    for path in (KVFIT / "planner").glob("*.py"):
        assert "toy" not in re.findall(r"[a-z]+", path.read_text(encoding="utf-8")), path


def test_each_engine_reads_its_own_log_and_refuses_the_others():
    from kvfit.engines import get
    from kvfit.errors import UsageError

    logs = ROOT / "tests" / "fixtures" / "engine_logs"
    vllm_log = (logs / "vllm-0.19.0-codellama-7b-h100-tp1.log").read_text(encoding="utf-8")
    sglang_log = (logs / "sglang-vunknown-qwen3-14b-rtxa6000.log").read_text(encoding="utf-8")
    assert get("vllm").read_log(vllm_log).engine == "vllm"
    assert get("sglang").read_log(sglang_log).engine == "sglang"
    with pytest.raises(UsageError, match="not a vLLM one"):
        get("vllm").read_log(sglang_log)


def test_a_bad_engine_spec_or_module_is_a_clear_error(tmp_path, monkeypatch):
    from kvfit import engines
    from kvfit.errors import SpecError, UsageError

    text = (TOY / "toy.yaml").read_text(encoding="utf-8")
    no_module = tmp_path / "nomodule.yaml"
    no_module.write_text(text.replace("module: kvfit_toy_engine\n", ""), encoding="utf-8")
    with pytest.raises(SpecError):
        engines.register(no_module)
    assert "toy" not in engines.names()
    (tmp_path / "kvfit_empty_engine.py").write_text('"""Defines no ENGINE."""\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    empty = tmp_path / "toy.yaml"
    empty.write_text(text.replace("kvfit_toy_engine", "kvfit_empty_engine"), encoding="utf-8")
    engines.register(empty)
    try:
        with pytest.raises(UsageError, match="must import and define ENGINE|cannot be used"):
            engines.get("toy")
    finally:
        engines.unregister("toy")
