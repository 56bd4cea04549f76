"""The parser the man page documents: plan options, every subcommand, and the sections
argparse-manpage reads from the parser (`man_short_description`, `_manpage`).

Regenerate with:
    uv run python -c "import sys; from argparse_manpage.cli import main; sys.exit(main())" \
        --module kvfit.cli.manpage --function man_parser --project-name kvfit --prog kvfit \
        --manual-title "kvfit manual" --output man/kvfit.1
(tests/test_manpage.py checks that the committed page is current and complete).

Subcommands are enumerated from kvfit.cli.main.SUBCOMMANDS and each one's own parser (its
nested subcommands too), so a subcommand added there appears here on regeneration. The
exit codes, examples, environment and files come from kvfit.cli.helptext, which --help
uses as well.
"""

from __future__ import annotations

import argparse

from . import helptext
from .main import SUBCOMMANDS, subcommand
from .plan_args import build_parser


def leaves() -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(name, parser, one-line help) for every subcommand, nested ones as 'specs check'."""
    out = []
    for name in SUBCOMMANDS:
        sp = subcommand(name, "parser")()
        nested = [a for a in sp._actions if isinstance(a, argparse._SubParsersAction)]
        if not nested:
            out.append((name, sp, sp.description or ""))
            continue
        helps = {a.dest: a.help for a in nested[0]._choices_actions}
        for child, cp in nested[0].choices.items():
            out.append((f"{name} {child}", cp, cp.description or helps.get(child) or ""))
    return out


def roff(text: str) -> str:
    """Plain text as roff: backslashes and hyphens escaped, no line starting a request."""
    text = text.replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join("\\&" + x if x.startswith((".", "'")) else x for x in text.split("\n"))


def _usage(parser: argparse.ArgumentParser) -> str:
    """A parser's usage without 'usage:' and its program name, on one line; a long one as
    [OPTIONS] and its positional arguments (the command's own section lists every option)."""
    text = " ".join(parser.format_usage().split())
    text = text.removeprefix("usage:").strip().removeprefix(parser.prog).strip()
    if len(text) <= 120:
        return text
    fmt = parser._get_formatter()
    return " ".join(["[OPTIONS]"] + [fmt._format_args(a, a.dest) for a in parser._actions
                                     if not a.option_strings])


def _synopsis(subs: list[tuple[str, argparse.ArgumentParser, str]]) -> str:
    lines = [".B kvfit", "\\fIMODEL\\fR [\\fIOPTIONS\\fR]", ".br", ".B kvfit",
             "\\fIPRESET\\fR.toml [\\fIOPTIONS\\fR]", ".br", ".B kvfit",
             roff("--list-hardware | --list-systems [--json]")]
    for name, parser, _ in subs:
        lines += [".br", f".B kvfit {roff(name)}", roff(_usage(parser))]
    return "\n".join(lines)


def _tagged(rows, tag: str = ".B") -> str:
    return "\n".join(f".TP\n{tag} {roff(str(k))}\n{roff(v)}" for k, v in rows)


def _examples() -> str:
    out = []
    for ex in helptext.EXAMPLES:
        out += [".PP", f"\\fBkvfit {roff(ex.args)}\\fR"]
        if ex.note:
            out += [".RS", roff(ex.note[0].upper() + ex.note[1:] + "."), ".RE"]
        if ex.placeholder:
            out += [".RS", roff("Replace " + ", ".join(ex.placeholder) + " with your own."), ".RE"]
    return "\n".join(out)


def man_parser() -> argparse.ArgumentParser:
    p = build_parser()
    p.man_short_description = helptext.SUMMARY
    p.epilog = None                      # its parts are the sections below
    subs = leaves()
    group = p.add_subparsers(title="subcommands", dest="command", metavar="COMMAND")
    for name, sp, about in subs:
        group.add_parser(name, prog=f"kvfit {name}", help=about.split(". ")[0],
                         description=sp.description, parents=[sp], add_help=False)
    p._manpage = [
        {"heading": "synopsis", "content": _synopsis(subs)},
        {"heading": "capacity model", "content": roff(helptext.CAPACITY)},
        {"heading": "exit status", "content": _tagged(helptext.EXIT_CODES)},
        {"heading": "environment", "content": _tagged(helptext.ENVIRONMENT)},
        {"heading": "files", "content": _tagged(helptext.FILES, ".I")},
        {"heading": "examples", "content": _examples()},
    ]
    return p
