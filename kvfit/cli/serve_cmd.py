"""`kvfit serve`: the local web page and JSON API (kvfit.web), run by uvicorn."""

from __future__ import annotations

import errno
import socket
import sys
import textwrap

from ..errors import UsageError
from .plan_args import Formatter, Parser, add_offline

EPILOG = """\
The page keeps the question in its address, so a link reproduces the answer:
  /?model=Qwen/Qwen3-32B&hardware=h100-80&gpus=8&context=32k
/fit is `kvfit fit` as a page. The JSON API (/api/plan, /api/sweep, /api/fit,
/api/explain-log, /api/hardware, /api/systems, /api/catalog) returns what the
matching `kvfit ... --json` prints, described by /openapi.json. Needs the
optional `web` extra: from a checkout, uv run --extra web kvfit serve
(elsewhere, pip install starlette uvicorn into kvfit's environment).

examples:
  kvfit serve
  kvfit serve --port 8080 --offline
"""
MISSING = ("kvfit serve needs the optional `web` extra (Starlette and uvicorn), which is not "
           "installed here{detail}.")
MISSING_HINT = ("From a checkout run `uv run --extra web kvfit serve`; elsewhere install "
                "Starlette and uvicorn into kvfit's environment (pip install starlette uvicorn).")


def _port(text: str) -> int:
    from ..numbers import whole
    return whole(text, "--port", 1, 65535)


_port.__name__ = "int"


def parser() -> Parser:
    p = Parser(prog="kvfit serve", formatter_class=Formatter, epilog=EPILOG,
               description=textwrap.fill("Serve kvfit's page and JSON API on this machine: a "
               "model box with catalog suggestions, hardware and system pickers, and the "
               "answer (verdict, layouts, capacity chart, per-rank memory bars, what would "
               "fit, the equivalent kvfit command and the engine's launch command). Binds "
               "127.0.0.1 unless told otherwise.", 79))
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: "
                   "this machine only; the page reads local checkpoint folders)")
    p.add_argument("--port", type=_port, default=8000, help="TCP port (default 8000)")
    add_offline(p, "never contact the Hugging Face Hub: every plan is answered from kvfit's "
                "offline catalog or a local folder")
    return p


def _check_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise UsageError(MISSING.format(detail=f" ({exc.name} is missing)" if exc.name else ""),
                         hint=MISSING_HINT) from None


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, so a taken port or a bad address is one paragraph (exit 2)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(f"--host {host[:100]!r} is not an address this machine can bind "
                         f"({exc}).", hint="Use --host 127.0.0.1 (the default).") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"port {port} on {host} is already in use (another kvfit serve, or "
                             "another server, is listening there).",
                             hint="Stop it, or pick another port: kvfit serve --port 8080.") from None
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.",
                         hint="Pick another --host or --port.") from None
    sock.listen(128)
    return sock


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def run(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    _check_extra()
    import uvicorn

    from ..web.app import create_app

    sock = _bind(ns.host, ns.port)
    loopback = ns.host in ("127.0.0.1", "localhost", "::1")
    hosts = None if loopback else ["*"]
    app = create_app(offline=ns.offline, allowed_hosts=hosts)
    print(f"kvfit serve: {url(ns.host, ns.port)} (Ctrl-C stops it)"
          + (" - offline: answers come from kvfit's catalog and local folders" if ns.offline
             else ""), flush=True)
    if not loopback:
        print(f"kvfit serve: bound to {ns.host}, not this machine only: anyone who can reach "
              "it can plan with its local checkpoint folders.", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
    return 0
