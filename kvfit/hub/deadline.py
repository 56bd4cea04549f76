"""Whole-request deadlines and decoded-size caps for Hub reads.

httpx's timeouts bound each socket read, so a server that drips one byte every half second
never trips them. Here the whole request (connect, headers, every body chunk) runs in a
daemon worker and the caller stops waiting when the deadline passes; the worker notices the
cancellation at its next chunk and closes the response. Bodies are counted after decoding
(Content-Encoding), so a small gzip bomb cannot grow past the cap.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from ..errors import HubError, UsageError

T = TypeVar("T")
MAX_TIMEOUT_S = 86_400.0


class DeadlineExceeded(TimeoutError):
    """The whole request did not finish within its deadline."""


def check_timeout(value: object) -> float:
    """A --timeout value: a finite number of seconds above 0 (at most a day); else UsageError."""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not 0 < seconds <= MAX_TIMEOUT_S:
        raise UsageError(f"--timeout {value!r} is not a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT_S:g}.", hint="Pass e.g. --timeout 10 (the default).")
    return seconds


class Deadline:
    """When a request must be done; check() raises DeadlineExceeded after that or once
    the waiting caller gave up."""

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.cancelled = threading.Event()

    def check(self) -> None:
        if self.cancelled.is_set() or time.monotonic() >= self.at:
            raise DeadlineExceeded


def run_with_deadline(work: Callable[[Deadline], T], seconds: float) -> T:
    """work(deadline) in a daemon thread; DeadlineExceeded if it has not returned in time."""
    deadline = Deadline(seconds)
    box: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = work(deadline)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="kvfit-hub-request", daemon=True).start()
    if not done.wait(seconds):
        deadline.cancelled.set()
        raise DeadlineExceeded
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def read_capped(chunks: Iterable[bytes], deadline: Deadline, *, want: int | None, cap: int,
                what: str) -> bytes:
    """Decoded body bytes: stop after `want` bytes (a Range), refuse more than `cap` bytes
    (HubError), and stop at the deadline (DeadlineExceeded)."""
    parts, total = [], 0
    for chunk in chunks:
        deadline.check()
        parts.append(chunk)
        total += len(chunk)
        if want is not None and total >= want:
            return b"".join(parts)[:want]
        if total > cap:
            raise HubError(f"the answer for {what} is larger than {cap:,} bytes once decoded; "
                           "kvfit stopped reading it.", hint="A metadata file this large is "
                           "not genuine: check HF_ENDPOINT and any proxy in between.")
    deadline.check()
    return b"".join(parts)
