"""Where kvfit stands against its speed budgets (issue 22, "performance as a budget").

    uv run python bench/speed_table.py [--runs 5] [--root PATH] [--before PATH]

Every case runs `runs` times in fresh processes, round-robin (so a change in machine load
touches every case alike), with bytecode on (.pyc files written by a warm-up run, as on a
user's machine) and off (PYTHONDONTWRITEBYTECODE=1: every module compiled each run). Cases
marked "empty cache" get a new empty KVFIT_CACHE_DIR for every run; the others share one
cache warmed by a first run. The real Hub is never contacted: the "hub" cases talk to the
local test hub (tests/hubserver, started here on 127.0.0.1) and count its requests; the rest
run with HF_HUB_OFFLINE=1. The in-process case plans a catalog model with
kvfit.planner.build.plan in a loop in one process (what a library user or a server pays per
plan). The table gives medians, then each budget with its figure:

    warm CLI plan                        <= 150 ms wall
    in-process plan, catalog model       <= 10 ms median
    Hub requests per plan                cold <= 3, warm branch <= 2, pinned 0
    --systems search to 1,024 nodes      <= ~15 topology evaluations (a layout evaluation
                                         of one node count on one memory basis, counted
                                         in-process; the search is answered by them)

--root measures another checkout: the commands run from there with `python -m kvfit`.
--before PATH measures a second checkout in the same rounds (each case runs for both, in
turn) and the budget table gets a before and an after column. Nothing here asserts a time;
tests never do (request and evaluation counts are asserted in tests/hub and
tests/test_search_cost.py). A missed budget is said in a note with its profile, not squeezed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from speed_run import HERE, hub_audit_file, run_once, sha_of, start_hub

QWEN = "tests/architectures/qwen3/configs/Qwen--Qwen3-32B"
PLAN = [QWEN, "--context", "32k", "--hardware", "h100-80", "--gpus", "2", "--weight-gib", "61"]
LOG = "tests/fixtures/engine_logs/vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
LLAMA = "tests/fixtures/model-configs/meta-llama--Llama-3.1-8B"
KV = [sys.executable, "-m", "kvfit"]
# --timeout: the Hub budget counts from process start, and a loaded machine compiling every
# module from source (bytecode off) can spend most of the default 10 s before the first request.
HUB = ["kvfit-test/tiny-qwen3", "--context", "32k", "--hardware", "h100-80", "--timeout", "120"]
# Qwen3-32B with 700 GiB of weights on DGX H100: TP=16 on 2 nodes answers (cross-domain) and no
# node-local layout ever fits, the case where the search used to walk on to --max-nodes; with
# 100,000 users no count fits at all (the walk to N is the answer's own work).
SEARCH = [QWEN, "--context", "32k", "--weight-gib", "700", "--systems", "dgx-h100",
          "--max-nodes"]
NEVER = [QWEN, "--context", "32k", "--weight-gib", "61", "--concurrent-users", "100000",
         "--systems", "dgx-h100", "--max-nodes"]
AUDIT = ["audit", "examples/audit/open-frontier.toml"]
CATALOG = ["Qwen/Qwen2.5-0.5B", "--offline", "--context", "32k"]
# In one process: plan the catalog model on 8 x H100 `loops` times after one warm-up plan; print
# the median milliseconds of one plan.
IN_PROCESS_PLAN = [*CATALOG, "--hardware", "h100-80", "--gpus", "8"]
IN_PROCESS = f"""
import statistics, sys, time
try:
    from kvfit.api.request import request_from
except ImportError:                   # a checkout from before kvfit.api (--before)
    from kvfit.cli.request import request_from
from kvfit.cli.plan_args import build_parser
from kvfit.planner.build import plan
req = request_from(vars(build_parser().parse_args({IN_PROCESS_PLAN!r})))
plan(req)
times = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    plan(req)
    times.append(time.perf_counter() - t)
