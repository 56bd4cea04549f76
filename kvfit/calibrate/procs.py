"""Child processes: each in its own process group, output to a file, stopped as a group."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path

from . import CalibrationError


def child_env(extra: dict | None = None) -> dict:
    """The caller's environment plus unbuffered Python output and `extra`."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env |= extra or {}
    return env


def spawn(argv: list[str], log: Path, env: dict, what: str,
          shown: str | None = None) -> subprocess.Popen:
    """Start `argv` in a new session (its own process group); stdout and stderr go to `log`.
    `shown` is the redacted command for the error message."""
    try:
        with open(log, "ab") as out:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=env, start_new_session=True)
    except OSError as exc:
        raise CalibrationError(f"cannot start the {what} ({shown or argv[0]}): "
                               f"{exc.strerror or exc}.") from None


def stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL after `grace` seconds; always reaps `proc`."""
    if proc.poll() is None:
        _signal(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    _signal(proc, signal.SIGKILL)         # children the leader left behind, too
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


def _signal(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.send_signal(sig)


def run(argv: list[str], log: Path, env: dict, timeout: float, what: str,
        shown: str | None = None) -> tuple[int | None, bool]:
    """Run to completion within `timeout` seconds: (exit status or None, timed out)."""
    proc = spawn(argv, log, env, what, shown)
    try:
        return proc.wait(timeout=timeout), False
    except subprocess.TimeoutExpired:
        stop(proc, grace=5.0)
        return None, True
    finally:
        if proc.poll() is None:          # interrupted (KeyboardInterrupt): leave nothing
            stop(proc, grace=2.0)


def tail(log: Path, start: int = 0, lines: int = 20, limit: int = 1 << 20) -> list[str]:
    """The last `lines` non-empty lines written to `log` after byte offset `start`."""
    text = read_from(log, start, limit)
    return [line.rstrip()[:500] for line in text.splitlines() if line.strip()][-lines:]


def read_from(log: Path, start: int, limit: int = 8 << 20) -> str:
    """Text written to `log` after byte offset `start` (at most `limit` bytes, the last)."""
    try:
        with open(log, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(start, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def size(log: Path) -> int:
    """Bytes in `log` now (0 when it does not exist)."""
    try:
        return log.stat().st_size
    except OSError:
        return 0


@contextmanager
def terminate_as_interrupt():
    """While inside, SIGTERM and SIGHUP raise KeyboardInterrupt, so `finally` blocks stop the
    children (the default handlers would end kvfit and leave a launched server running)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    saved = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
