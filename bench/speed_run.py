"""Process runs for bench/speed_table.py: wall time, cpu and peak memory of one child each
(os.wait4 gives a child's own rusage), and the local test hub the Hub cases talk to."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Run:
    """One process: wall seconds, cpu seconds (user + system), peak RSS (KiB), Hub requests."""

    wall: float
    cpu: float
    rss_kib: int
    requests: int = 0


# A small launcher times the child: its wall clock starts once the launcher's own imports are
# done, and the child is forked from it rather than from this process (a forked child's peak
# RSS counts the parent's pages it started with, so children of the bench would all report
# the bench's own size).
LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - start
sys.stderr.buffer.write(err[-2000:])
print(json.dumps([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                  os.waitstatus_to_exitcode(status)]))
"""


def run_once(argv: list[str], env: dict, root: Path, hub=None) -> Run:
    """Run argv to the end from `root`; exit codes 0, 1 and 5 are answers, others fail."""
    if hub is not None:
        hub.state.log.clear()
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], capture_output=True,
                          cwd=root, env=env, check=True)
    wall, cpu, rss, code = json.loads(proc.stdout)
    if code not in (0, 1, 5):
        raise SystemExit(f"{' '.join(argv)} failed ({code}):\n{proc.stderr.decode()}")
    return Run(wall, cpu, rss, hub.state.count() if hub is not None else 0)


def start_hub():
    """The standard test hub (tests/hubserver) on 127.0.0.1: (server, HF_TOKEN for its gated
    repos). Nothing leaves the machine."""
    sys.path.insert(0, str(HERE / "tests"))
    from hubserver import HubServer
    from hubserver.repos import GOOD_TOKEN, build_standard_hub

    server = HubServer()
    build_standard_hub(server.state)
    server.start()
    return server, GOOD_TOKEN


def sha_of(server, repo: str) -> str:
    """The commit the test hub's main branch of `repo` points at."""
    return server.state.repos[repo].refs["main"]


HUB_AUDIT = """[audit]
name = "four test-hub models"
offline = false
{models}
[[hardware]]
preset = "h100-80"
counts = [1, 2, 4, 8]
[[hardware]]
preset = "rtx-5090-32"
counts = [1, 2, 4, 8]
[[systems]]
preset = "dgx-h100"
node_counts = [1, 2, 4, 8]
"""
HUB_MODELS = ("kvfit-test/tiny-qwen3", "kvfit-test/moving", "kvfit-test/gated",
              "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")


def hub_audit_file(path: Path, server=None) -> Path:
    """A 4-model x 2-context x 12-fleet audit of the test hub; with `server`, every model is
    pinned to the commit its main branch points at."""
    rows = []
    for model in HUB_MODELS:
        if server is not None:
            repo = model.removeprefix("hf://").split("/")[:2]
            sha = sha_of(server, "/".join(repo))
            model = (f"hf://{'/'.join(repo)}@{sha}/tiny-Q8_0.gguf" if model.startswith("hf://")
                     else f"{model}@{sha}")
        rows.append(f'[[models]]\nfamily = "qwen3"\nmodel = "{model}"\n'
                    'contexts = ["4k", "8k"]\nrequired = false')
    path.write_text(HUB_AUDIT.format(models="\n".join(rows)))
    return path