print(statistics.median(times) * 1000)
"""

# The topologies a search evaluates: placements.run_topology calls in one process (the
# search's own, then the chosen count's full placement and its other-basis comparison).
EVALUATIONS = """
import contextlib, io, sys
from kvfit.cli.main import main
from kvfit.planner import placements
calls, real = [], placements.run_topology
placements.run_topology = lambda *a, **k: (calls.append(1), real(*a, **k))[1]
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(len(calls))
"""
COUNTED = {"search N=1024": SEARCH + ["1024"], "search N=1024, never fits": NEVER + ["1024"]}

# name -> (argv, cache): "warm" shares a warmed cache, "empty" gets a new one every run, "off"
# is KVFIT_CACHE_DIR=off; "hub ..." cases talk to the local test hub.
CASES = {
    "python -c pass (baseline)": ([sys.executable, "-c", "pass"], "warm"),
    "plan, local, warm": (KV + PLAN, "warm"),
    "plan, catalog (--offline)": (KV + CATALOG, "warm"),
    "plan, first run ever": (KV + PLAN, "empty"),
    "plan --engine vllm, warm": (KV + PLAN + ["--engine", "vllm"], "warm"),
    "explain-log (vllm fixture)": (KV + ["explain-log", LOG, "--model-dir", LLAMA], "warm"),
    "specs check, warm": (KV + ["specs", "check"], "warm"),
    "specs check, empty cache": (KV + ["specs", "check"], "empty"),
    "KVFIT_CACHE_DIR=off plan": (KV + PLAN, "off"),
    "hub plan, cold": (KV + HUB, "hub empty"),
    "hub plan, warm branch": (KV + HUB, "hub warm"),
    "hub plan, warm pinned": (KV + HUB, "hub pinned"),
    "audit, bundled (offline)": (KV + AUDIT, "warm"),
    "audit, 4 hub models, cold": (KV + ["audit", "{audit}"], "hub empty"),
    "audit, 4 hub models, pinned": (KV + ["audit", "{pinned_audit}"], "hub warm"),
    "search N=8": (KV + SEARCH + ["8"], "warm"),
    "search N=128": (KV + SEARCH + ["128"], "warm"),
    "search N=1024": (KV + SEARCH + ["1024"], "warm"),
    "search N=8, never fits": (KV + NEVER + ["8"], "warm"),
    "search N=1024, never fits": (KV + NEVER + ["1024"], "warm"),
}
def _ms(case: str):
    """A case's median wall ms, with its cpu ms (wall runs above cpu on a loaded machine)."""
    return lambda r: f"{r[case]['wall'] * 1000:.0f} ({r[case]['cpu'] * 1000:.0f} cpu)"


def _ratio(a: str, b: str):
    return lambda r: (f"{r[a]['wall'] / r[b]['wall']:.1f} "
                      f"({r[a]['cpu'] / r[b]['cpu']:.1f} cpu)")


# (budget, its figure from the bytecode-on medians, bar)
BUDGETS = [
    ("warm CLI plan, ms wall", _ms("plan, local, warm"), "<= 150"),
    ("warm CLI plan, catalog model, ms wall", _ms("plan, catalog (--offline)"), "<= 150"),
    ("Hub requests, cold plan", lambda r: f"{r['hub plan, cold']['requests']:.0f}", "<= 3"),
    ("Hub requests, warm branch", lambda r: f"{r['hub plan, warm branch']['requests']:.0f}",
     "<= 2"),
    ("Hub requests, pinned", lambda r: f"{r['hub plan, warm pinned']['requests']:.0f}", "0"),
    ("search to 1,024 nodes, evaluations", lambda r: f"{r['evaluations']['search N=1024']}",
     "~15"),
    ("search never fits 1,024 nodes, evaluations",
     lambda r: f"{r['evaluations']['search N=1024, never fits']}", "~15"),
    ("search never fits 1,024 nodes / warm plan",
     _ratio("search N=1024, never fits", "plan, local, warm"), ""),
]


def in_process(root: Path, env: dict, loops: int = 50) -> float:
    """Median ms of kvfit.planner.build.plan for the catalog model on 8 x H100, `loops` plans in
    one process."""
    out = subprocess.run([sys.executable, "-c", IN_PROCESS, str(loops)], cwd=root, env=env,
                         capture_output=True, text=True, check=True, timeout=600).stdout
    return float(out.strip().splitlines()[-1])


def evaluations(root: Path, env: dict) -> dict[str, int]:
    """Topologies each COUNTED search evaluates (deterministic: a count, not a time)."""
    return {name: int(subprocess.run([sys.executable, "-c", EVALUATIONS, *argv], cwd=root,
                                     env=env, capture_output=True, text=True, check=True,
                                     timeout=600).stdout.split()[-1])
            for name, argv in COUNTED.items()}


def base_env(scratch: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "KVFIT_CACHE_DIR",
                        "HF_TOKEN", "HF_ENDPOINT")}
    env.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=str(scratch / "hf"),
               CI="1")
    return env


def measure(roots: list[Path], runs: int, bytecode: bool, scratch: Path, hub
            ) -> dict[Path, dict[str, dict]]:
    """Median wall, cpu, rss and requests per root and case, the cases (and for each case
    the roots) taken round-robin."""
    cases = {root: _cases(root, bytecode, scratch / f"root{i}", hub)
             for i, root in enumerate(roots)}
    for root in roots:                                       # warm-up: bytecode, warm caches
        for name in CASES:
            cases[root](name)
    runs_of: dict[Path, dict[str, list]] = {root: {name: [] for name in CASES} for root in roots}
    for _ in range(runs):
        for name in CASES:
            for root in roots:
                runs_of[root][name].append(cases[root](name))
    return {root: {name: {k: statistics.median(getattr(r, k) for r in rs)
                          for k in ("wall", "cpu", "rss_kib", "requests")}
                   for name, rs in of.items()} for root, of in runs_of.items()}


