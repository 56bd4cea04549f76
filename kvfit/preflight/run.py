"""Run one probe script in the engine's interpreter, with a timeout, and read its one JSON object."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from ..checkpoint.jsonfile import parse_json
from ..errors import ConfigError, UsageError
from .options import EngineCheck
from .result import from_probe, problem

HERE = Path(__file__).resolve().parent
MAX_OUTPUT = 1024 * 1024


def _env(check: EngineCheck, tmp: Path, offline: bool, engine) -> dict:
    """The probe's environment: the caller's, plus no downloads (except load), no telemetry,
    no bytecode or engine caches written outside the temporary directory."""
    env = dict(os.environ)
    env |= {"HF_HUB_DISABLE_TELEMETRY": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    env |= engine.probe_env(tmp, load=check.probe == "load")
    if check.probe != "load" or offline:
        env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return env


def _stop(proc: subprocess.Popen) -> None:
    """Kill the probe and everything it started (its own process group), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def _last_line(err: bytes) -> str:
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    return f" Its last stderr line: {lines[-1][:300]}" if lines else ""


def run_probe(engine: str, check: EngineCheck, argv: list[str], tmp: Path,
              offline: bool, quiet: bool = False, stream=None) -> dict:
    """The engine's result (see result.from_probe); a timeout is an `error` with timed_out.
    On a terminal's stderr (unless `quiet`) a line says which probe is running and its limit."""
    from ..progress import progress

    with progress(f"--check-engine {engine}", stream=stream, quiet=quiet) as p:
        p.note(f"{check.probe} probe in {check.python_given} (up to {check.timeout:g} s; an "
               "engine import can take minutes)")
        return _probe(engine, check, argv, tmp, offline)


def _probe(engine: str, check: EngineCheck, argv: list[str], tmp: Path, offline: bool) -> dict:
    from ..engines import get

    eng = get(engine)
    cmd = [check.python, str(HERE / eng.probe_script), *argv]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=tmp, env=_env(check, tmp, offline, eng),
                                start_new_session=True)
    except OSError as exc:
        raise UsageError(f"--engine-python {check.python_given}: cannot run it "
                         f"({exc.strerror or exc}).") from None
    try:
        out, err = proc.communicate(timeout=check.timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return problem(engine, f"the {engine} probe did not answer within --engine-timeout "
                       f"{check.timeout:g} s and was stopped.", timed_out=True)
    return interpret(engine, proc.returncode, out, err)


def interpret(engine: str, code: int, out: bytes, err: bytes) -> dict:
    """Strictly parse the probe's stdout; anything else is an `error` result."""
    if not out.strip():
        return problem(engine, f"the {engine} probe printed no result (exit status {code})."
                       + _last_line(err))
    if len(out) > MAX_OUTPUT:
        return problem(engine, f"the {engine} probe printed more than 1 MiB; not a result.")
    try:
        data = parse_json(out, f"the {engine} probe's output")
    except ConfigError as exc:
        return problem(engine, f"{exc.message} (exit status {code})." + _last_line(err))
    return from_probe(engine, data)
