"""Mutated architecture specs never crash `kvfit specs check`: exit 0 or a located exit 2."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import run_cli

SPECS = Path(__file__).resolve().parents[1] / "specs" / "architectures"
NAMES = ["qwen3", "gemma3", "deepseek_v4", "nemotron_h", "glm_moe_dsa"]
SNIPPETS = ["", "null", "[", "{a: 1}", "- x", "9**9**9", "'", "&x", "*x", "1e999", "-1",
            "kv_heads.__class__", "\t", ": :", "!!python/object:os.system 'id'", "0x10"]


def _mutate(lines: list[str], rng: random.Random) -> str:
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(out))
        action = rng.random()
        if action < 0.3:
            del out[i]
        elif action < 0.6 and ":" in out[i]:
            head = out[i].split(":", 1)[0]
            out[i] = f"{head}: {rng.choice(SNIPPETS)}"
        else:
            out.insert(i, rng.choice(SNIPPETS))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name", NAMES)
def test_mutated_specs_are_checked_cleanly(name, tmp_path):
    lines = (SPECS / f"{name}.yaml").read_text().splitlines()
    rng = random.Random(f"kvfit-spec-{name}")
    codes = set()
    for _ in range(40):
        path = tmp_path / f"{name}.yaml"
        path.write_text(_mutate(lines, rng))
        code, out, err = run_cli("specs", "check", path)
        assert code in (0, 2), err
        assert "Traceback" not in out + err
        if code == 2:
            assert f"{name}.yaml:" in out, out
        codes.add(code)
    assert 2 in codes


# Hostile YAML is refused from the event stream, before anything is built from it: each
# answers with one located paragraph and exit 2 (these took 73 s and 13.7 s with ruamel's
# round-trip loader).
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdef", "bcdefg", strict=True))
HOSTILE = {
    "braces": ("{" * 16 + "a" + "}" * 16 + "\n", "KV102", "1:2"),
    "laughs": (BILLION_LAUGHS, "KV104", "1:4"),
    "deep": ("[" * 100_000 + "\n", "KV107", "1:33"),
    "deep-block": ("".join("  " * i + "k:\n" for i in range(40)), "KV107", "33:"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_yaml_is_one_located_paragraph(name, tmp_path):
    text, code_, where = HOSTILE[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    code, out, err = run_cli("specs", "check", path)
    assert code == 2 and "Traceback" not in out + err
    assert out.count("error[") == 1, out
    assert f"error[{code_}]" in out and f"{name}.yaml:{where}" in out, out


def test_few_anchors_are_each_located():
    path = Path(__file__).parent / "bad_specs" / "kv104-anchor.yaml"
    code, out, _ = run_cli("specs", "check", path)
    assert code == 2 and out.count("error[KV104]") == 2


@pytest.mark.parametrize("path", sorted(p for p in SPECS.parent.rglob("*.yaml")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_one_pass_loader_reads_what_ruamel_reads(path):
    from ruamel.yaml import YAML

    from kvfit.specs.loader import load_text

    text = path.read_text()
    doc, problems = load_text(text, path.name, allow_null=True)
    assert not problems
    assert doc.data == YAML(typ="safe", pure=True).load(text)


SCALARS = "a: 0o17\nb: 1_000\nc: .inf\nd: yes\ne: '1'\nf: 0x1F\ng: -2.5e3\nh: true\ni: |\n  x\n"


def test_scalars_resolve_by_yaml_1_2_and_positions_are_kept():
    from ruamel.yaml import YAML

    from kvfit.specs.loader import load_text

    doc, problems = load_text(SCALARS + "j: [1, {k: v}]\n", "s.yaml")
    assert not problems
    assert doc.data == YAML(typ="safe", pure=True).load(SCALARS + "j: [1, {k: v}]\n")
    assert doc.data["d"] == "yes" and doc.data["a"] == 15 and doc.data["b"] == 1000
    assert doc.span(("j", 1, "k")) == (11, 12) and doc.key_span(("j", 1, "k")) == (11, 9)
    assert doc.key_span(("j",)) == (11, 1) and doc.span(("j", 1)) == (11, 8)
    assert doc.span(("j", 5)) == (11, 4)                  # deepest existing parent


@pytest.mark.parametrize("text,code_", [("a: 2024-01-01\n", "KV106"), ("a: 1\n---\nb: 2\n", "KV101"),
                                        ("a: 1\na: 2\n", "KV103"), ("1: x\n", "KV102"),
                                        ("a: ~\n", "KV105"), ("a: !!str 1\n", "KV106")])
def test_non_json_yaml_is_refused(text, code_):
    from kvfit.specs.loader import load_text

    _, problems = load_text(text, "x.yaml")
    assert [p.code for p in problems] == [code_]


def test_numbers_python_cannot_convert_are_read_as_text():
    from kvfit.specs.loader import load_text

    doc, problems = load_text("a: 0b_\nb: " + "7" * 5000 + "\n", "x.yaml")
    assert not problems and doc.data == {"a": "0b_", "b": "7" * 5000}


def test_duplicate_key_message_stays_short():
    from kvfit.specs.loader import load_text

    _, problems = load_text("a: [" + ", ".join(["x" * 20] * 50) + "]\na: 1\n", "x.yaml")
    assert [p.code for p in problems] == ["KV103"] and len(problems[0].message) < 300
    assert (problems[0].line, problems[0].col) == (2, 1)


def test_duplicate_key_message_is_one_line_whatever_the_value():
    # Found by the spec_yaml fuzz kind (seed 0, case 5966): a duplicate key whose value is a
    # block scalar ("x\n") put a line break in the problem message.
    from kvfit.specs.loader import load_text

    _, problems = load_text("summary: one\nsummary: |\n  x\n  y\n", "x.yaml")
    assert [p.code for p in problems] == ["KV103"] and (problems[0].line, problems[0].col) == (2, 1)
    assert "\n" not in problems[0].message and 'value "x\\ny\\n"' in problems[0].message
