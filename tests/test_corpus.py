"""Pedantic corpus checks: ids, matchers, schema/registry parity, cases for every spec."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kvfit.specs.registry import builtin_architectures, spec_files, watchlist
from kvfit.state.kinds import RETENTION

from conftest import validate

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = sorted((ROOT / "schemas").glob("*.json"))
ARCH_IDS = [p.stem for p in spec_files()]


def test_corpus_loads_and_ids_match_stems():
    archs = builtin_architectures()
    assert sorted(a.id for a in archs) == sorted(ARCH_IDS)


def test_kind_enum_equals_code_registry():
    schema = json.loads((ROOT / "schemas" / "architecture.v1.schema.json").read_text())
    enum = schema["$defs"]["component"]["properties"]["kind"]["enum"]
    assert sorted(enum) == sorted(RETENTION)


def _properties(node, path=""):
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            yield f"{path}.{name}", sub
        for key, sub in node.items():
            # if/then/else/not only constrain properties declared (and described) elsewhere
            if isinstance(sub, (dict, list)) and key not in ("if", "then", "else", "not"):
                yield from _properties(sub, f"{path}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            yield from _properties(sub, f"{path}[{i}]")


@pytest.mark.parametrize("schema", SCHEMAS, ids=[p.name for p in SCHEMAS])
def test_every_schema_property_is_described(schema):
    data = json.loads(schema.read_text())
    missing = [p for p, sub in _properties(data) if isinstance(sub, dict)
               and "description" not in sub and "$ref" not in sub]
    assert not missing, missing


@pytest.mark.parametrize("spec_id", ARCH_IDS)
def test_every_spec_has_cases_and_pinned_configs(spec_id):
    folder = ROOT / "tests" / "architectures" / spec_id
    assert (folder / "cases.yaml").is_file(), f"{spec_id} has no cases.yaml"
    cases = YAML(typ="safe").load((folder / "cases.yaml").read_text())
    assert cases, f"{spec_id}: cases.yaml is empty"
    assert any("expect" in c for c in cases.values()), f"{spec_id}: no hand-derived expectation"
    assert list(folder.glob("configs/*/config.json")) or list(folder.glob("configs/*.json"))


@pytest.mark.parametrize("spec_id", ARCH_IDS)
def test_cases_files_match_their_schema(spec_id):
    schema = json.loads((ROOT / "schemas" / "cases.v1.schema.json").read_text())
    path = ROOT / "tests" / "architectures" / spec_id / "cases.yaml"
    if path.is_file():
        validate(YAML(typ="safe").load(path.read_text()), schema)


def test_every_case_folder_has_a_spec():
    folders = {p.name for p in (ROOT / "tests" / "architectures").iterdir() if p.is_dir()}
    assert folders <= set(ARCH_IDS), folders - set(ARCH_IDS)


def test_matchers_sorted_and_exact():
    for path in spec_files():
        data = YAML(typ="safe").load(path.read_text())
        for key in ("model_type", "architectures", "text_model_type"):
            values = data["match"].get(key, [])
            assert values == sorted(values), f"{path.name}: match.{key} is not sorted"


def test_engine_source_names_no_spec_id():
    """No `if model_type == ...` in the engine: spec ids never appear in kvfit/ as strings."""
    source = "\n".join(p.read_text() for p in (ROOT / "kvfit").rglob("*.py")
                       if "hub" not in p.parts)
    ids = {mt for a in builtin_architectures() for mt in a.model_types}
    found = sorted(i for i in ids if re.search(rf"[\"']{re.escape(i)}[\"']", source))
    assert not found, found


def test_watchlist_is_well_formed():
    keys = watchlist()
    assert "sliding_window" in keys and all(len(v) > 10 for v in keys.values())


def test_pinned_fixture_hashes_match():
    import hashlib
    for sources in (ROOT / "tests" / "architectures").glob("*/configs/*/SOURCES.yaml"):
        data = YAML(typ="safe").load(sources.read_text())
        for name, info in (data.get("files") or {}).items():
            if isinstance(info, dict) and "sha256" in info:
                digest = hashlib.sha256((sources.parent / name).read_bytes()).hexdigest()
                assert digest == info["sha256"], f"{sources.parent.name}/{name}"
