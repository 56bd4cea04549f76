"""HTTP to the serving endpoint (stdlib urllib, no proxies): readiness and what it reports."""

from __future__ import annotations

import json
import time
from urllib.error import HTTPError, URLError
from urllib.request import ProxyHandler, Request, build_opener

from . import CalibrationError

_OPENER = build_opener(ProxyHandler({}))      # straight to the endpoint, never via a proxy
MAX_BODY = 4 << 20


class _Late(Exception):
    """The body did not end by the deadline."""


def _body(resp, deadline: float) -> str:
    """At most MAX_BODY bytes of the body, whatever its framing (http.client's read(n) of a
    chunked body with chunk size -1 reads to the end of the stream uncapped; read1 asks the
    socket once per call); _Late when it has not ended by the deadline."""
    got, total = [], 0
    while total < MAX_BODY:
        if time.monotonic() > deadline:
            raise _Late
        data = resp.read1(1 << 16)
        if not data:
            break
        got.append(data)
        total += len(data)
    return b"".join(got)[:MAX_BODY].decode("utf-8", "replace")


MIN_BODY_S = 10.0          # a slow machine still reads a /metrics page; a drip still ends


def get(url: str, timeout: float, key: str | None = None) -> tuple[int | None, str]:
    """(HTTP status or None when unreachable, body text or the connection error); `timeout`
    bounds each socket wait, and the body ends within max(timeout, MIN_BODY_S) seconds and
    MAX_BODY bytes."""
    from http.client import HTTPException

    limit = max(timeout, MIN_BODY_S)
    deadline = time.monotonic() + limit
    req = Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            return resp.status, _body(resp, deadline)
    except HTTPError as exc:
        try:
            return exc.code, _body(exc, deadline)
        except (OSError, HTTPException, _Late):
            return exc.code, ""
    except _Late:
        return None, f"the answer did not end within {limit:g} s"
    except (URLError, OSError, ValueError, HTTPException) as exc:
        return None, str(getattr(exc, "reason", exc))[:300]


def get_json(url: str, timeout: float, key: str | None = None):
    """The parsed JSON body of a 200 answer, else None."""
    status, body = get(url, timeout, key)
    if status != 200:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def wait_ready(base: str, timeout: float, key: str | None, alive=None,
               interval: float = 0.5) -> float:
    """Poll GET /health, then /v1/models, until one answers 200; seconds waited.

    alive: a callable returning an error text when the launched server has exited (launch
    mode). Bounded by `timeout` seconds and timeout / interval + 2 polls."""
    start = time.monotonic()
    last = "no answer yet"
    for _ in range(int(timeout / interval) + 2):
        for path in ("/health", "/v1/models"):
            status, body = get(base + path, min(5.0, timeout), key)
            if status == 200:
                return round(time.monotonic() - start, 3)
            last = f"GET {path}: " + (f"HTTP {status}" if status else body)
        dead = alive() if alive else None
        if dead:
            raise CalibrationError(dead)
        if time.monotonic() - start >= timeout:
            break
        time.sleep(interval)
    raise CalibrationError(f"{base} was not ready within startup_timeout {timeout:g} s "
                           f"({last}).")


def _models(data) -> list[dict]:
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return []
    return [{"id": str(r.get("id")), "max_model_len": r.get("max_model_len")
             if isinstance(r.get("max_model_len"), int) else None}
            for r in rows[:32] if isinstance(r, dict) and r.get("id")]


def metadata(base: str, engine: str, key: str | None) -> dict:
    """What the endpoint reports about itself: served models (/v1/models), and what the
    engine says (Engine.metadata: vLLM /version; SGLang /server_info or /get_server_info with
    the cache dtype and TP/DP sizes). Missing answers stay None."""
    out = {"models": _models(get_json(base + "/v1/models", 10.0, key)), "version": None,
           "version_source": None, "server_info": None}
    from ..engines import get
    return out | get(engine).metadata(base, key, get_json)
