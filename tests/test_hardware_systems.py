"""Corpus tests for the accelerator (specs/hardware) and system (specs/systems) specs.

Every spec must validate against its JSON Schema, use its file stem as id, keep the
documented key order and block style, and cite a source for every number it states.
The schemas themselves are checked for strictness, and tests/schema_cases/<kind>/ holds
small documents that must pass (*.ok.yaml) or fail (*.fail.yaml) for a stated reason.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

ROOT = Path(__file__).resolve().parents[1]
SPECS = {"hardware": ROOT / "specs" / "hardware", "system": ROOT / "specs" / "systems"}
SCHEMAS = {k: ROOT / "schemas" / f"{k}.v1.schema.json" for k in SPECS}
CASES = Path(__file__).resolve().parent / "schema_cases"
ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MIB = 1024**2

# Numeric fields that must be backed by a source's `supports` when they are not null.
SOURCED = {
    "hardware": ("nominal_gib", "visible_mib", "cuda_total_mib", "unified_planning_gib",
                 "bandwidth_tb_s", "compute_capability"),
    "system": ("accelerators", "hosts", "domain_accelerators",
               "bandwidth_gb_s_per_accelerator"),
}


def _spec_files(kind: str) -> list[Path]:
    return sorted(p for p in SPECS[kind].glob("*.yaml") if not p.name.startswith("_"))


@cache
def _schema(kind: str) -> dict:
    return json.loads(SCHEMAS[kind].read_text(encoding="utf-8"))


@cache
def _validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(_schema(kind))


def _load(path: Path):
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


@cache
def _docs(kind: str) -> dict[str, dict]:
    return {p.stem: _load(p) for p in _spec_files(kind)}


def _errors(kind: str, doc) -> list:
    return sorted(_validator(kind).iter_errors(doc), key=lambda e: list(e.absolute_path))


def _flat(doc: dict) -> dict:
    """Top-level keys plus the keys of memory / scale_up / scale_out, as `supports` names them."""
    out = dict(doc)
    for section in ("memory", "scale_up", "scale_out"):
        out.update(doc.get(section) or {})
    return out


def _params(kind: str) -> list:
    return [pytest.param(p, id=p.stem) for p in _spec_files(kind)]


# --- the schemas -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_schema_is_draft_2020_12_with_id(kind):
    schema = _schema(kind)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/{kind}.v1.schema.json")


def _walk(node, path="#"):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}/{i}")


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_schema_objects_are_closed_and_properties_described(kind):
    problems = []
    for path, node in _walk(_schema(kind)):
        # if/then blocks only constrain properties declared elsewhere.
        if "properties" not in node or path.endswith(("/if", "/then")):
            continue
        if node.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        for name, prop in node["properties"].items():
            if not isinstance(prop, dict) or not prop.get("description"):
                problems.append(f"{path}/properties/{name}: missing description")
    assert not problems, "\n".join(problems)


# --- each spec file --------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_corpus_is_not_empty(kind):
    assert len(_spec_files(kind)) >= 10


@pytest.mark.parametrize("path", _params("hardware"))
def test_hardware_spec_is_valid(path):
    _check_spec("hardware", path)


@pytest.mark.parametrize("path", _params("system"))
def test_system_spec_is_valid(path):
    _check_spec("system", path)


def _check_spec(kind: str, path: Path) -> None:
    doc = _load(path)
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
              for e in _errors(kind, doc)]
    assert not errors, "\n".join(errors)
    assert doc["id"] == path.stem, "id must equal the file stem"
    assert ID_RE.fullmatch(doc["id"])
    _check_key_order(_schema(kind), doc, path.name)
    _check_sources_back_numbers(kind, doc)


def _check_key_order(schema: dict, doc: dict, where: str) -> None:
    """Keys follow the order of the schema's `properties`, at the top and one level down."""
    order = list(schema["properties"])
    assert list(doc) == [k for k in order if k in doc], f"{where}: top-level key order"
    for key, value in doc.items():
        sub = schema["properties"][key].get("properties")
        if sub and isinstance(value, dict):
            want = [k for k in sub if k in value]
            assert list(value) == want, f"{where}: key order inside '{key}'"


