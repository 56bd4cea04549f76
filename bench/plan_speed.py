"""How fast is a plan? Whole-process wall and cpu time, as ratios to a bare Python start-up.

    uv run python bench/plan_speed.py [--runs 15]

Runs each command `runs` times in fresh processes (what a user or an agent pays per call),
after one warm-up run (bytecode and the validated-spec cache written, as on a user's machine),
and prints the median wall time, its ratio to `python -c pass` measured in the same go (so
figures compare across machines), and the median cpu time (user + system, the child's own
rusage: steadier than wall time on a shared machine). Nothing here asserts a time; tests
never do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from speed_run import run_once

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


def medians(cmd: list[str], runs: int) -> tuple[float, float]:
    """(median wall seconds, median cpu seconds) of `runs` runs after one warm-up."""
    run_once(cmd, ENV, ROOT)                               # warm-up: bytecode and spec cache
    done = [run_once(cmd, ENV, ROOT) for _ in range(runs)]
    return statistics.median(r.wall for r in done), statistics.median(r.cpu for r in done)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    results = {name: medians(cmd, args.runs) for name, cmd in CASES.items()}
    base = results["python -c pass (baseline)"][0]
    print(f"{'command':<34} {'median ms':>10} {'x baseline':>11} {'cpu ms':>7}")
    for name, (wall, cpu) in results.items():
        print(f"{name:<34} {wall * 1000:>10.1f} {wall / base:>11.2f} {cpu * 1000:>7.1f}")


if __name__ == "__main__":
    main()
