"""Engine specs: schema validity, sources on every number, version selection, and the
mem_fraction_static heuristic against the table computed in engines.md §4.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_log_cases import LOGS

from kvfit.engines.common import Inputs
from kvfit.engines.sglang import mem_fraction
from kvfit.engines.spec import in_range, load_spec, parse_engine, parse_version, rules_for
from kvfit.errors import SpecError, UsageError
from kvfit.hardware.presets import find_accelerator
from kvfit.specs.loader import load_file, load_text
from kvfit.specs.schema import check
from kvfit.state.evaluate import ComponentState

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ["vllm", "sglang"]


@pytest.mark.parametrize("engine", ENGINES)
def test_spec_validates_and_id_matches_stem(engine):
    path = ROOT / "specs" / "engines" / f"{engine}.yaml"
    doc, problems = load_file(path)
    assert not problems and not check(doc, "engine.v1.schema.json")
    assert doc.data["id"] == path.stem


def test_bad_spec_is_located_at_file_line_col():
    text = (ROOT / "specs" / "engines" / "vllm.yaml").read_text().replace(
        "  null_blocks: {value: 1,", "  null_block: {value: 1,")
    doc, _ = load_text(text, "specs/engines/vllm.yaml")
    problems = check(doc, "engine.v1.schema.json")
    assert len(problems) == 1 and "unknown key: null_block" in problems[0].message
    # the loader points at the mapping holding the unknown key (the first rule under rules:)
    rules_line = next(i for i, s in enumerate(text.splitlines(), 1) if s == "rules:")
    assert (problems[0].file, problems[0].line, problems[0].col, problems[0].at) == (
        "specs/engines/vllm.yaml", rules_line + 1, 3, "rules")


@pytest.mark.parametrize("engine", ENGINES)
def test_fitted_constants_name_existing_logs(engine):
    for name, c in load_spec(engine)["estimates"].items():
        for source in c["fitted_on"]:
            if not source.startswith("specs/"):
                assert (LOGS / f"{source}.log").is_file(), (name, source)


def test_version_ranges():
    # PEP 440 (packaging): "v0.5" is 0.5; a local build tag is the release it was built from;
    # an rc or a dev build of 0.34 sorts after 0.33.x and before 0.34.0.
    assert parse_version("v0.5") == parse_version("0.5.0") and parse_version("banana") is None
    assert in_range(parse_version("0.21.0"), ">=0.21,<0.34")
    assert not in_range(parse_version("0.34.0"), ">=0.21,<0.34")
    assert in_range(parse_version("0.33.0+cu128"), ">=0.33,<0.34")
    assert in_range(parse_version("0.34.0rc1"), ">=0.34.0rc1,<0.35")
    assert not in_range(parse_version("0.34.0.dev5+g1a2b3c"), "<0.33")
    assert parse_version("0.33.0") < parse_version("0.34.0.dev5") < parse_version("0.34.0rc1")
    with pytest.raises(UsageError, match="bad version range"):
        in_range(parse_version("0.33.0"), ">=0.21,,banana")
    assert parse_engine("vllm@0.33.0") == ("vllm", "0.33.0")
    assert parse_engine("SGLang") == ("sglang", None)
    with pytest.raises(UsageError):
        parse_engine("tgi")


@pytest.mark.parametrize("version, util, charged, formula, mamba, in_flight", [
    ("0.19.0", 0.9, False, "blocks_per_group", 2, 1),     # fixture logs v0.19.0
    ("0.24.0", 0.92, True, "concurrency_x_len", 2, 1),     # v0.21 CUDA graphs, v0.24 formula;
    # 0.92: the 0.24.0 wheel, vllm/config/cache.py:67 (0.92 from 0.20.0 on, cache.py:66)
    ("0.33.0", 0.92, True, "concurrency_x_len", 3, 2),     # engines.md (0.33 source)
])
def test_vllm_rules_by_version(version, util, charged, formula, mamba, in_flight):
    r = rules_for("vllm", version)
    assert (r["gpu_memory_utilization"], r["cudagraph_estimate_charged"], r["tokens_formula"],
            r["mamba_blocks_align"], r["sliding_in_flight_batches"]) == (
        util, charged, formula, mamba, in_flight)
    assert all(v["source"] for v in r.values.values())


def test_default_version_is_the_newest_and_marked_assumed():
    r = rules_for("vllm", None)
    assert r.assumed and r.version == "0.33.0"
    with pytest.raises(UsageError):
        rules_for("vllm", "0.5.4")


def test_sglang_rules_by_version():
    old, new = rules_for("sglang", "0.4.9"), rules_for("sglang", "0.5.23")
    assert (old["mem_fraction_rule"], new["mem_fraction_rule"]) == ("tp_table", "reserve_heuristic")
    assert "bench_serving" in old.commands["bench"] and "benchmark.serving" in new.commands["bench"]
    assert new["swa_full_tokens_ratio"] == 0.8 and new["mamba_slots_per_request"] == 5


def _inp(tp: int, latent: bool = False) -> Inputs:
    kind = "latent" if latent else "full"
    comp = ComponentState("kv", kind, "", "all", 1, 1, 1, 1, None, "", "logical")
    return Inputs([comp], tp, 4096, None, 0)


@pytest.mark.parametrize("hw, tp, latent, expected", [
    ("h100-80", 1, False, 0.830),   # reserve 512 + 12,288 + 128 + 512 + 8 x 58 = 13,904 MiB
    ("h100-80", 8, False, 0.812),
    ("h200-141", 1, False, 0.903),
    ("a100-40", 1, False, 0.823),
    ("l4-24", 1, False, 0.684),
    ("h100-80", 1, True, 0.816),    # MLA: 1,536 MiB of prefill graphs instead
])
def test_sglang_mem_fraction_matches_engines_md(hw, tp, latent, expected):
    mib = find_accelerator(hw).visible_mib
    got = mem_fraction(rules_for("sglang", "0.5.23"), {}, _inp(tp, latent), mib, 1)
    assert got.value == pytest.approx(expected, abs=0.0015)


def test_sglang_tp_table_for_0_4():
    r = rules_for("sglang", "0.4.6")
    assert [mem_fraction(r, {}, _inp(tp), 49140, 1).value for tp in (1, 2, 4, 8, 16)] == [
        0.88, 0.87, 0.85, 0.81, 0.79]


def test_unknown_engine_is_a_usage_error():
    with pytest.raises(UsageError):
        load_spec("tensorrt")


def test_spec_error_type_for_broken_file(tmp_path, monkeypatch):
    from kvfit.engines import spec as spec_mod

    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "vllm.yaml").write_text("schema_version: 1\nid: vllm\n")
    monkeypatch.setattr("kvfit.paths.specs_dir", lambda kind: tmp_path / kind)
    spec_mod.load_spec.cache_clear()
    try:
        with pytest.raises(SpecError) as err:
            spec_mod.load_spec("vllm")
        assert "vllm.yaml" in err.value.problems[0].file
    finally:
        spec_mod.load_spec.cache_clear()
