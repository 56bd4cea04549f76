"""The committed man page is what argparse-manpage builds from the current parser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_man_page_is_current(tmp_path):
    out = tmp_path / "kvfit.1"
    script = (
        "import sys; from argparse_manpage.cli import main; sys.exit(main())"
    )
    cmd = [sys.executable, "-c", script, "--module", "kvfit.cli.manpage", "--function",
           "man_parser", "--project-name", "kvfit", "--prog", "kvfit", "--manual-title",
           "kvfit manual", "--output", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    fresh = out.read_text().splitlines()[1:]           # line 1 carries the build date
    committed = (ROOT / "man" / "kvfit.1").read_text().splitlines()[1:]
    assert fresh == committed, "regenerate man/kvfit.1 (see kvfit/cli/manpage.py)"


MAN = (ROOT / "man" / "kvfit.1").read_text()


def _roff(text: str) -> str:
    return text.replace("\\", "\\\\").replace("-", "\\-")


def _sections() -> list[str]:
    return [line[4:] for line in MAN.splitlines() if line.startswith(".SH ")]


def test_man_page_has_the_sections_a_reader_expects():
    from kvfit.cli.helptext import SUMMARY
    heads = _sections()
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT",
                 "FILES", "EXAMPLES"):
        assert name in heads, name
    assert MAN.splitlines()[2] == _roff(f"kvfit - {SUMMARY}")       # NAME has its line


def test_man_page_documents_every_flag_and_subcommand_of_the_parsers():
    """Every option of the plan parser and of every subcommand's own parser, and every
    subcommand (from kvfit.cli.main.SUBCOMMANDS, nested ones included), is in the page."""
    import argparse

    from kvfit.cli.main import SUBCOMMANDS
    from kvfit.cli.manpage import leaves
    from kvfit.cli.plan_args import build_parser

    parsers = [("", build_parser())] + [(name, p) for name, p, _ in leaves()]
    assert {name.split()[0] for name, _ in parsers if name} == set(SUBCOMMANDS)
    synopsis = MAN.split(".SH SYNOPSIS", 1)[1].split(".SH ", 1)[0]
    for name, parser in parsers:
        if name:
            assert f".B kvfit {_roff(name)}\n" in synopsis, name
            assert f".SH COMMAND \\fI\\,'kvfit {_roff(name)}'\\/\\fR" in MAN, name
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for flag in action.option_strings:
                assert f"\\fB{_roff(flag)}\\fR" in MAN, (name, flag)


def test_exit_status_lists_the_real_codes():
    from kvfit.cli import main as cli_main
    from kvfit.cli import request
    from kvfit.cli.helptext import EXIT_CODES
    from kvfit.errors import KvfitError

    codes = [c for c, _ in EXIT_CODES]
    real = {request.FITS, request.NOT_MET, request.NOT_JUDGED, KvfitError.exit_code,
            cli_main.INTERNAL_ERROR, 3, 4, 130}    # 3: preflight/section.py; 4: calibrate
    assert set(codes) == real
    block = MAN.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    assert all(f".B {c}\n" in block for c in codes)


def test_environment_names_every_variable_the_code_reads():
    """Every os.environ name kvfit reads literally is documented (ENVIRONMENT section)."""
    import re

    names = set()
    for path in (ROOT / "kvfit").rglob("*.py"):
        names |= set(re.findall(r"os\.environ(?:\.get)?[\[(]\"([A-Z_]+)\"", path.read_text()))
    block = MAN.split(".SH ENVIRONMENT", 1)[1].split(".SH ", 1)[0]
    assert names and all(_roff(n) in block for n in names), sorted(
        n for n in names if _roff(n) not in block)
    for n in ("HF_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_HOME", "KVFIT_CACHE_DIR",
              "KVFIT_DEBUG", "KVFIT_VLLM_PYTHON", "KVFIT_SGLANG_PYTHON"):
        assert _roff(n) in block, n


def _example_ids():
    from kvfit.cli.helptext import EXAMPLES
    return [pytest.param(ex, id=ex.args[:50]) for ex in EXAMPLES]


FIXTURES = ROOT / "tests" / "fixtures"
SMI_LINES = ("NVIDIA GeForce RTX 5090, 32607, 31500",)


@pytest.mark.parametrize("example", _example_ids())
def test_every_help_example_runs_offline(example, tmp_path, monkeypatch):
    """Each --help / man page example, run as written (offline; placeholders replaced by
    test fixtures; --hardware auto against a fake nvidia-smi), never exits 2."""
    import shlex

    from kvfit.cli.main import SUBCOMMANDS
    from kvfit.cli.plan_args import EPILOG

    from conftest import run_cli

    swap = {"ENV/bin/python": sys.executable,
            "vllm.log": str(FIXTURES / "engine_logs" / "vllm-0.19.0-gemma-2-2b-it-h100-tp1.log"),
            "./checkpoint": str(FIXTURES / "model-configs" / "google--gemma-2-2b-it")}
    argv = [swap.get(a, a) for a in shlex.split(example.args)]
    assert set(example.placeholder) <= set(swap)
    assert f"kvfit {shlex.split(example.args)[0]}" in EPILOG           # shown in --help
    if "auto" in argv or argv[0] == "hardware":                       # a fake nvidia-smi
        tool = tmp_path / "nvidia-smi"
        tool.write_text("#!/bin/sh\n" + "".join(f"echo '{x}'\n" for x in SMI_LINES))
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", str(tmp_path))
    if argv[0] not in SUBCOMMANDS:
        argv.append("--offline")                                      # tests never reach the Hub
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli(*argv)
    assert code != 2, err
    assert code in (0, 1, 3, 4, 5) and out, (code, err)
