"""The strict [calibration] table of a preset: known keys, right types, sane values, or exit 2."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import UsageError
from ..paths import expand_user
from .commands import check_template

_NUM = (int, float)
_LIST = "array of strings"
KEYS = {
    "engine": str, "mode": str, "python": str, "base_url": str, "host": str, "port": int,
    "server_args": _LIST, "server_command": _LIST, "benchmark_command": _LIST,
    "output_tokens": int, "max_concurrency": int, "concurrency": "array of integers",
    "requests_per_concurrency": int, "startup_timeout": _NUM, "request_timeout": _NUM,
    "metrics_interval": _NUM, "stop_on_failure": bool, "keep_server": bool, "allow_cpu": bool,
    "api_key_env": str, "max_ttft_ms": _NUM, "max_tpot_ms": _NUM, "max_e2e_ms": _NUM,
}


@dataclass(frozen=True, slots=True)
class Calibration:
    """The validated [calibration] table. Times in seconds; SLO thresholds in milliseconds."""

    engine: str
    version: str | None
    mode: str
    python: str
    python_given: str | None
    base_url: str
    host: str
    port: int
    server_args: tuple = ()
    server_command: tuple | None = None
    benchmark_command: tuple | None = None
    output_tokens: int = 1
    max_concurrency: int | None = None
    concurrency: tuple | None = None
    requests_per_concurrency: int = 1
    startup_timeout: float = 1800.0
    request_timeout: float = 3600.0
    metrics_interval: float = 1.0
    stop_on_failure: bool = True
    keep_server: bool = False
    allow_cpu: bool = False
    api_key_env: str | None = None
    slo: dict = field(default_factory=dict)


def _kind_ok(value, want) -> bool:
    if want == _LIST:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if want == "array of integers":
        return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                               for v in value)
    kinds = want if isinstance(want, tuple) else (want,)
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def check_table(table: dict) -> dict:
    """Type-check a raw [calibration] table; unknown keys and wrong types raise UsageError."""
    for key, value in table.items():
        if key not in KEYS:
            raise UsageError(f"unknown key 'calibration.{key}' in the preset.",
                             hint="Known keys: " + ", ".join(sorted(KEYS)) + ".")
        want = KEYS[key]
        if not _kind_ok(value, want):
            name = want if isinstance(want, str) else " or ".join(
                k.__name__ for k in (want if isinstance(want, tuple) else (want,)))
            raise UsageError(f"preset key 'calibration.{key}' should be {name}, "
                             f"got {type(value).__name__}.")
    return table


MAX_SECONDS = 7 * 86_400   # a timeout or interval past a week (or inf) overflows the clocks
SECONDS = ("startup_timeout", "request_timeout", "metrics_interval")


def _positive(t: dict, key: str, default, integer: bool = False):
    value = t.get(key, default)
    if value is not None and not value > 0:
        raise UsageError(f"preset key 'calibration.{key}' must be positive (got {value}).")
    if key in SECONDS and not value <= MAX_SECONDS:
        raise UsageError(f"preset key 'calibration.{key}' must be at most {MAX_SECONDS:,} "
                         f"seconds (a week; got {value}).")
    return value if value is None or integer else float(value)


def _python(given: str | None, base: Path) -> str:
    """The interpreter to run (not checked here: a dry run prints it as given)."""
    if given is None:
        return sys.executable
    if "/" not in given and os.sep not in given:
        return shutil.which(given) or given
    path = expand_user(given)
    return str(path if path.is_absolute() else (base / path))


def _base_url(t: dict, mode: str, host: str, port: int) -> str:
    url = t.get("base_url")
    if url is None:
        if mode == "attach" and "host" not in t and "port" not in t:
            raise UsageError("calibration.mode = \"attach\" needs base_url (or host and port).")
        return f"http://{host}:{port}"
    if mode == "launch":
        raise UsageError("calibration.base_url is for mode = \"attach\"; a launch listens on "
                         "host and port.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except (ValueError, TypeError, AttributeError):
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"calibration.base_url {url!r} must be an http:// or https:// URL.")
    url = url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


def _default_port(engine: str) -> int:
    from ..engines import get
    return get(engine).default_port


def _engine(t: dict) -> tuple[str, str | None]:
    from ..engines.spec import parse_engine
    if "engine" not in t:
        raise UsageError("the [calibration] table needs engine = \"vllm\" or \"sglang\".")
    try:
        return parse_engine(t["engine"])
    except UsageError:
        raise UsageError(f"calibration.engine {t['engine']!r}: choose vllm or sglang "
                         "(optionally @VERSION).") from None


def _lists(t: dict) -> dict:
    conc = t.get("concurrency")
    if conc is not None and (not conc or min(conc) < 1):
        raise UsageError("calibration.concurrency must be a non-empty list of positive integers.")
    for key in ("server_command", "benchmark_command"):
        if key in t:
            check_template(t[key], key)
    return {"server_args": tuple(t.get("server_args", ())),
            "server_command": tuple(t["server_command"]) if "server_command" in t else None,
            "benchmark_command": (tuple(t["benchmark_command"]) if "benchmark_command" in t
                                  else None),
            "concurrency": tuple(sorted(set(conc))) if conc else None}


def _slo(t: dict) -> dict:
    slo = {k: _positive(t, k, None) for k in ("max_ttft_ms", "max_tpot_ms", "max_e2e_ms")}
    slo = {k: v for k, v in slo.items() if v is not None}
    if "max_tpot_ms" in slo and t.get("output_tokens", 1) < 2:
        raise UsageError("calibration.max_tpot_ms needs output_tokens >= 2 (TPOT is the time "
                         "between output tokens).")
    return slo


def parse(table: dict, base: Path, engine_python: str | None = None) -> Calibration:
    """A validated Calibration from a raw table; `base` resolves relative python paths."""
    t = check_table(dict(table))
    engine, version = _engine(t)
    mode = t.get("mode", "launch")
    if mode not in ("launch", "attach"):
        raise UsageError(f"calibration.mode {mode!r}: choose launch or attach.")
    host, port = t.get("host", "127.0.0.1"), t.get("port", _default_port(engine))
    if not 0 < port < 65536:
        raise UsageError(f"calibration.port {port} is not a TCP port.")
    for key in ("server_command", "server_args", "keep_server", "allow_cpu"):
        if mode == "attach" and key in t:
            raise UsageError(f"calibration.{key} applies to mode = \"launch\" only.")
    given = t.get("python", engine_python)
    return Calibration(
        engine=engine, version=version, mode=mode, python=_python(given, base),
        python_given=given, base_url=_base_url(t, mode, host, port), host=host, port=port,
        output_tokens=_positive(t, "output_tokens", 1, True),
        max_concurrency=_positive(t, "max_concurrency", None, True),
        requests_per_concurrency=_positive(t, "requests_per_concurrency", 1, True),
        startup_timeout=_positive(t, "startup_timeout", 1800 if mode == "launch" else 60),
        request_timeout=_positive(t, "request_timeout", 3600),
        metrics_interval=_positive(t, "metrics_interval", 1.0),
        stop_on_failure=t.get("stop_on_failure", True), keep_server=t.get("keep_server", False),
        allow_cpu=t.get("allow_cpu", False), api_key_env=t.get("api_key_env"), slo=_slo(t),
        **_lists(t))


def api_key(cal: Calibration) -> str | None:
    """The secret named by api_key_env (never from the TOML itself); unset is an error."""
    if cal.api_key_env is None:
        return None
    value = os.environ.get(cal.api_key_env)
    if not value:
        raise UsageError(f"calibration.api_key_env names ${cal.api_key_env}, which is not set "
                         "in the environment.")
    return value
