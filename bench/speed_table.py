"""Where kvfit stands on speed: whole-process wall time as ratios to `python -c pass`.

    uv run python bench/speed_table.py [--runs 7] [--root PATH]

Every case runs `runs` times in fresh processes, round-robin (so a change in machine load
touches every case alike), in two modes:

- bytecode on: .pyc files written by a warm-up run and reused, as on a user's machine;
- bytecode off: PYTHONDONTWRITEBYTECODE=1 and an empty PYTHONPYCACHEPREFIX, so every
  module is compiled from source each run (sandboxes, containers, `uv sync` without
  --compile-bytecode).

Cases marked "empty cache" get a new empty KVFIT_CACHE_DIR for every run (the first run
ever on a machine); the others share one cache warmed by a first run. The Hub is never
contacted (HF_HUB_OFFLINE=1; the catalog case uses kvfit's pinned catalog). The table gives
median milliseconds and the ratio to the bare interpreter start measured in the same go,
then the ratios the speed issue asks about. --root measures another checkout of kvfit (for
a before/after table): the commands run from there with `python -m kvfit`.
Nothing here asserts a time; tests never do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
QWEN = "tests/architectures/qwen3/configs/Qwen--Qwen3-32B"
PLAN = [QWEN, "--context", "32k", "--hardware", "h100-80", "--gpus", "2", "--weight-gib", "61"]
LOG = "tests/fixtures/engine_logs/vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
LLAMA = "tests/fixtures/model-configs/meta-llama--Llama-3.1-8B"
KV = [sys.executable, "-m", "kvfit"]

# name -> (argv, cache): "warm" shares a warmed cache, "empty" gets a new one every run.
CASES = {
    "python -c pass (baseline)": ([sys.executable, "-c", "pass"], "warm"),
    "plan, local, warm": (KV + PLAN, "warm"),
    "plan, catalog (--offline)": (KV + ["Qwen/Qwen2.5-0.5B", "--offline", "--context", "32k"],
                                  "warm"),
    "plan, first run ever": (KV + PLAN, "empty"),
    "plan --engine vllm, warm": (KV + PLAN + ["--engine", "vllm"], "warm"),
    "explain-log (vllm fixture)": (KV + ["explain-log", LOG, "--model-dir", LLAMA], "warm"),
    "specs check, warm": (KV + ["specs", "check"], "warm"),
    "specs check, empty cache": (KV + ["specs", "check"], "empty"),
    "KVFIT_CACHE_DIR=off plan": (KV + PLAN, "off"),
}
RATIOS = [("first run ever / warm plan", "plan, first run ever", "plan, local, warm"),
          ("specs check cold / warm", "specs check, empty cache", "specs check, warm"),
          ("--engine vllm / plain plan", "plan --engine vllm, warm", "plan, local, warm"),
          ("explain-log / plain plan", "explain-log (vllm fixture)", "plan, local, warm"),
          ("warm plan / python -c pass", "plan, local, warm", "python -c pass (baseline)"),
          ("catalog plan / warm plan", "plan, catalog (--offline)", "plan, local, warm")]


def base_env(scratch: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "KVFIT_CACHE_DIR")}
    env.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=str(scratch / "hf"))
    return env


def run_once(argv: list[str], env: dict, root: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                          cwd=root, env=env)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1, 5):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                         f"{proc.stderr.decode()[-2000:]}")
    return took


def measure(root: Path, runs: int, bytecode: bool, scratch: Path) -> dict[str, float]:
    env = base_env(scratch)
    if not bytecode:
        prefix = scratch / "no-pyc"
        prefix.mkdir()
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(prefix))
    warm = scratch / ("warm-on" if bytecode else "warm-off")
    times: dict[str, list[float]] = {name: [] for name in CASES}

    def env_for(cache: str) -> tuple[dict, Path | None]:
        if cache == "warm":
            return dict(env, KVFIT_CACHE_DIR=str(warm)), None
        if cache == "off":
            return dict(env, KVFIT_CACHE_DIR="off"), None
        fresh = Path(tempfile.mkdtemp(prefix="empty-", dir=scratch))
        return dict(env, KVFIT_CACHE_DIR=str(fresh)), fresh

    for argv, cache in CASES.values():                       # warm-up: bytecode, warm cache
        case_env, fresh = env_for(cache)
        run_once(argv, case_env, root)
        if fresh:
            shutil.rmtree(fresh, ignore_errors=True)
    for _ in range(runs):
        for name, (argv, cache) in CASES.items():
            case_env, fresh = env_for(cache)
            times[name].append(run_once(argv, case_env, root))
            if fresh:
                shutil.rmtree(fresh, ignore_errors=True)
    return {name: statistics.median(t) for name, t in times.items()}


def table(results: dict[bool, dict[str, float]]) -> str:
    on, off = results[True], results[False]
    base_on, base_off = on["python -c pass (baseline)"], off["python -c pass (baseline)"]
    out = [f"{'case':<30} {'ms (pyc)':>9} {'x base':>7} {'ms (no pyc)':>12} {'x base':>7}"]
    for name in CASES:
        out.append(f"{name:<30} {on[name] * 1000:>9.0f} {on[name] / base_on:>7.1f} "
                   f"{off[name] * 1000:>12.0f} {off[name] / base_off:>7.1f}")
    out.append("")
    out.append(f"{'ratio':<30} {'pyc':>9} {'no pyc':>20}")
    for label, a, b in RATIOS:
        out.append(f"{label:<30} {on[a] / on[b]:>9.2f} {off[a] / off[b]:>20.2f}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per case and mode (median)")
    ap.add_argument("--root", type=Path, default=HERE, help="the kvfit checkout to measure")
    args = ap.parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="kvfit-speed-") as tmp:
        results = {}
        for bytecode in (True, False):
            scratch = Path(tmp) / ("on" if bytecode else "off")
            scratch.mkdir()
            results[bytecode] = measure(root, args.runs, bytecode, scratch)
    print(f"kvfit at {root}; {args.runs} runs per case; {os.cpu_count()} cpus; "
          f"python {sys.version.split()[0]}")
    print(table(results))


if __name__ == "__main__":
    main()
