"""Whole-conversation deadlines and decoded-size caps for Hub reads.

Socket timeouts bound each read, so a server that drips one byte every half second never
trips them. Here each request (connect, headers, every body chunk) runs in a daemon
worker and the caller stops waiting when the deadline passes; the worker notices the
cancellation at its next chunk and closes the response. Bodies are counted after decoding
(Content-Encoding), so a small gzip bomb cannot grow past the cap.

`--timeout` is one Budget for all of a plan's Hub requests (and the waits between retries),
counted from the moment the kvfit process started, so that `kvfit ... --timeout 2` has
answered and exited within 2 s however many requests it made and however long the
interpreter took to start. The budget ends exit_reserve() before the limit (15 % of it, at
most 0.5 s) to leave time to write the error, unload and exit.
"""

from __future__ import annotations

import math
import os
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


MAX_START_AGE_S = 30.0   # the console entry asks at once; an older "start" is a clock mismatch


def process_age() -> float:
    """Seconds since this process started (Linux: /proc/self/stat against CLOCK_BOOTTIME),
    or 0.0 where the platform does not say (or says something implausible)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            after_name = stat.read().rsplit(b")", 1)[1].split()
        started = int(after_name[19]) / os.sysconf("SC_CLK_TCK")   # field 22: starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return age if 0.0 <= age <= MAX_START_AGE_S else 0.0


def process_started(clock: Callable[[], float] = time.monotonic) -> float:
    """The `clock` reading at which this process started."""
    return clock() - process_age()


def exit_reserve(seconds: float) -> float:
    """What a budget of `seconds` keeps back to report and exit: 15 %, at most 0.5 s (an
    interpreter holding the Hub libraries takes 0.05-0.2 s to exit on a busy machine)."""
    return min(0.5, seconds * 0.15)


class Budget:
    """--timeout seconds for every Hub request of one plan, from `started` (a `clock`
    reading; default: now), less the exit reserve. left() is what remains (<= 0: spent)."""

    def __init__(self, seconds: float, *, started: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.seconds, self.clock = seconds, clock
        self.end = (clock() if started is None else started) + seconds - exit_reserve(seconds)

    def left(self) -> float:
        return self.end - self.clock()


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
    """work(deadline) in a daemon thread; DeadlineExceeded if it has not returned in time
    (at once, without starting it, when `seconds` <= 0: the budget is spent)."""
    if seconds <= 0:
        raise DeadlineExceeded
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
