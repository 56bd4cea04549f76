"""`kvfit audit FILE [--json]` and the `kvfit-audit` console script."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cli.plan_args import Parser, add_offline


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="kvfit audit", description="Plan every checkpoint x context x fleet named in "
               "an audit TOML, check each state against an independent formula and the matrix "
               "for monotonicity, and report coverage. Exit 0 when every threshold is met, 1 "
               "when one is missed or a check fails, 2 for a bad file.")
    p.add_argument("file", help="audit TOML ([audit], [[models]], [[hardware]], [[systems]])")
    p.add_argument("--json", action="store_true", help="the audit report as JSON")
    add_offline(p, "plan every model from the catalog or cache, whatever the file's [audit] "
                "offline says")
    return p


def run(argv: list[str]) -> int:
    from .config import load_frontier
    from .run import run as run_audit

    args = build_parser().parse_args(argv)
    frontier = load_frontier(Path(args.file))
    if args.offline:
        from dataclasses import replace
        frontier = replace(frontier, offline=True)
    report = run_audit(frontier, quiet=args.json)
    if args.json:
        from ..report.jsonout import render_json
        sys.stdout.write(render_json(report))
    else:
        from .render import render_text
        sys.stdout.write(render_text(report))
    return 0 if report["passed"] else 1


def entry() -> None:
    """Console script `kvfit-audit`."""
    from ..cli.main import main
    sys.exit(main(["audit", *sys.argv[1:]]))
