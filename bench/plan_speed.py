"""How fast is a plan? Whole-process wall time, as ratios to a bare Python start-up.

    uv run python bench/plan_speed.py [--runs 15]

Runs each command `runs` times in fresh processes (what a user or an agent pays per call),
after one warm-up run (bytecode and the validated-spec cache written, as on a user's machine),
and prints the median wall time and its ratio to `python -c pass` measured in the same go,
so figures compare across machines. Nothing here asserts a time; tests never do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
CASES = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "import kvfit.cli.main": [sys.executable, "-c", "import kvfit.cli.main"],
    "kvfit --version": [sys.executable, "-m", "kvfit", "--version"],
    "plan, state only": [sys.executable, "-m", "kvfit", str(QWEN), "--context", "32k"],
    "plan, 8 x H100 layouts, JSON": [sys.executable, "-m", "kvfit", str(QWEN), "--hardware",
                                     "h100-80", "--gpus", "8", "--weight-gib", "61", "--json"],
    "specs check (whole corpus)": [sys.executable, "-m", "kvfit", "specs", "check"],
}


# What a user's machine does: write and reuse bytecode (some sandboxes disable it).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_seconds(cmd: list[str], runs: int) -> float:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   cwd=ROOT, env=ENV)                      # warm-up: bytecode and spec cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                              cwd=ROOT, env=ENV)
        if proc.returncode not in (0, 1, 5):
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()[-2000:]}")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    results = {name: median_seconds(cmd, args.runs) for name, cmd in CASES.items()}
    base = results["python -c pass (baseline)"]
    print(f"{'command':<34} {'median ms':>10} {'x baseline':>11}")
    for name, secs in results.items():
        print(f"{name:<34} {secs * 1000:>10.1f} {secs / base:>11.2f}")


if __name__ == "__main__":
    main()
