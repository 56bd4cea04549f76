"""`kvfit specs check`'s checks against a spec's pinned configs and cases (no planning).

A spec at <checkout>/specs/architectures/<id>.yaml has its pinned configs in
<checkout>/tests/architectures/<id>/configs/ and its cases in .../<id>/cases.yaml. Against
them: a `config_root` no pinned config has is an error (its fields would silently be read at
the top level); a layer a pinned config's schedule leaves to no partition set (or to two) is
an error at the spec's `partition`; a `from:` alias no pinned config uses is a warning; a
geometry field a pinned config takes from a class default is a note; and a derivation
comment whose results never reach the expected values under it is an error in cases.yaml.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .architecture import Architecture
    from .loader import Doc


@dataclass(frozen=True, slots=True)
class Pinned:
    """One pinned config: its label (folder or file name), data, and whether only error
    cases use it (a config pinned to show a refusal)."""

    label: str
    path: Path
    config: dict
    refused_only: bool


@dataclass(slots=True)
class Findings:
    errors: list
    warnings: list
    notes: list


def tests_folder(spec_path: Path, spec_id: str) -> Path:
    """tests/architectures/<id> of the checkout holding specs/architectures/<id>.yaml."""
    return spec_path.resolve().parents[2] / "tests" / "architectures" / spec_id


def case_argv(folder: Path, case: dict) -> list[str]:
    """The kvfit command line of one case (flags as tests/test_architectures.py spells them)."""
    out = [str(folder / case["model"])]
    for key, value in (case.get("args") or {}).items():
        flag = "--" + key.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


def load_cases(folder: Path) -> dict:
    path = folder / "cases.yaml"
    if not path.is_file():
        return {}
    from ruamel.yaml import YAML
    try:
        data = YAML(typ="safe").load(path.read_text())
    except Exception:                          # malformed cases: the test suite says why
        return {}
    return data if isinstance(data, dict) else {}


def pinned_configs(folder: Path, cases: dict) -> list[Pinned]:
    def models(error: bool) -> set[str]:
        return {str((folder / c["model"]).resolve()) for c in cases.values()
                if isinstance(c, dict) and isinstance(c.get("model"), str)
                and ("error" in c) == error}

    answered, refused = models(False), models(True)
    out = []
    for cfg in sorted(folder.glob("configs/*/config.json")) + sorted(folder.glob("configs/*.json")):
        try:
            data = json.loads(cfg.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            model = cfg.parent if cfg.name == "config.json" else cfg
            key = str(model.resolve())
            out.append(Pinned(model.name, model, data, key in refused and key not in answered))
    return out


def _root(arch: Architecture, config: dict) -> tuple[dict, str]:
    if arch.config_root and isinstance(config.get(arch.config_root), dict):
        return config[arch.config_root], arch.config_root + "."
    return config, ""


def _has(root: dict, dotted: str) -> bool:
    node = root
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _at(doc: Doc, path: tuple) -> tuple:
    """`path`, or the `extends` line when the part is inherited (not in this spec's text)."""
    if doc.tree is None or "extends" not in doc.data:
        return path
    return path if path[:2] in doc.tree.values else ("extends",)


def check_against_pins(arch: Architecture, doc: Doc, spec_path: Path) -> Findings:
    """Errors, warnings and notes of one compiled spec against its pinned configs."""
    found = Findings([], [], [])
    folder = tests_folder(spec_path, arch.id)
    cases = load_cases(folder)
    pins = pinned_configs(folder, cases)
    if not pins:
        return found
    if arch.config_root and not any(isinstance(p.config.get(arch.config_root), dict)
                                    for p in pins):
        found.errors.append(doc.problem(
            "KV130", ("match", "config_root"), f"config_root '{arch.config_root}' is in none "
            f"of the {len(pins)} pinned config(s): every field would be read from the top level",
            "name the sub-object the pinned configs carry (e.g. text_config)"))
        return found
    roots = [(p, *_root(arch, p.config)) for p in pins]
    vocabulary = None
    for name, f in arch.fields.items():
        for i, key in enumerate(f.keys):
            if any(_has(root, key) for _, root, _ in roots):
                continue
            vocabulary = config_keys(folder.parents[1]) if vocabulary is None else vocabulary
            if key.split(".")[-1] in vocabulary:
                continue                     # a real key these configs happen to omit
            import difflib
            close = difflib.get_close_matches(key.split(".")[-1], vocabulary, 1)
            found.warnings.append(doc.problem(
                "KV131", _at(doc, ("fields", name, "from", i)), f"field '{name}': no pinned "
                f"config has '{key}', nor does any other config pinned in tests/",
                (f"did you mean '{close[0]}'? " if close else "") + "check the spelling, or "
                "pin a config that uses this alias"))
    seen_types = {root.get("model_type") for _, root, prefix in roots if prefix}
    for i, t in enumerate(arch.text_model_types):
        if t not in seen_types:
            found.warnings.append(doc.problem(
                "KV131", ("match", "text_model_type", i), f"text_model_type '{t}': no pinned "
                f"config's {arch.config_root} has this model_type"))
    found.notes += _defaults_and_layers(arch, doc, roots, found)
    return found


@cache
def config_keys(tests: Path) -> frozenset[str]:
    """Every key, at any depth, of the configs pinned under tests/ (architectures' configs
    and the corpus in tests/fixtures/model-configs)."""
    keys: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            keys.update(k for k in node if isinstance(k, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node[:64]:
                walk(v)

    for cfg in [*tests.glob("architectures/*/configs/**/*.json"),
                *tests.glob("fixtures/model-configs/*/config.json")]:
        if cfg.name in ("model.safetensors.index.json",):
            continue
        try:
            walk(json.loads(cfg.read_text()))
        except (OSError, ValueError):
            continue
    return frozenset(keys)


def _defaults_and_layers(arch, doc, roots, found) -> list:
    from ..errors import KvfitError
    from ..state.fields import resolve_fields
    from ..state.layers import evaluate_layers

    notes = []
    geometry = arch.geometry_fields()
    for pin, root, prefix in roots:
        try:
            fields = resolve_fields(arch, root, prefix)
        except KvfitError:
            continue                                # the plan (or an error case) says why
        for name, r in fields.items():
            if (name in geometry and r.value and arch.fields[name].type == "int"
                    and r.provenance.startswith("class default")):
                source = arch.fields[name].default_source or "no default_source given"
                notes.append(doc.problem("KV133", _at(doc, ("fields", name, "default")),
                                         f"{pin.label}: {name} = {r.value} is not in the "
                                         f"config: it is the class default ({source})"))
        if pin.refused_only:
            continue
        values = {k: r.value for k, r in fields.items() if r.value is not None}
        try:
            evaluate_layers(arch, values)
        except KvfitError as exc:
            if "of the layer kinds of spec" in exc.message:
                found.errors.append(doc.problem(
                    "KV134", _at(doc, ("partition",)), f"{pin.label}: {exc.message}",
                    "every layer must fall in exactly one partition set: fix the sets' rules "
                    "(or add a set for that kind)", key=True))
    return notes


# Derivation comments: the numbers after "=" or "->" in a comment block are its results.
_NUMS = r"\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?![\d,])"
_ANY = re.compile(r"(?<![\w.])(?:" + _NUMS + ")")
_RESULT = re.compile(r"(?:\s=|->)\s*~?\s*(" + _NUMS + ")")
_CASE = re.compile(r"^([a-z0-9_]+):\s*$")
_KEY = re.compile(r"^    ([^\s#][^:]*?):\s*(-?\d+)\s*(#.*)?$")


def _ints(text: str, rx) -> set[int]:
    return {int(x.replace(",", "")) for x in rx.findall(text)}


def stale_derivations(cases_path: Path, display: str) -> list:
    """Expected values under a comment block whose results (numbers after = or ->, of at
    least 100) include none of them, and that no comment of the case mentions: the comment
    was left behind when the value changed (or the value was typed without its arithmetic)."""
    from ..errors import Problem

    lines = cases_path.read_text().splitlines()
    cases: dict[str, dict] = {}
    case, block = None, []
    for n, line in enumerate(lines, 1):
        m = _CASE.match(line)
        if m:
            case, block = m.group(1), []
            cases[case] = {"comments": [], "groups": []}
            continue
        if case is None:
            continue
        text = line.strip()
        if text.startswith("#"):
            cases[case]["comments"].append(text)
            block.append(text)
            continue
        m = _KEY.match(line)
        if m:
            groups = cases[case]["groups"]
            if block or not groups:
                groups.append((list(block), []))
            groups[-1][1].append((n, m.group(1), int(m.group(2)), line))
        if "#" in line:
            cases[case]["comments"].append(line.split("#", 1)[1])
        block = []
    out = []
    for name, c in cases.items():
        mentioned = set().union(*(_ints(t, _ANY) for t in c["comments"]))
        for block, keys in c["groups"]:
            results = {x for t in block for x in _ints(t, _RESULT) if x >= 100}
            if not results:
                continue
            disjoint = not results & {v for _, _, v, _ in keys}
            for n, key, value, line in keys:
                near = any(0.5 <= value / r <= 2 for r in results)
                if value >= 100 and value not in mentioned and (disjoint or near):
                    shown = ", ".join(f"{x:,}" for x in sorted(results))
                    out.append(Problem(
                        "KV135", display, n, 5, f"case {name}: {key} expects {value:,}, but "
                        f"the derivation above it arrives at {shown}",
                        "redo the arithmetic in the comment for the new value (or fix the "
                        "value)", None, line, len(key)))
    return out
