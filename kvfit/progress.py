"""Progress lines on stderr for long work (engine probes, audits, calibration sweeps, Hub
downloads): shown only when the stream is a terminal, the output is not --json and the
environment variable CI is unset; otherwise every call is a no-op.

    with progress("audit", total=len(cells), quiet=as_json) as p:
        for cell in cells:
            p.step(f"{cell.model} at {cell.context:,} tokens")

On a terminal each step rewrites one line ("kvfit audit [3/24] Qwen/Qwen3-32B ...") and
`done` ends it with a newline. The stream is injectable, so tests drive it with a fake TTY
and no clock: nothing here measures time.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

WIDTH = 100


def enabled(stream=None, quiet: bool = False) -> bool:
    """True when progress may be written: a TTY stream, not quiet (--json), CI unset."""
    stream = sys.stderr if stream is None else stream
    if quiet or os.environ.get("CI", "").strip() not in ("", "0", "false"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):      # a closed or detached stream
        return False


class Progress:
    """One task's progress line; every method is a no-op unless `enabled`."""

    def __init__(self, task: str, total: int | None = None, stream=None, quiet: bool = False):
        self.task, self.total, self.done_steps = task, total, 0
        self.stream = sys.stderr if stream is None else stream
        self.on = enabled(self.stream, quiet)
        self._shown = False

    def step(self, what: str = "") -> None:
        """Count one step and show what it is about to do."""
        self.done_steps += 1
        if self.total is not None:
            where = f"[{self.done_steps:,}/{self.total:,}]"
        else:
            where = f"[{self.done_steps:,}]"
        self._write(f"kvfit {self.task} {where} {what}".rstrip())

    def note(self, what: str) -> None:
        """Show a status without counting a step (e.g. 'waiting for the vllm probe')."""
        self._write(f"kvfit {self.task}: {what}")

    def done(self, what: str = "done") -> None:
        """End the line (only if anything was shown)."""
        if self.on and self._shown:
            self._write(f"kvfit {self.task}: {what}")
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False

    def _write(self, line: str) -> None:
        if not self.on:
            return
        from .textsafe import safe

        line = safe(line, keep_newlines=False)
        line = line if len(line) <= WIDTH else line[:WIDTH - 3] + "..."
        self.stream.write("\r" + line.ljust(WIDTH) if self._shown else line.ljust(WIDTH))
        self.stream.flush()
        self._shown = True


@contextmanager
def progress(task: str, total: int | None = None, stream=None, quiet: bool = False):
    """A Progress that is ended on exit (with 'stopped' when an exception leaves the block)."""
    p = Progress(task, total, stream, quiet)
    try:
        yield p
    except BaseException:
        p.done("stopped")
        raise
    p.done()
