"""The parser the man page documents: plan options plus the subcommands.

Regenerate with:
    uv run argparse-manpage --module kvfit.cli.manpage --function man_parser \
        --project-name kvfit --prog kvfit --manual-title "kvfit manual" --output man/kvfit.1
(tests/test_manpage.py checks that the committed page is current).
"""

from __future__ import annotations

from ..audit.cli import build_parser as audit_parser
from ..calibrate.cli import build_parser as calibrate_parser
from .catalog_cmd import parser as catalog_parser
from .explain_log import build_parser as explain_parser
from .fit_cmd import parser as fit_parser
from .hardware_cmd import parser as hardware_parser
from .plan_args import build_parser
from .specs_cmd import build_parser as specs_parser


def man_parser():
    p = build_parser()
    sub = p.add_subparsers(title="subcommands", dest="command", metavar="COMMAND")
    for action in specs_parser()._subparsers._group_actions[0].choices.items():
        name, sp = action
        sub.add_parser(f"specs {name}", help=sp.description or "", parents=[sp], add_help=False)
    for name, sp in hardware_parser()._subparsers._group_actions[0].choices.items():
        sub.add_parser(f"hardware {name}", help=sp.description or sp.format_usage(),
                       parents=[sp], add_help=False)
    for name, sp in catalog_parser()._subparsers._group_actions[0].choices.items():
        sub.add_parser(f"catalog {name}", help=sp.description or "", parents=[sp],
                       add_help=False)
    for name, maker in (("fit", fit_parser), ("calibrate", calibrate_parser),
                        ("audit", audit_parser), ("explain-log", explain_parser)):
        sp = maker()
        sub.add_parser(name, help=sp.description, parents=[sp], add_help=False)
    return p
