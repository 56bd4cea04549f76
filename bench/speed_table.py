"""Where kvfit stands on speed: whole-process wall time as ratios to `python -c pass`.

    uv run python bench/speed_table.py [--runs 7] [--root PATH]

Every case runs `runs` times in fresh processes, round-robin (so a change in machine load
touches every case alike), in two modes:

- bytecode on: .pyc files written by a warm-up run and reused, as on a user's machine;
- bytecode off: PYTHONDONTWRITEBYTECODE=1 and an empty PYTHONPYCACHEPREFIX, so every
  module is compiled from source each run (sandboxes, containers, `uv sync` without
  --compile-bytecode).

Cases marked "empty cache" get a new empty KVFIT_CACHE_DIR for every run (the first run
ever on a machine); the others share one cache warmed by a first run. The real Hub is never
contacted: the "hub" cases talk to the local test hub (tests/hubserver, started here on
127.0.0.1) and count its requests; the rest run with HF_HUB_OFFLINE=1. Each child is timed by
a small launcher (wall from its start, cpu and peak RSS from os.wait4). The table gives
medians, the ratio to the bare interpreter start measured in the same go, then the ratios
the speed issue asks about. --root measures another checkout of kvfit (for a before/after
table): the commands run from there with `python -m kvfit`.
Nothing here asserts a time; tests never do (request counts are asserted in tests/hub).

Last run (2026-12-01, 2 cores shared with other jobs, load average 11 during both runs, so
wall times are ~3x cpu and the ratios to the 12 ms-cpu bare interpreter are inflated;
--runs 5). Before: main at 041fbe5; after: branch speed. Bytecode on, ratios of medians:

    ratio                           bar    before   after
    first run ever / warm plan      2       0.93    0.94
    specs check cold / warm         2       0.97    1.13
    hub warm branch / local plan    1.5     2.60    2.50   (cpu 483 -> 394 ms; local 182 -> 151)
    hub cold / local plan           2       3.27    2.26
    hub peak RSS / local plan       1.3     1.78    1.59   (41.9 -> 36.0 MiB; local 23.5 / 22.7)
    warm plan / python -c pass      8      12.74   13.30   (cpu 182 -> 151 ms; 10.0 at load 0.4)
    bundled audit cpu / one plan    3       9.98    2.69   (2,109 -> 486 ms cpu)
    --engine vllm / plain plan      1.3     1.27    1.03
    explain-log / plain plan        1.3     1.01    0.91
    search N=1024 / N=8             2       7.56    1.15
    search never fits 1024 / 8      -       7.90    5.16   (every count is the answer's work)
    4 hub models audit, requests    8       10      10     (pinned: 0 and 0)

Warm local plan, the bar "<= 8x a bare interpreter start" (session 6, branch warm-plan;
2026-12-01, load average 3-4 from other jobs, so wall times ran ~2x cpu: read the cpu
columns). Before: main at c4a6648; after: warm-plan. --runs 5, bytecode on, cpu ms:

    case                          before   after
    python -c pass                    11      12
    plan, local, warm                150      99   (peak RSS 23.5 -> 20.6 MiB)
    plan, first run ever             144      98
    plan --engine vllm, warm         156     109
    explain-log (vllm fixture)       129      98
    hub plan, warm pinned            153     112
    search N=8                       145     102

    warm plan / python -c pass, cpu, 21 paired runs:  12.65 -> 7.66 (bytecode off 29.3 -> 21.3)
    instructions (valgrind callgrind, load-free):     636.7 M -> 389.7 M (python -c pass 36.5 M)

Where it went: 40 dataclasses created per plan (0.8 ms each here: dataclasses compiles six
small functions per frozen class) -> 25, by not importing what a plain plan does not use
(kvfit.hub, packaging for the default engine version, typing, shutil, threading, the YAML
reader, inverse/search/detect/stages/rope/preflight, spec problems, system presets, expert
blocks; a cached spec's parameters block compiles when first read); the shipped spec data is
parsed per entry on first use, with an index of the architecture matchers (one architecture
parsed, not 44); spec paths are resolved once per folder; and the collector neither rescans
start-up objects at the default threshold nor walks everything once more at exit. Ratios with
the local plan as denominator move with it: hub peak RSS / local plan 1.56 -> 1.71, bundled
audit cpu / one plan 2.95 -> 3.23 (the hub and audit runs themselves got cheaper).

Warm local plan, second pass (session 6, branch plan-trim; 2026-12-01, load average about
1 during both runs, so wall and cpu agree). Before: main at 11a2dc3; after: plan-trim.
--runs 5, bytecode on, ms wall (cpu within 1-2 ms of it):

    case / ratio                    bar    before   after
    python -c pass                  -         12      12
    plan, local, warm               -         93      70   (peak RSS 20.8 -> 19.7 MiB)
    plan, first run ever            -         94      71
    plan --engine vllm, warm        -        104      81
    explain-log (vllm fixture)      -         95      80
    hub plan, warm branch           -        133     110
    search N=8                      -         98      76
    audit, bundled (offline)        -        407     403
    warm plan / python -c pass      8       8.04    5.97   (bytecode off 21.4 -> 19.7)
    paired, 21 runs, load 0.4               8.00    6.10   (cpu 8.24 -> 6.28)
    instructions (valgrind callgrind)     392.3 M  273.8 M (python -c pass 36.4 M)

Where it went: dataclasses compiled 65 methods from source (one exec each: __init__,
__repr__, __eq__, __hash__ and a frozen class's __setattr__/__delattr__) for the 25 classes a
plain plan defines, about 12 ms; they are kvfit.records.record classes now, whose methods are
closures over the field list (dataclasses keeps the field model). The shipped spec data is
read by offset (hashed in place, an entry's span copied out when asked for: 2.2 -> 0.7 ms),
a printable ASCII report skips the per-character escape loop (0.3 ms text, 0.9 ms JSON), and
config.json's byte-order mark is a prefix check (the utf-8-sig codec module not loaded).
The audit makes about 6,200 record instances, each about a microsecond slower to build than
with a compiled __init__, which its start-up saving cancels (407 -> 403 ms).
Ratios with the local plan as denominator move with it: hub warm branch / local plan 1.42 ->
1.59 (bar 1.5; the hub plan itself 133 -> 110 ms), hub cold 1.43 -> 1.61, hub peak RSS 1.24
-> 1.30, bundled audit cpu / one plan 3.33 -> 4.04, explain-log / plan 1.01 -> 1.15.
What is left of a warm plan is mostly imports: dataclasses itself (with inspect, dis,
tokenize: about 26 M instructions), pathlib (with urllib.parse and ipaddress, ~17 M),
hashlib's OpenSSL (~12 M to load, plus sha256 over ~1.2 MB of spec bytes a plan hashes for
its cache keys and the shipped file's checksum), argparse, simpleeval (with random) and
fractions (with decimal); and kvfit's own 57 modules (530 KB of bytecode).

That run's Hub floor was huggingface_hub's own imports (httpx2, which reads its version with
importlib.metadata, and the token helpers' yaml and filelock), and an indexed checkpoint
needed 3 requests cold (sha and file sizes, config.json, the index), so 4 models made 10.

Hub path, 2026-12-01 (load average 4 during both runs, --runs 5, bytecode on; cpu ms is the
steadier figure). Before: main at c4a6648; after: branch hub-lean (kvfit/hub/http_get.py:
the GETs with http.client, huggingface_hub's headers from its constants; the index read only
when the listing leaves the weights open; one GGUF file read without the listing):

    case / ratio                    bar    before   after
    hub plan, cold                  -      396 ms cpu, 36.6 MiB, 3 req   199 ms, 27.4 MiB, 2 req
    hub plan, warm branch           -      398 ms cpu, 36.6 MiB, 1 req   191 ms, 27.4 MiB, 1 req
    hub plan, warm pinned           -      173 ms cpu, 23.7 MiB, 0 req   162 ms, 23.7 MiB, 0 req
    plan, local, warm               -      162 ms cpu, 23.5 MiB          167 ms, 23.5 MiB
    hub warm branch / local plan    1.5     2.50    1.08   (cpu: +236 ms -> +24 ms)
    hub cold / local plan           2       2.49    1.17   (cpu: +234 ms -> +32 ms)
    hub peak RSS / local plan       1.3     1.56    1.17   (+13.1 MiB -> +3.9 MiB)
    4 hub models audit, requests    8       10      8      (pinned: 0 and 0; cpu 684 -> 507 ms)

What is left of the Hub path's cost is http.client's own imports (email's header parser,
ssl, socket: about 15-20 ms cpu), huggingface_hub.constants, kvfit.hub's modules and the
request itself; for an https endpoint, loading the CA bundle (ssl.create_default_context,
about 30 ms) on top.

Bundled audit, the bar "the bundled audit's cpu <= 3x one plan" (session 6, branch
audit-speed; 2026-12-01, load average 2-3 from other jobs, --runs 5, both checkouts measured
in one go: before main at 11a2dc3 with --root, after the branch). Bytecode on, cpu ms:

    case / ratio                    bar    before   after
    audit, bundled (offline)        -        403      297   (26.5 -> 26.8 MiB)
    plan, catalog (--offline)       -        124      118   (the denominator; no change here)
    bundled audit cpu / one plan    3       3.24     2.53   (bytecode off: 1.69 -> 1.44)
    audit, 4 hub models, cold       -        423      392   (8 requests both)
    audit, 4 hub models, pinned     -        378      364   (0 requests both)

Where it went: the audit planned every model x context x fleet from scratch, 264 plans and
264 preparations (spec match, dtypes, context, state, weights, the engines' layout judge, the
report head) for 12 models x 2 contexts x (1 state-only + 9 fleets) + 2 dtype-check plans
per model. A preparation reads the fleet only for an engine's compute capability, so
kvfit.plan.prepared keeps one per checkpoint, context and dtype (and capability) and prices
every fleet from it, as the --systems search already does topology after topology: 36
preparations, the same bytes out (text and JSON diffed before/after; tests/test_prepared.py
compares the whole report with a fresh preparation per plan). The weights check reuses the
plan's resolution and config-shape estimate instead of making its own per context, and the
text audit no longer imports the JSON renderer. What is left is per checkpoint, done once:
the catalog read, its spec's compile, and the config-shape weight estimate (9 of the 12
models have no weight files offline; about 30 % of the run under cProfile), then the 264 placements
(each fleet's layouts on both memory bases).

Session 6 close, a fresh clone of main at cb150d5 (load average 1.0, --runs 5, bytecode on;
bare start 11 ms): warm local plan 65 ms wall = 6.17x (bar 8), first run ever 1.00 (2), cold
specs check 1.00 (2), hub warm branch 97 ms = 1.50 (1.5), hub cold 1.56 (2), hub peak RSS
1.29 (1.3), --engine vllm 1.16 and explain-log 1.13 (1.3), search N=1024 / N=8 1.07 (2),
4-model audit 8 requests cold and 0 pinned (8 and 0), bundled audit cpu / one plan 266 / 90 ms
= 2.95 (3; expressions compiled once per text and names). Three sit on their bars (1.50, 1.29,
2.95; the run before gave 1.49, 1.28, 3.06): met, without margin.

Session 7 close, a fresh clone of main at 3986ab1 (nothing else running; load average 1.2
from the bench itself; bytecode on; bare start 11 ms). Two runs, --runs 7 then --runs 5, each
figure (bar; session 6 close):

    warm local plan / python -c pass   6.20, 6.12   (8; 6.17)      68-69 ms wall
    first run ever / warm plan         1.00, 1.01   (2; 1.00)
    specs check cold / warm            1.01, 1.01   (2; 1.00)
    hub warm branch / local plan       1.43, 1.42   (1.5; 1.50)    98 ms, cpu 97
    hub cold / local plan              1.47, 1.43   (2; 1.56)
    hub peak RSS / local plan          1.25, 1.25   (1.3; 1.29)    24.6 / 19.7 MiB
    bundled audit cpu / one plan       2.77, 2.78   (3; 2.95)      204 / 73 ms cpu
    --engine vllm / plain plan         1.08, 1.09   (1.3; 1.16)
    explain-log / plain plan           1.03, 1.04   (1.3; 1.13)
    search N=1024 / N=8                1.06, 1.08   (2; 1.07)
    4 hub models audit, requests       8 cold, 0 pinned   (8 and 0)

The bars are read with bytecode on, as a user's installed kvfit runs; with bytecode off every
module compiles from source each run and the warm plan is ~20x a bare start, the hub RSS
ratio 1.42 (compiling http.client's email package). What moved since the session-6 close
(paired A/B runs against 290dae0 in one go agree):
- the audit's denominator, the catalog plan, went 90 -> 73 ms: its entry is found from the
  package folder by the folder named after the repo (importlib.resources brought tempfile,
  shutil, bz2, lzma and typing; all 122 entry.json files were read), kvfit.hub imports typing
  only for type checkers, and a docstring-less record no longer makes dataclasses parse
  object.__init__'s signature with tokenize (~2 ms);
- the audit went 266 -> 204 ms cpu, faster than its denominator: a fleet plan prices only its
  own memory basis (the audit never reads the comparison: half its placement work), the
  dtype check reuses the cell's plan, PlanRequest builds in 3.8 us (was 20.6) and replaces in
  7.5 us (28.9 through dataclasses.replace), every plain dataclass is a record, the weight
  estimate of an unquantized row is one multiplication, and the parsers measure the terminal
  width without shutil;
- the Hub path: atomic cache writes make their temporary file without tempfile (shutil, bz2,
  lzma: 0.7 MiB and 2 ms of a cold plan), and an ASCII host is looked up as bytes (no idna
  codec for a plain-http endpoint: 1 ms, 0.4 MiB; https loads it in ssl anyway).
What is left of the Hub path is http.client's import (the email package, ssl, socket: ~17 ms
and 3.6 MiB, ssl 1.2 MiB of it), typing and huggingface_hub's constants (~3.5 ms), kvfit.hub's
own modules (~4 ms) and, on a loaded machine, the request thread waiting for a core (up to
~8 ms measured with another job on the second core; ~1 ms idle).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
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

# name -> (argv, cache): "warm" shares a warmed cache, "empty" gets a new one every run, "off"
# is KVFIT_CACHE_DIR=off; "hub ..." cases talk to the local test hub.
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
# (label, case a, case b, what is compared): wall, cpu or rss.
RATIOS = [("first run ever / warm plan", "plan, first run ever", "plan, local, warm", "wall"),
          ("specs check cold / warm", "specs check, empty cache", "specs check, warm", "wall"),
          ("hub warm branch / local plan", "hub plan, warm branch", "plan, local, warm", "wall"),
          ("hub cold / local plan", "hub plan, cold", "plan, local, warm", "wall"),
          ("hub pinned / local plan", "hub plan, warm pinned", "plan, local, warm", "wall"),
          ("hub peak RSS / local plan", "hub plan, cold", "plan, local, warm", "rss"),
          ("warm plan / python -c pass", "plan, local, warm", "python -c pass (baseline)",
           "wall"),
          ("bundled audit cpu / one plan", "audit, bundled (offline)",
           "plan, catalog (--offline)", "cpu"),
          ("--engine vllm / plain plan", "plan --engine vllm, warm", "plan, local, warm", "wall"),
          ("explain-log / plain plan", "explain-log (vllm fixture)", "plan, local, warm", "wall"),
          ("search N=1024 / N=8", "search N=1024", "search N=8", "wall"),
          ("search never fits 1024 / 8", "search N=1024, never fits", "search N=8, never fits",
           "wall"),
          ("catalog plan / warm plan", "plan, catalog (--offline)", "plan, local, warm", "wall")]


def base_env(scratch: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "KVFIT_CACHE_DIR",
                        "HF_TOKEN", "HF_ENDPOINT")}
    env.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=str(scratch / "hf"),
               CI="1")
    return env


def measure(root: Path, runs: int, bytecode: bool, scratch: Path, hub) -> dict[str, dict]:
    """Median wall, cpu, rss and requests per case, the cases taken round-robin."""
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

    def one(argv, cache):
        argv, case_env, fresh = setup(argv, cache)
        try:
            return run_once(argv, case_env, root, server if cache.startswith("hub") else None)
        finally:
            if fresh:
                shutil.rmtree(fresh, ignore_errors=True)

    for argv, cache in CASES.values():                       # warm-up: bytecode, warm caches
        one(argv, cache)
    runs_of: dict[str, list] = {name: [] for name in CASES}
    for _ in range(runs):
        for name, (argv, cache) in CASES.items():
            runs_of[name].append(one(argv, cache))
    return {name: {k: statistics.median(getattr(r, k) for r in rs)
                   for k in ("wall", "cpu", "rss_kib", "requests")}
            for name, rs in runs_of.items()}


def table(results: dict[bool, dict[str, dict]]) -> str:
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
    out.append("")
    out.append(f"{'ratio':<30} {'of':>5} {'pyc':>9} {'no pyc':>9}")
    for label, a, b, what in RATIOS:
        key = "rss_kib" if what == "rss" else what
        out.append(f"{label:<30} {what:>5} {on[a][key] / on[b][key]:>9.2f} "
                   f"{off[a][key] / off[b][key]:>9.2f}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per case and mode (median)")
    ap.add_argument("--root", type=Path, default=HERE, help="the kvfit checkout to measure")
    args = ap.parse_args()
    root = args.root.resolve()
    hub = start_hub()
    try:
        with tempfile.TemporaryDirectory(prefix="kvfit-speed-") as tmp:
            results = {}
            for bytecode in (True, False):
                scratch = Path(tmp) / ("on" if bytecode else "off")
                scratch.mkdir()
                results[bytecode] = measure(root, args.runs, bytecode, scratch, hub)
    finally:
        hub[0].stop()
    load = os.getloadavg()
    print(f"kvfit at {root}; {args.runs} runs per case; {os.cpu_count()} cpus; "
          f"python {sys.version.split()[0]}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(table(results))


if __name__ == "__main__":
    main()
