"""`kvfit specs check`: every bad spec gives exit 2 and a located, snapshotted error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

BAD = sorted((Path(__file__).parent / "bad_specs").glob("*.yaml"))


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_spec_is_located(path, snap_text):
    code, out, err = run_cli("specs", "check", path)
    assert code == 2
    code_prefix = path.stem.split("-")[0].upper()
    assert f"error[{code_prefix}]" in out
    assert f"{path.name}:" in out            # file:line:col
    assert "Traceback" not in out + err
    assert out.replace(str(path.parent), "<bad_specs>") == snap_text


def test_misspelled_name_points_at_it_and_suggests():
    path = Path(__file__).parent / "bad_specs" / "kv201-misspelled-name.yaml"
    code, out, _ = run_cli("specs", "check", path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "kv_head " in t)
    col = path.read_text().splitlines()[line - 1].index("kv_head ") + 1
    assert code == 2
    assert f"kv201-misspelled-name.yaml:{line}:{col}" in out
    assert "did you mean 'kv_heads'?" in out


def test_all_problems_in_one_run():
    code, out, _ = run_cli("specs", "check", Path(__file__).parent / "bad_specs")
    assert code == 2
    assert out.count("error[") >= len(BAD)


def test_json_output_lists_problems():
    code, out, _ = run_cli("specs", "check", BAD[0], "--json")
    data = json.loads(out)
    assert code == 2 and data["ok"] is False
    assert {"code", "file", "line", "col", "message"} <= set(data["problems"][0])


def test_builtin_corpus_is_valid():
    code, out, _ = run_cli("specs", "check")
    assert code == 0, out
    assert out.startswith("ok: ")


def test_missing_path_is_usage_error():
    code, _, err = run_cli("specs", "check", "no/such/file.yaml")
    assert code == 2 and "no such spec file" in err


def test_hardware_spec_problems_are_located(tmp_path):
    src = Path(__file__).resolve().parents[1] / "specs" / "hardware" / "h100-80.yaml"
    (tmp_path / "hardware").mkdir()
    bad = tmp_path / "hardware" / "h100-80.yaml"
    bad.write_text(src.read_text().replace("nominal_gib: 80", "nominal_gib: eighty"))
    code, out, _ = run_cli("specs", "check", bad)
    line = next(i for i, t in enumerate(bad.read_text().splitlines(), 1) if "eighty" in t)
    assert code == 2 and f"h100-80.yaml:{line}:" in out and "expected number" in out
    renamed = tmp_path / "hardware" / "h100-81.yaml"
    renamed.write_text(src.read_text())
    code, out, _ = run_cli("specs", "check", renamed)
    assert code == 2 and "does not match the file name" in out
