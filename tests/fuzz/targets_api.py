"""Targets for the Python API, the web app and the MCP tools: api_options (kvfit.plan /
kvfit.sweep / kvfit.fit keywords), web_requests (kvfit.web's app in-process, through
Starlette's TestClient) and mcp_arguments (kvfit.mcp_server.server.answer, the tool-call
handler without the stdio transport). An answer is a result, a refusal is kvfit.KvfitError
(or a 4xx / isError result) with one paragraph; anything else is a finding."""

from __future__ import annotations

import math

from .checks import _check
from .gen_api import MODEL
from .targets_plan import check_report

# options whose value is a number: none of these values may be answered
NUMERIC = {"gpus", "nodes", "pp", "users", "concurrent_users", "utilization",
           "max_model_len", "max_num_seqs", "block_size", "weight_gib", "runtime_reserve_gib",
           "device_memory_gib", "timeout", "gpu_memory_utilization"}


def _never(value) -> bool:
    """A value no number field may take: NaN, infinities, huge, non-ASCII digits, empty."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value > 10 ** 100
    if isinstance(value, str):
        return value in ("nan", "inf", "1e309", "²", "١٢", "１２", "", " ", "\0", "9" * 5000)
    return False


def _given_never(opts: dict) -> list[str]:
    return [n for n, v in opts.items() if n in NUMERIC and _never(v)]


def api_options(case: tuple[str, dict]) -> str:
    import kvfit

    func, opts = case
    if func == "fit":
        result = kvfit.fit(**opts)
        _check(isinstance(result.to_json(), dict), "fit answered no object")
    elif func == "sweep":
        result = kvfit.sweep(MODEL, **(opts | {"offline": True}))
        _check("sweep" in result.to_json(), "a sweep report without its cells")
    else:
        result = kvfit.plan(MODEL, **(opts | {"offline": True}))
        check_report(result)
    bad = _given_never(opts)
    _check(not bad, f"answered with {bad} = {[str(opts[n])[:20] for n in bad]}")
    return func


_CLIENT: dict = {}


def _client():
    """One TestClient on kvfit.web's app (offline, as tests/web builds it) per worker."""
    if "c" not in _CLIENT:
        from starlette.testclient import TestClient

        from kvfit.web.app import create_app
        _CLIENT["c"] = TestClient(create_app(offline=True), base_url="http://127.0.0.1",
                                  raise_server_exceptions=False)
    return _CLIENT["c"]


def web_requests(case: tuple[str, str, str, bytes, str]) -> str:
    from kvfit.errors import KvfitError

    method, route, query, body, ctype = case
    url = route + (f"?{query}" if query else "")
    headers = {"content-type": ctype} if ctype else {}
    response = _client().request(method, url, content=body or None, headers=headers)
    status, text = response.status_code, response.text
    if status >= 500 or "Traceback" in text:
        # a finding: the runner counts it as an internal error
        raise RuntimeError(f"{method} {route[:40]} -> {status}: {text[:200]}")
    if status >= 400:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else None
        if not isinstance(message, str) or not message or "\n" in message:
            raise RuntimeError(f"{status} without one paragraph: {text[:200]}")
        raise KvfitError(message)        # a clean refusal
    _check(200 <= status < 300, f"status {status}")
    return f"{method} {route}"


def mcp_arguments(case: tuple[str, dict | None]) -> str:
    from kvfit.errors import KvfitError
    from kvfit.mcp_server.server import EXIT_CODE, answer

    tool, args = case
    result = answer(tool, args, offline=True)
    text = " ".join(c.text for c in result.content)
    code = (result.meta or {}).get(EXIT_CODE)
    if "Traceback" in text or code == 70:
        raise RuntimeError(f"{tool[:20]}: exit {code}: {text[:200]}")
    if result.is_error:
        if len(result.content) != 1 or "\n" in result.content[0].text.strip():
            raise RuntimeError(f"{tool[:20]}: not one paragraph: {text[:200]}")
        raise KvfitError(result.content[0].text)
    _check(isinstance(result.structured_content, dict), "no structured content")
    return tool


TARGETS = {"api_options": api_options, "web_requests": web_requests,
           "mcp_arguments": mcp_arguments}
