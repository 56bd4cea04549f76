"""`kvfit mcp` in a subprocess, driven by the MCP SDK's own client over stdio: one session, kept
open across a test module's tests (a blocking portal runs the client's event loop), so a module
spawns the server once. Offline: the server plans from the catalog and local files only."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path


def server_parameters():
    """`kvfit mcp --offline` as an MCP client would start it (the console script beside this
    interpreter), with this test run's kvfit cache and the Hub switched off."""
    from mcp import StdioServerParameters

    script = Path(sys.executable).with_name("kvfit")
    command, args = ((str(script), ["mcp", "--offline"]) if script.exists()
                     else (sys.executable, ["-m", "kvfit", "mcp", "--offline"]))
    env = {"KVFIT_CACHE_DIR": os.environ["KVFIT_CACHE_DIR"], "HF_HUB_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1"}
    return StdioServerParameters(command=command, args=args, env=env)


class Session:
    """Blocking calls on one open client session."""

    def __init__(self, portal, client, errlog: Path):
        self.portal, self.client, self.errlog = portal, client, errlog

    def tools(self) -> dict:
        return {t.name: t for t in self.portal.call(self.client.list_tools).tools}

    def call(self, name: str, arguments: dict):
        return self.portal.call(self.client.call_tool, name, arguments)

    def stderr(self) -> str:
        """What the server wrote on its stderr so far."""
        return self.errlog.read_text()


@contextmanager
def session(folder: Path):
    """An open session with `kvfit mcp --offline`; its stderr goes to folder/stderr.txt."""
    from anyio.from_thread import start_blocking_portal
    from mcp import Client
    from mcp.client.stdio import stdio_client

    errlog = folder / "stderr.txt"
    with errlog.open("w") as err, start_blocking_portal() as portal:
        client = Client(stdio_client(server_parameters(), errlog=err))
        with portal.wrap_async_context_manager(client):
            yield Session(portal, client, errlog)
