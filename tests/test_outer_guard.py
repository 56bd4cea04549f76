"""The outer guard: an unexpected exception is one paragraph and exit 70, never exit 1."""

from __future__ import annotations

import json

import pytest

from kvfit.cli import main as cli_main

from conftest import run_cli


def _boom(argv, *_):
    raise RuntimeError("kaboom \x1b[31mred")


def test_unexpected_exception_is_one_paragraph_and_exit_70(monkeypatch):
    monkeypatch.delenv("KVFIT_DEBUG", raising=False)
    monkeypatch.setattr(cli_main, "run_plan", _boom)
    code, out, err = run_cli("some/model", "--context", "1k")
    assert code == 70 == cli_main.INTERNAL_ERROR
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("kvfit: internal error: ")
    assert "this is a kvfit bug, please report it" in err
    assert "`kvfit some/model --context 1k`" in err          # names the input
    assert "RuntimeError: kaboom" in err and "\x1b" not in err and "\\x1b[31m" in err
    assert "Traceback" not in err


def test_kvfit_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setenv("KVFIT_DEBUG", "1")
    monkeypatch.setattr(cli_main, "run_plan", _boom)
    code, _, err = run_cli("some/model")
    assert code == 70
    assert "Traceback (most recent call last)" in err and "_boom" in err
    assert err.rstrip("\n").splitlines()[-1].startswith("kvfit: internal error: ")


def test_json_gets_an_internal_error_object(monkeypatch):
    monkeypatch.delenv("KVFIT_DEBUG", raising=False)
    monkeypatch.setattr(cli_main, "run_plan", _boom)
    code, out, _ = run_cli("some/model", "--json")
    assert code == 70
    error = json.loads(out)["error"]
    assert error["kind"] == "internal error" and "kvfit bug" in error["message"]


def test_subcommands_are_guarded_too(monkeypatch):
    import kvfit.cli.explain_log as explain

    def broken(argv):
        raise KeyError("x")
    monkeypatch.setattr(explain, "run", broken)
    code, _, err = run_cli("explain-log", "some.log")
    assert code == 70 and "KeyError" in err and "kvfit explain-log some.log" in err


def test_a_closed_pipe_is_not_a_bug(monkeypatch):
    def pipe(argv, *_):
        raise BrokenPipeError
    monkeypatch.setattr(cli_main, "run_plan", pipe)
    with pytest.raises(BrokenPipeError):
        cli_main.main(["some/model"])


def test_exit_70_is_documented():
    from pathlib import Path

    from kvfit.cli.plan_args import EPILOG
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "| 70 |" in readme
    assert "  70 " in EPILOG