def _cases(root: Path, bytecode: bool, scratch: Path, hub):
    """A function running one named case from `root` and returning its Run."""
    scratch.mkdir(parents=True)
    server, token = hub
    env = base_env(scratch)
    if not bytecode:
        prefix = scratch / "no-pyc"
        prefix.mkdir()
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(prefix))
    warm, hub_warm = scratch / "warm", scratch / "hub-warm"
    hub_env = {k: v for k, v in env.items() if k != "HF_HUB_OFFLINE"} | {
        "HF_ENDPOINT": server.url, "HF_TOKEN": token}
    files = {"audit": str(hub_audit_file(scratch / "hub4.toml")),
             "pinned_audit": str(hub_audit_file(scratch / "hub4-pinned.toml", server))}
    pinned = f"kvfit-test/tiny-qwen3@{sha_of(server, 'kvfit-test/tiny-qwen3')}"

    def setup(argv: list[str], cache: str) -> tuple[list[str], dict, Path | None]:
        argv = [a.format(**files) for a in argv]
        if cache == "hub pinned":
            argv = [pinned if a == HUB[0] else a for a in argv]
        base = hub_env if cache.startswith("hub") else env
        if cache in ("warm", "hub warm", "hub pinned"):
            return argv, dict(base, KVFIT_CACHE_DIR=str(hub_warm if cache != "warm" else warm)), None
        if cache == "off":
            return argv, dict(base, KVFIT_CACHE_DIR="off"), None
        fresh = Path(tempfile.mkdtemp(prefix="empty-", dir=scratch))
        return argv, dict(base, KVFIT_CACHE_DIR=str(fresh)), fresh

    def one(name: str):
        argv, cache = CASES[name]
        argv, case_env, fresh = setup(argv, cache)
        try:
            return run_once(argv, case_env, root, server if cache.startswith("hub") else None)
        finally:
            if fresh:
                shutil.rmtree(fresh, ignore_errors=True)

    return one


def table(results: dict[bool, dict[str, dict]]) -> str:
    """The case table of one root (bytecode on and off)."""
    on, off = results[True], results[False]
    base_on = on["python -c pass (baseline)"]["wall"]
    base_off = off["python -c pass (baseline)"]["wall"]
    out = [f"{'case':<30} {'ms (pyc)':>9} {'x base':>7} {'cpu ms':>7} {'MiB':>6} {'req':>4} "
           f"{'ms (no pyc)':>12} {'x base':>7}"]
    for name in CASES:
        a, b = on[name], off[name]
        out.append(f"{name:<30} {a['wall'] * 1000:>9.0f} {a['wall'] / base_on:>7.1f} "
                   f"{a['cpu'] * 1000:>7.0f} {a['rss_kib'] / 1024:>6.1f} {a['requests']:>4.0f} "
                   f"{b['wall'] * 1000:>12.0f} {b['wall'] / base_off:>7.1f}")
    return "\n".join(out)


def budgets(after: dict, before: dict | None) -> str:
    """The budget rows: each figure from the bytecode-on medians, before (if measured) and
    after. `after` / `before`: a root's results[True] plus "plan_ms" and "evaluations"."""
    head = f"{'budget (bytecode on)':<44} " + (f"{'before':>16} " if before else "")
    out = [head + f"{'after':>16}  bar"]
    rows = [("in-process plan, catalog model x 8 H100, ms", lambda r: f"{r['plan_ms']:.1f}",
             "<= 10"), *BUDGETS]
    for label, figure, bar in rows:
        was = f"{figure(before):>16} " if before else ""
        out.append(f"{label:<44} {was}{figure(after):>16}  {bar}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per case and mode (median)")
    ap.add_argument("--root", type=Path, default=HERE, help="the kvfit checkout to measure")
    ap.add_argument("--before", type=Path, help="a second checkout, measured alongside")
    args = ap.parse_args()
    roots = [args.root.resolve()] + ([args.before.resolve()] if args.before else [])
    hub = start_hub()
    figures: dict[Path, dict] = {}
    try:
        for root in roots:
            with tempfile.TemporaryDirectory(prefix="kvfit-inproc-") as tmp:
                env = base_env(Path(tmp)) | {"KVFIT_CACHE_DIR": tmp}
                figures[root] = {"plan_ms": in_process(root, env),
                                 "evaluations": evaluations(root, env)}
        with tempfile.TemporaryDirectory(prefix="kvfit-speed-") as tmp:
            results = {}
            for bytecode in (True, False):
                scratch = Path(tmp) / ("on" if bytecode else "off")
                results[bytecode] = measure(roots, args.runs, bytecode, scratch, hub)
    finally:
        hub[0].stop()
    load = os.getloadavg()
    print(f"{args.runs} runs per case; {os.cpu_count()} cpus; python {sys.version.split()[0]}; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (at the end)")
    for root in roots:
        print(f"\nkvfit at {root}")
        print(table({b: results[b][root] for b in results}))
    for root in roots:
        figures[root] |= results[True][root]
    print()
    print(budgets(figures[roots[0]], figures[roots[1]] if len(roots) > 1 else None))


if __name__ == "__main__":
    main()
