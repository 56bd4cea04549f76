"""Run the fuzz harness at scale and print the table (>= 10,000 cases per kind by default).

    uv run python bench/fuzz.py                      # 10,000 per kind, seed 0
    uv run python bench/fuzz.py --cases 500 --kinds gguf expr --seed 7

Each case runs in a spawned worker with a per-case watchdog (--watchdog, 10 s of the worker's
CPU time, or six times that waited without CPU, so machine load cannot make a slow case a
"hang") and a 1 GiB memory cap; findings (wrong / traceback / hang / memory) are listed
with the case index, so one can be rebuilt alone: classify(kind, seed, index) in
tests/fuzz/runner.py. Exit 1 when any finding is found.

Last full run (2026-12-01, seed 0, 10,000 per kind, main at 9bacae7; seconds are wall time on
the shared 2-core machine, at a load average of about 3):

    kind           cases  answered     clean     wrong traceback      hang    memory  seconds
    bench_json     10000     10000         0         0         0         0         0      7.9
    cache          10000     10000         0         0         0         0         0      9.3
    config_json    10000      3409      6591         0         0         0         0    277.8
    explain_log    10000      5476      4524         0         0         0         0     47.2
    expr           10000      2446      7554         0         0         0         0      2.8
    gguf           10000       983      9017         0         0         0         0      6.5
    hub_info       10000       353      9647         0         0         0         0     16.6
    metrics        10000     10000         0         0         0         0         0      3.6
    model_ref      10000       829      9171         0         0         0         0     18.1
    preset_toml    10000      1016      8984         0         0         0         0     64.2
    safetensors    10000      1939      8061         0         0         0         0      3.0
    spec_yaml      10000      9941        59         0         0         0         0    300.8

config_json, spec_yaml and hub_info were run again on main at eb03afa (after the DeepSeek-V4
and SGLang record merges): 0 findings each. The run before (15aca75) found one wrong answer,
spec_yaml case 5966 (a duplicate key whose block-scalar value put a line break in the problem
message), and the metrics kind found prometheus_client's exact 400-digit integers overflowing
float(); both are fixed with named tests (tests/test_fuzz_specs.py,
tests/test_calibrate_gauges.py). Earlier runs found what the regression tests in
tests/test_hostile_plan_inputs.py, tests/test_hostile_bench_json.py and
tests/hub/test_hub_budget.py now hold. The watchdog counts CPU seconds, so the two config_json
"hangs" of session 4 (starvation at a load average of 6-12) no longer appear.

The kinds of the Python API, the web app and the MCP tools (2026-12-06, seed 0, 4,000 per
kind, on main at 5bb6111 plus this branch's fixes: web_requests and mcp_arguments at 03aa287,
load average about 2-3 with the suite running beside them; api_options at 820a0a0, load
about 1):

    kind           cases  answered   refused     wrong  internal     hangs    memory  seconds
    api_options     4000       848      3152         0         0         0         0     63.0
    web_requests    4000      1308      2692         0         0         0         0    119.7
    mcp_arguments   4000       644      3356         0         0         0         0     83.4

The first run of these kinds found 20 internal errors: one was the harness's (a URL over
httpx's 64 KiB limit, now kept under it), the rest kvfit's, each fixed with a named test in
tests/test_api_hostile_options.py or tests/web/test_api_routes.py: an int past Python's
int-string limit as an option (str() / repr() / json.dumps raised ValueError) or in a POST
/api/plan body (a 500), hf_overrides nested 3,000 deep (RecursionError), a NUL in config,
a line break in a system or --family name (two paragraphs), kvfit.sweep(model, None)
(KeyError), and the MCP fit paragraph when every row was refused (target null).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# the plan kinds write the validated-spec cache: a private one, never the user's
os.environ.setdefault("KVFIT_CACHE_DIR", tempfile.mkdtemp(prefix="kvfit-fuzz-cache-"))
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzz.runner import CLASSES, Pool, run_kind  # noqa: E402
from fuzz.targets import TARGETS  # noqa: E402

# the runner's classes as the table names them: a clean refusal is one paragraph and exit 2;
# an internal error is any other exception (what the CLI would show as exit 70)
LABELS = {"answered": "answered", "clean": "refused", "wrong": "wrong", "traceback": "internal",
          "hang": "hangs", "memory": "memory"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000, help="cases per kind (default 10,000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kinds", nargs="*", default=sorted(TARGETS), choices=sorted(TARGETS))
    p.add_argument("--watchdog", type=float, default=10.0, help="CPU seconds per case")
    args = p.parse_args(argv)
    print(f"{'kind':<12} {'inputs':>7} " + " ".join(f"{LABELS[c]:>9}" for c in CLASSES)
          + "  seconds")
    pool, found = Pool(), {}
    try:
        for kind in args.kinds:
            began = time.monotonic()
            counts, examples = run_kind(kind, args.cases, args.seed, args.watchdog, pool)
            took = time.monotonic() - began
            print(f"{kind:<12} {sum(counts.values()):>7} "
                  + " ".join(f"{counts[c]:>9}" for c in CLASSES) + f"  {took:7.1f}", flush=True)
            found.update({(kind, c): ex for c, ex in examples.items()})
    finally:
        pool.close()
    for (kind, cls), cases in sorted(found.items()):
        for index, detail in cases:
            print(f"  {kind} {cls} #{index}: {detail}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
