"""`kvfit mcp`: serve kvfit's plan to agents over MCP's stdio transport (kvfit.mcp_server)."""

from __future__ import annotations

import textwrap
from importlib.util import find_spec

from ..errors import UsageError
from .plan_args import Formatter, Parser, add_offline


def missing() -> str:
    """How to get the MCP SDK: the checkout's extra from a source checkout, else a pip
    install into the interpreter kvfit runs in (an installed wheel has no checkout)."""
    import sys

    from ..paths import data_root

    root = data_root()
    head = ("`kvfit mcp` serves over the official MCP Python SDK (the optional extra `mcp`), "
            "which is not installed in this environment. ")
    tail = "; nothing else in kvfit needs it."
    if (root / "pyproject.toml").is_file() and (root / "kvfit").is_dir():
        return head + (f"In this source checkout ({root}) run `uv run --extra mcp kvfit mcp` "
                       "(or `uv sync --extra mcp` once)") + tail
    return head + (f"Install it into the environment kvfit runs in: `{sys.executable} -m pip "
                   "install 'mcp>=2.3'`") + tail


def parser() -> Parser:
    p = Parser(prog="kvfit mcp", formatter_class=Formatter,
               description=textwrap.fill(
                   "Serve kvfit to an agent as an MCP server on standard input and output "
                   "(stdio transport): the tools plan, fit, sweep, explain_log, list_hardware, "
                   "list_systems and catalog_search, each answering with the report the CLI's "
                   "--json prints and a paragraph to quote. Register it in an MCP client as "
                   "the command `kvfit mcp` (docs/agent-skill.md). Needs the extra `mcp`.",
                   79),
               epilog="examples:\n  kvfit mcp\n  kvfit mcp --offline\n"
                      "  uv run --extra mcp kvfit mcp      (from a source checkout)")
    add_offline(p, "every plan the server answers is offline: kvfit's pinned catalog and "
                   "local files, never the Hub")
    return p


def run(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    if find_spec("mcp") is None:
        raise UsageError(missing())
    from ..mcp_server.server import serve_stdio

    serve_stdio(offline=ns.offline)
    return 0
