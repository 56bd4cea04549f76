"""Hardware and system ids in any letter case, with did-you-mean for typos."""

from __future__ import annotations

import pytest

from conftest import run_cli, run_json

QWEN = ("Qwen/Qwen3-32B", "--context", "32k", "--offline")


@pytest.mark.parametrize("typed,want", [("H100-80", "h100-80"), ("RTX-5090-32", "rtx-5090-32"),
                                        ("B300", "b300-288"), (" DGX-Spark ", "dgx-spark")])
def test_hardware_ids_are_case_insensitive(typed, want):
    code, r = run_json(*QWEN, "--hardware", typed)
    assert code in (0, 1) and r["hardware"]["id"] == want


@pytest.mark.parametrize("typed,want", [("DGX-H100", "dgx-h100"), ("GB200-NVL72", "gb200-nvl72")])
def test_system_ids_are_case_insensitive(typed, want):
    code, r = run_json(*QWEN, "--system", typed)
    assert code in (0, 1) and r["hardware"]["system"] == want


@pytest.mark.parametrize("typed,close", [
    ("h100-8", ["h100-80"]), ("h10", ["h100-80", "h100-nvl-94", "h100-pcie-80"]),
    ("rtx5070", ["rtx-5090-32", "rtx-5080-16"]), ("H20-9", ["h20-96"]),
])
def test_hardware_typos_suggest_the_close_ids(typed, close):
    code, _, err = run_cli(*QWEN, "--hardware", typed)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    said = err.split("Did you mean ", 1)[1].split("?", 1)[0].split(" or ")
    assert set(close) <= set(said), err


def test_system_typo_suggests_the_close_ids():
    code, _, err = run_cli(*QWEN, "--system", "dgx-h10")
    assert code == 2 and "Did you mean dgx-h100" in err


def test_nothing_close_gives_the_list_only():
    code, _, err = run_cli(*QWEN, "--hardware", "zzz")
    assert code == 2 and "Did you mean" not in err and "Known presets:" in err


def test_a_family_alias_says_which_preset_it_read():
    # h100 is an alias of h100-80 (the SXM part); the PCIe and NVL parts are named beside it
    code, r = run_json(*QWEN, "--hardware", "h100")
    assert r["hardware"]["id"] == "h100-80"
    assert ("--hardware h100 is read as h100-80 (NVIDIA H100 SXM5 80GB (HBM3)); close presets: "
            "h100-nvl-94, h100-pcie-80.") in r["warnings"]
    code, r = run_json(*QWEN, "--hardware", "h100-80")
    assert not any("is read as" in w for w in r["warnings"])


def test_a_preset_named_by_its_id_is_read_from_its_own_file_alone(monkeypatch):
    """Every id and alias answers as the whole table does; an id (any case) reads its one
    spec, an alias the table (built here first, so it reads none)."""
    from kvfit.hardware import presets

    table = presets.accelerators()
    read = []
    real = presets._load
    monkeypatch.setattr(presets, "_load", lambda kind, schema, paths=None: (
        read.append([p.name for p in paths] if paths else "all"), real(kind, schema, paths))[1])
    for key, acc in table.items():
        read.clear()
        presets._by_id.cache_clear()
        assert presets.find_accelerator(key.upper()) == acc
        assert read == ([[f"{acc.id}.yaml"]] if key == acc.id else []), key
    read.clear()
    presets._by_id.cache_clear()
    assert presets.alias_note("H100-80") is None and read == [["h100-80.yaml"]]
    assert presets.find_accelerator("H100-80").id == "h100-80" and len(read) == 1  # kept