def _check_sources_back_numbers(kind: str, doc: dict) -> None:
    supported = {f for src in doc["sources"] for f in src["supports"]}
    flat = _flat(doc)
    missing = [f for f in SOURCED[kind] if flat.get(f) is not None and f not in supported]
    assert not missing, f"no source supports {missing}"


@pytest.mark.parametrize("path", _params("hardware") + _params("system"))
def test_spec_uses_block_style_and_no_anchors(path):
    text = path.read_text(encoding="utf-8")
    events = list(YAML().parse(text))
    assert not [e for e in events if getattr(e, "anchor", None)], "anchors/aliases are not allowed"
    tree = YAML(typ="rt").load(text)
    flows = []

    def visit(node, where):
        if isinstance(node, (CommentedMap, CommentedSeq)):
            if len(node) and node.fa.flow_style():
                flows.append(where)
            items = node.items() if isinstance(node, CommentedMap) else enumerate(node)
            for key, value in items:
                visit(value, f"{where}/{key}")

    visit(tree, "")
    assert not flows, f"non-empty flow-style collections at {flows}; use block style"


# --- the corpus as a whole -------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_ids_and_aliases_are_unique_within_kind(kind):
    seen: dict[str, str] = {}
    clashes = []
    for stem, doc in _docs(kind).items():
        for name in (doc["id"], *doc["aliases"]):
            if name in seen:
                clashes.append(f"{name!r} in {stem} and {seen[name]}")
            seen[name] = stem
    assert not clashes, "\n".join(clashes)


def test_every_system_names_an_existing_hardware_id():
    hardware = _docs("hardware")
    unknown = {s: d["hardware"] for s, d in _docs("system").items() if d["hardware"] not in hardware}
    assert not unknown, f"systems naming unknown hardware ids (aliases are not allowed): {unknown}"


def test_hardware_memory_figures_are_consistent():
    problems = []
    for stem, doc in _docs("hardware").items():
        m = doc["memory"]
        if m["visible_mib"] is not None and m["visible_mib"] > m["nominal_gib"] * 1024:
            problems.append(f"{stem}: visible_mib exceeds nominal_gib (a GB/MiB mix-up?)")
        if None not in (m["visible_mib"], m["cuda_total_mib"]) and (
                m["cuda_total_mib"] > m["visible_mib"]):
            problems.append(f"{stem}: cuda_total_mib exceeds visible_mib")
        if m["unified"] and m["visible_mib"] is None and m["unified_planning_gib"] is not None:
            if m["unified_planning_gib"] > m["nominal_gib"]:
                problems.append(f"{stem}: unified_planning_gib exceeds nominal_gib")
        if (doc["vendor"] == "nvidia") != (doc["compute_capability"] is not None):
            problems.append(f"{stem}: compute_capability is for NVIDIA parts only")
    assert not problems, "\n".join(problems)


def test_system_topology_is_consistent():
    hardware = _docs("hardware")
    problems = []
    for stem, doc in _docs("system").items():
        n, domain = doc["accelerators"], doc["scale_up"]["domain_accelerators"]
        if n % domain:
            problems.append(f"{stem}: {domain}-accelerator domains do not divide {n}")
        if doc["hosts"] > n:
            problems.append(f"{stem}: more hosts than accelerators")
        unified = hardware[doc["hardware"]]["memory"]["unified"]
        want = 1 if unified else n
        if doc["memory_domains"] != want:
            problems.append(f"{stem}: memory_domains should be {want}")
    assert not problems, "\n".join(problems)


# --- hand-checked numbers --------------------------------------------------------------


def _alias_table() -> dict[str, str]:
    return {name: stem for stem, d in _docs("hardware").items() for name in (d["id"], *d["aliases"])}


def test_b300_numbers():
    m = _docs("hardware")["b300-288"]["memory"]
    assert m["visible_mib"] == 275040  # 268.59 GiB, what nvidia-smi prints
    assert round(m["visible_mib"] / 1024, 2) == 268.59
    assert m["nominal_gib"] == 288
    assert round(0.8 * m["nominal_gib"], 1) == 230.4  # the brief's 80%-of-nominal budget
    assert _alias_table()["b300"] == "b300-288"


