"""Run fuzz cases in a worker process (spawned) with a per-case watchdog and a memory cap.

Classes: answered | clean (KvfitError / ExprError: a one-paragraph refusal) | wrong (an
answer breaking an invariant) | traceback (any other exception) | hang (no result within
the watchdog, counted in the worker's CPU seconds; the worker is killed and replaced) |
memory (MemoryError under the cap).
Case i of a kind is built from random.Random(f"{seed}:{kind}:{i}"), so any case can be
rebuilt alone from its index.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import resource
import signal
import sys
from collections import Counter
from pathlib import Path

CLASSES = ("answered", "clean", "wrong", "traceback", "hang", "memory")
MEMORY_CAP = 1 << 30          # 1 GiB over what the worker uses when it starts
POLL_S = 0.25                 # how often the watchdog looks at the worker's CPU time
WALL_FACTOR = 6               # a case waiting (no CPU) this many watchdogs long also hangs


def _spin() -> None:
    while True:
        pass


def _block() -> None:
    import threading
    threading.Event().wait()


WATCHDOG_PROBES = {"_spin": _spin, "_block": _block}


def case_rng(seed: int, kind: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{kind}:{index}")


def classify(kind: str, seed: int, index: int) -> tuple[str, str]:
    """(class, detail) for one case, in this process."""
    from kvfit.errors import KvfitError
    from kvfit.expr import ExprError

    from .targets import TARGETS, Wrong, make_case

    if kind in WATCHDOG_PROBES:                  # the watchdog's own tests: cases that never end
        WATCHDOG_PROBES[kind]()
    try:
        case = make_case(kind, case_rng(seed, kind, index))
    except Exception as exc:  # noqa: BLE001 - a broken generator is reported, not a dead worker
        return "traceback", f"the {kind} generator failed: {type(exc).__name__}: {str(exc)[:160]}"
    try:
        return "answered", TARGETS[kind](case)
    except (KvfitError, ExprError) as exc:
        text = exc.render() if isinstance(exc, KvfitError) else exc.message
        if "Traceback" in text or (isinstance(exc, KvfitError) and "\n" in text):
            return "traceback", f"not one paragraph: {text[:200]}"
        return "clean", text[:200]
    except Wrong as exc:
        return "wrong", str(exc)[:200]
    except MemoryError:
        return "memory", "MemoryError"
    except Exception as exc:  # noqa: BLE001 - the point: any other exception is a finding
        return "traceback", f"{type(exc).__name__}: {str(exc)[:200]}"


def _cap_memory() -> None:
    try:
        with open("/proc/self/status") as status:
            vm = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + MEMORY_CAP, resource.RLIM_INFINITY))
    except (OSError, StopIteration, ValueError):
        pass


def _warm() -> None:
    """Import what the targets use before the first case, so the watchdog times cases only."""
    import gguf  # noqa: F401
    import huggingface_hub.hf_api  # noqa: F401

    import kvfit.calibrate.metrics  # noqa: F401
    import kvfit.engines.logparse  # noqa: F401
    import kvfit.hub.gguf_config  # noqa: F401
    import kvfit.hub.resolver  # noqa: F401
    import kvfit.mcp_server.server  # noqa: F401
    import kvfit.planner.build  # noqa: F401
    import kvfit.report.text  # noqa: F401
    import kvfit.web.app  # noqa: F401

    from . import targets  # noqa: F401


def _worker(conn) -> None:
    _warm()
    _cap_memory()
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        conn.send(classify(*job))


class Pool:
    """One spawned worker at a time; replaced when a case hangs."""

    def __init__(self):
        tests = str(Path(__file__).resolve().parents[1])
        if tests not in sys.path:
            sys.path.insert(0, tests)
        self.ctx = mp.get_context("spawn")   # a fresh interpreter: no locks inherited from threads
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        child.close()              # the worker's end: a worker that dies is EOF here, not a wait
        try:
            ready = self.conn.recv()             # start-up is not timed (imports under load)
        except EOFError:
            ready = None
        if ready != "ready":
            raise RuntimeError("the fuzz worker did not start")

    def run(self, kind: str, seed: int, index: int, watchdog: float) -> tuple[str, str]:
        """A case hangs when the worker spends `watchdog` seconds of CPU on it, or waits
        WALL_FACTOR times as long in wall time (a case blocked on a socket uses no CPU). CPU
        time, not wall time, is what a loaded machine cannot inflate."""
        self.conn.send((kind, seed, index))
        cpu0, wall_limit = self._cpu(), watchdog * WALL_FACTOR
        waited = 0.0
        while not self.conn.poll(min(POLL_S, watchdog)):
            waited += min(POLL_S, watchdog)
            used = self._cpu() - cpu0 if cpu0 is not None else waited
            if used >= watchdog or waited >= wall_limit:
                self._restart()
                return "hang", f"no result after {used:.1f} s of CPU, {waited:.0f} s waited"
        try:
            return self.conn.recv()
        except EOFError:
            pass
        self._restart()
        return "memory", "the worker died (memory cap or crash)"

    def _cpu(self) -> float | None:
        """The worker's user + system CPU seconds (Linux /proc), or None where unreadable."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def _restart(self) -> None:
        if self.proc.is_alive() and self.proc.pid:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.join()
        self._start()

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(timeout=5)


def run_kind(kind: str, cases: int, seed: int = 0, watchdog: float = 10.0,
             pool: Pool | None = None, answers: Counter | None = None
             ) -> tuple[Counter, dict[str, list[tuple[int, str]]]]:
    """Counts per class and up to 5 examples (index, detail) of each finding class;
    `answers` (if given) counts the answered cases' summaries."""
    own = pool is None
    pool = pool or Pool()
    counts: Counter = Counter()
    examples: dict[str, list[tuple[int, str]]] = {}
    try:
        for index in range(cases):
            cls, detail = pool.run(kind, seed, index, watchdog)
            counts[cls] += 1
            if cls == "answered" and answers is not None:
                answers[detail] += 1
            if cls not in ("answered", "clean") and len(examples.setdefault(cls, [])) < 5:
                examples[cls].append((index, detail))
    finally:
        if own:
            pool.close()
    return counts, examples
