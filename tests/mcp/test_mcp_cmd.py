"""`kvfit mcp` without the optional extra: one paragraph saying how to get it, exit 2 (run
in-process; the server itself is tested over stdio in test_mcp_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_without_the_sdk_it_says_how_to_get_it(monkeypatch):
    from kvfit.cli import mcp_cmd

    monkeypatch.setattr(mcp_cmd, "find_spec", lambda name: None)
    code, out, err = run_cli("mcp")
    assert (code, out) == (2, "")
    assert err.startswith("kvfit: usage error: `kvfit mcp` serves over the official MCP Python "
                          "SDK (the optional extra `mcp`), which is not installed")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "uv run --extra mcp kvfit mcp" in err                   # this is a source checkout


def test_outside_a_checkout_it_names_a_pip_install(monkeypatch, tmp_path):
    from kvfit import paths
    from kvfit.cli import mcp_cmd

    monkeypatch.setattr(paths, "data_root", lambda: tmp_path)      # as in a wheel install
    text = mcp_cmd.missing()
    assert f"{sys.executable} -m pip install 'mcp>=2.3'" in text
    assert "checkout" not in text and "pip install kvfit" not in text   # an unrelated package


def test_bad_flags_are_one_paragraph():
    code, out, err = run_cli("mcp", "--port", "8080")
    assert code == 2 and err.startswith("kvfit: usage error: unrecognized arguments: --port")