def test_h100_numbers():
    m = _docs("hardware")["h100-80"]["memory"]
    assert m["visible_mib"] == 81559
    assert m["visible_mib"] * MIB == 85520809984  # the NVML byte count in the logs
    assert m["cuda_total_mib"] < m["visible_mib"]
    aliases = _alias_table()
    assert aliases["h100"] == aliases["h100-sxm-80"] == "h100-80"


def test_dgx_spark_is_unified_with_cuda_total_121_69_gib():
    doc = _docs("hardware")["dgx-spark"]
    m = doc["memory"]
    assert m["unified"] is True
    assert m["visible_mib"] is None  # nvidia-smi: Not Supported
    assert m["cuda_total_mib"] == 127600748 // 1024  # MemTotal in KiB -> MiB
    assert round(m["cuda_total_mib"] / 1024, 2) == 121.69
    assert m["unified_planning_gib"] == 121.69
    assert doc["compute_capability"] == "12.1"


def test_vendor_byte_totals():
    hw = _docs("hardware")
    assert hw["mi300x-192"]["memory"]["visible_mib"] * MIB == 206141652992  # rocm-smi bytes
    assert hw["mi355x-288"]["memory"]["visible_mib"] * MIB == 309220868096
    assert hw["gaudi3-128"]["memory"]["visible_mib"] == 128 * 1024  # hl-smi, exactly 128 GiB
    assert hw["gh200-144"]["memory"]["cuda_total_mib"] * MIB == 153008209920
    assert hw["a10-24"]["memory"]["visible_mib"] * MIB == 24146608128


def test_required_presets_exist():
    hw, systems = _docs("hardware"), _docs("system")
    for name in ("h100-80", "h200-141", "b200-180", "b300-288", "dgx-spark", "gb200-186",
                 "gb300-288"):
        assert name in hw
    for name in ("dgx-spark", "dgx-h100", "dgx-h200", "dgx-b200", "dgx-b300", "hgx-h100",
                 "hgx-h200", "hgx-b200", "hgx-b300", "gb200-nvl72", "gb300-nvl72", "mi300x-8",
                 "mi325x-8", "mi355x-8", "gaudi3-8"):
        assert name in systems


def test_system_shapes():
    s = _docs("system")
    assert (s["dgx-b300"]["hardware"], s["dgx-b300"]["accelerators"]) == ("b300-288", 8)
    assert s["dgx-b300"]["scale_up"]["domain_accelerators"] == 8
    for rack in ("gb200-nvl72", "gb300-nvl72"):
        assert s[rack]["accelerators"] == s[rack]["scale_up"]["domain_accelerators"] == 72
        assert s[rack]["hosts"] == 18
    spark = s["dgx-spark"]
    assert (spark["accelerators"], spark["memory_domains"]) == (1, 1)
    assert spark["scale_up"]["domain_accelerators"] == 1 and spark["scale_up"]["fabric"] is None


# --- schema cases: small documents that must pass or fail ------------------------------

_EXPECT = re.compile(r"^# expect: (\S+) at (\S+)\s*$", re.M)


def _case_params(kind: str, suffix: str) -> list:
    files = sorted((CASES / kind).glob(f"*.{suffix}.yaml"))
    return [pytest.param(kind, p, id=f"{kind}-{p.name}") for p in files]


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_schema_cases_cover_both_directions(kind):
    assert _case_params(kind, "ok") and _case_params(kind, "fail")


@pytest.mark.parametrize("kind,path", _case_params("hardware", "ok") + _case_params("system", "ok"))
def test_ok_case_passes(kind, path):
    errors = [e.message for e in _errors(kind, _load(path))]
    assert not errors, errors


@pytest.mark.parametrize("kind,path",
                         _case_params("hardware", "fail") + _case_params("system", "fail"))
def test_fail_case_fails_for_the_stated_reason(kind, path):
    text = path.read_text(encoding="utf-8")
    expect = _EXPECT.search(text)
    assert expect, f"{path.name}: add a '# expect: <keyword> at <json-pointer>' line"
    keyword, pointer = expect.groups()
    errors = _errors(kind, _load(path))
    assert errors, f"{path.name} should fail the {kind} schema"
    seen = {(e.validator, "/" + "/".join(map(str, e.absolute_path))) for e in errors}
    assert (keyword, pointer) in seen, f"{path.name}: got {sorted(seen)}"
