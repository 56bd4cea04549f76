"""The MCP server: kvfit's tools (kvfit.mcp_server.tools) on the official MCP SDK's low-level
server, over stdio. Needs the `mcp` extra.

A tool's result is its paragraph (text), the same JSON as a second text block (for clients
that read no structured content, as the MCP specification asks) and that JSON as structured
content. Bad input is a tool error (isError) carrying the CLI's paragraph; an unexpected
exception is one paragraph too, never a traceback.
"""

from __future__ import annotations

import json
import os
import traceback

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .. import __version__
from ..errors import KvfitError, UsageError
from ..textsafe import safe
from .tools import TOOLS

INSTRUCTIONS = (
    "kvfit answers whether an exact Hugging Face checkpoint fits given GPUs or systems at a "
    "context and concurrency, counting the architecture's real per-sequence state. Start with "
    "`plan` for one model and one machine; `fit` for 'what can I run on this machine'; "
    "`sweep` to compare several contexts or GPU counts; `explain_log` for an engine's "
    "start-up log. `list_hardware`, `list_systems` and `catalog_search` give the ids the "
    "others take. Quote the text answer; the structured content is the full report.")


# The CLI's exit code of an answer, in the result's _meta (0 fits, 1 not met, 5 not judged...).
EXIT_CODE = "kvfit/exit_code"


def _tool(name: str) -> types.Tool:
    t = TOOLS[name]
    return types.Tool(name=t.name, title=t.title, description=t.description,
                      input_schema=t.schema(),
                      annotations=types.ToolAnnotations(
                          title=t.title, read_only_hint=True, destructive_hint=False,
                          idempotent_hint=True, open_world_hint=t.open_world))


def _error(err: KvfitError) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=err.render())],
        structured_content={"error": err.to_json() | {"exit_code": err.exit_code}},
        is_error=True, meta={EXIT_CODE: err.exit_code})


def _internal(exc: Exception) -> types.CallToolResult:
    """One paragraph for an unexpected exception (a kvfit bug), as the CLI says it."""
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    text = safe(f"kvfit: internal error: {type(exc).__name__}"
                + (f": {detail}" if detail else "")
                + ". This is a kvfit bug; please report it with the tool call that caused it.")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=True, meta={EXIT_CODE: 70})


def answer(name: str, arguments: dict | None, offline: bool = False) -> types.CallToolResult:
    """The result of tool `name` called with `arguments`."""
    try:
        tool = TOOLS.get(name)
        if tool is None:
            raise UsageError(f"no tool named {name[:100]!r}; the tools are "
                             f"{', '.join(TOOLS)}.")
        structured, text, code = tool.call(dict(arguments or {}), offline)
        data = json.dumps(structured)
    except KvfitError as err:
        return _error(err)
    except Exception as exc:  # noqa: BLE001 - no traceback reaches a client
        if os.environ.get("KVFIT_DEBUG"):      # the traceback on stderr, the client's log
            traceback.print_exc()
        return _internal(exc)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text),
                 types.TextContent(type="text", text=data)],
        structured_content=structured, meta={EXIT_CODE: code})


def build(offline: bool = False) -> Server:
    """The server; `offline`: every plan it answers is offline (catalog and local files)."""

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(name) for name in TOOLS])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        # in a worker thread (the API allows it), so the session keeps answering meanwhile
        return await anyio.to_thread.run_sync(answer, params.name, params.arguments, offline)

    return Server("kvfit", version=__version__, title="kvfit",
                  description="Architecture-exact LLM memory planning: will this checkpoint "
                              "fit these GPUs?",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(offline: bool = False) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    server = build(offline)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
