"""Run `kvfit ARGS` in a child process under the hostile-input bounds: at most 512 MiB of
address space (RLIMIT_AS) and killed after `timeout` seconds (a hang fails the test, it does
not stall the suite). No timing is asserted: the timeout only ends what never ends."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

MEMORY_CAP = 512 << 20
NO_NVML = Path(__file__).resolve().parent / "no_nvml"      # a pynvml that fails to import


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_bounded(*args, env: dict | None = None, stdin=None,
                timeout: float = 120.0) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `python -m kvfit ARGS` under the caps; exit code -9
    (killed) when it outlived `timeout`. stdin: bytes, or an open file the child reads."""
    full = dict(os.environ) | (env or {})
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(NO_NVML), full.get("PYTHONPATH")]))
    given = isinstance(stdin, bytes)
    proc = subprocess.Popen([sys.executable, "-m", "kvfit", *map(str, args)], env=full,
                            stdin=subprocess.PIPE if given else (stdin or subprocess.DEVNULL),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_cap)
    try:
        out, err = proc.communicate(stdin if given else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return -9, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def refused(code: int, out: str, err: str, needle: str = "") -> None:
    """Exit 2 with one paragraph on stderr (containing `needle`), nothing else."""
    assert code == 2, (code, out[-300:], err[-600:])
    assert err.startswith("kvfit: ") and err.count("\n") == 1, err[-600:]
    assert "Traceback" not in err and "internal error" not in err, err[-600:]
    assert needle in err, err[-600:]
