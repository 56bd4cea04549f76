"""A name the user typed is quoted on one line: a newline in it cannot split the message into
two paragraphs (fuzz api_options, seed 12: --hardware 'x\\ny' and '32k\\n')."""

from __future__ import annotations

import pytest

from kvfit.engines.spec import rules_for
from kvfit.errors import UsageError

from conftest import run_cli


def _one_paragraph(err: str) -> str:
    assert err.endswith("\n") and "\n" not in err[:-1], err
    return err


@pytest.mark.parametrize("typed", ["x\ny", "32k\n", "h100\r\n80"])
def test_unknown_hardware_with_a_newline(typed):
    code, out, err = run_cli("openai/gpt-oss-20b", "--hardware", typed)
    assert code == 2 and out == ""
    assert f"unknown hardware {typed!r}" in _one_paragraph(err)


def test_preset_key_and_table_with_a_newline(tmp_path):
    key = tmp_path / "key.toml"
    key.write_text('"a\\nb" = 1\n', encoding="utf-8")          # the TOML key is a, newline, b
    code, _, err = run_cli(key)
    assert code == 2 and "unknown key 'a\\x0ab' in the preset" in _one_paragraph(err)

    table = tmp_path / "table.toml"
    table.write_text('[ "t\\nx" ]\nk = 1\n', encoding="utf-8")
    code, _, err = run_cli(table)
    assert code == 2 and "unknown table [t\\x0ax] in the preset" in _one_paragraph(err)


def test_audit_key_with_a_newline(tmp_path):
    audit = tmp_path / "audit.toml"
    audit.write_text('"a\\nb" = 1\n', encoding="utf-8")
    code, _, err = run_cli("audit", audit)
    assert code == 2 and "unknown table(s) a\\x0ab in the audit file" in _one_paragraph(err)
    audit.write_text('[audit]\n"k\\ny" = 1\n', encoding="utf-8")
    code, _, err = run_cli("audit", audit)
    assert code == 2 and "unknown key 'audit.k\\x0ay' in the audit file" in _one_paragraph(err)


def test_engine_version_with_a_newline():
    # an MCP or API caller's engine version '32k\n' (fuzz mcp_arguments, seed 12, #8464)
    with pytest.raises(UsageError) as caught:
        rules_for("vllm", "32k\n")
    _one_paragraph(caught.value.render() + "\n")
    assert "vllm 32k\\x0a: kvfit has no rules for this version" in caught.value.render()
