"""`kvfit serve --offline` as a child process on a free port, for the tests that need a real
server (the browser tests, the command's own test)."""

from __future__ import annotations

import subprocess
import sys

from conftest import launch_port


def serve(env=None, tries: int = 5) -> tuple[subprocess.Popen, str]:
    """(the process, the URL it printed once listening). A port another process took
    between launch_port's probe and the child's bind is tried again with the next one."""
    for _ in range(tries):
        proc = subprocess.Popen([sys.executable, "-m", "kvfit", "serve", "--port",
                                 str(launch_port()), "--offline"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        line = proc.stdout.readline()               # printed once the socket listens
        if line.startswith("kvfit serve: http://127.0.0.1:"):
            return proc, line.split()[2]
        proc.kill()
        _, err = proc.communicate(timeout=60)
        if "is already in use" not in err:
            raise AssertionError(f"kvfit serve did not start: {line!r} {err[-2000:]}")
    raise AssertionError(f"kvfit serve found no free port in {tries} tries")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.communicate(timeout=60)
