"""One engine's preflight result: the probe's JSON checked field by field, or a problem.

Statuses: preflight-pass (config-compatible on the detected backend, not load-tested),
preflight-fail (the engine refused something; its reason is kept), unknown (registry mode
could not decide, e.g. only a generic Transformers fallback could serve the architecture),
unsupported (this engine version does not expose what the probe reads), missing (the engine
is not installed in that interpreter), error (timeout, crash, unreadable output), and with
--engine-probe load smoke-pass / smoke-fail.
"""

from __future__ import annotations

from ..errors import UsageError

STATUSES = ("preflight-pass", "preflight-fail", "unknown", "unsupported", "missing", "error",
            "smoke-pass", "smoke-fail")
PASSING = ("preflight-pass", "smoke-pass")
CHECK_STATUSES = ("pass", "fail", "unknown")
_OPT_STR = (str, type(None))
_KV = {"requested": str, "requested_as": str, "engine": _OPT_STR, "engine_explicit": _OPT_STR,
       "offered": bool, "choices": list}
_INDEX = {"requested": str, "option": _OPT_STR, "value": (bool, str, type(None)),
          "choices": list}


class _Bad(Exception):
    """The probe's output does not have the expected shape."""


def problem(engine: str, reason: str, timed_out: bool = False) -> dict:
    """An `error` result (no traceback: one paragraph)."""
    return {"engine": engine, "status": "error", "version": None, "backend": None,
            "python_version": None, "reason": reason, "checks": [], "implementation": None,
            "kv_cache_dtype": None, "index_cache": None, "engine_flags": [],
            "timed_out": timed_out}


def _field(data: dict, key: str, kinds, where: str = ""):
    value = data.get(key)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in (
            kinds if isinstance(kinds, tuple) else (kinds,))):
        raise _Bad(f"{where}{key} has the wrong type ({type(value).__name__})")
    return value


def _object(data, spec: dict, where: str) -> dict | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise _Bad(f"{where} is not an object")
    out = {k: _field(data, k, kinds, f"{where}.") for k, kinds in spec.items()}
    if not all(isinstance(c, str) for c in out["choices"]):
        raise _Bad(f"{where}.choices must be strings")
    return out


def _checks(items) -> list[dict]:
    if not isinstance(items, list):
        raise _Bad("checks is not a list")
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise _Bad("a check is not an object")
        row = {k: _field(item, k, str, "checks[].") for k in ("name", "status", "detail")}
        if row["status"] not in CHECK_STATUSES:
            raise _Bad(f"check status {row['status']!r} is not one of {CHECK_STATUSES}")
        out.append(row)
    return out


def _parse(engine: str, data) -> dict:
    if not isinstance(data, dict):
        raise _Bad("it is not a JSON object")
    if data.get("protocol") != 1 or data.get("engine") != engine:
        raise _Bad("protocol or engine does not match this kvfit")
    status = _field(data, "status", str)
    if status not in (*STATUSES, "refused"):
        raise _Bad(f"status {status!r} is unknown")
    flags = data.get("engine_flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise _Bad("engine_flags must be a list of strings")
    return {"engine": engine, "status": status,
            "version": _field(data, "version", _OPT_STR),
            "backend": _field(data, "backend", _OPT_STR),
            "python_version": _field(data, "python", _OPT_STR),
            "reason": _field(data, "reason", str), "checks": _checks(data.get("checks", [])),
            "implementation": _field(data, "implementation", _OPT_STR),
            "kv_cache_dtype": _object(data.get("kv_cache_dtype"), _KV, "kv_cache_dtype"),
            "index_cache": _object(data.get("index_cache"), _INDEX, "index_cache"),
            "engine_flags": flags, "timed_out": False}


def from_probe(engine: str, data) -> dict:
    """The result for a parsed probe output; a refusal (load without CUDA) is a usage error."""
    try:
        result = _parse(engine, data)
    except _Bad as exc:
        return problem(engine, f"the {engine} probe's output was not understood: {exc}.")
    if result["status"] == "refused":
        raise UsageError(f"{engine}: {result['reason']}")
    return result
