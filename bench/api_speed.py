"""The in-process plan through the Python API (issue 23: the page and the agent answer at once).

    uv run python bench/api_speed.py [--runs 200]

Plans a catalog model (offline, 8 x H100 at 32k: the question bench/speed_table.py times with
kvfit.planner.build.plan) with kvfit.plan(...) `runs` times in one process after one warm-up
plan, and prints the median and the 90th percentile in milliseconds, beside the planner alone
(the same request built once), so the API's own share (option checking, request building) is
seen. Budget: median <= 10 ms. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

MODEL = "Qwen/Qwen2.5-0.5B"
OPTIONS = {"offline": True, "context": "32k", "hardware": "h100-80", "gpus": 8}
BUDGET_MS = 10.0


def _times(run, runs: int) -> list[float]:
    run()                                   # warm-up: specs loaded, caches filled
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        run()
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    os.environ.setdefault("KVFIT_CACHE_DIR", tempfile.mkdtemp(prefix="kvfit-bench-"))
    os.environ["HF_HUB_OFFLINE"] = "1"

    import kvfit
    from kvfit.api.options import parsed
    from kvfit.api.request import request_from
    from kvfit.planner.build import plan

    req = request_from(parsed(MODEL, OPTIONS))
    rows = [("kvfit.plan(...)", _times(lambda: kvfit.plan(MODEL, **OPTIONS), args.runs)),
            ("kvfit.planner.build.plan(req)", _times(lambda: plan(req), args.runs))]
    print(f"{MODEL} {OPTIONS}, {args.runs} plans after a warm-up")
    for name, ms in rows:
        p90 = statistics.quantiles(ms, n=10)[-1]
        print(f"  {name:<32} median {statistics.median(ms):6.2f} ms   p90 {p90:6.2f} ms")
    median = statistics.median(rows[0][1])
    verdict = "within" if median <= BUDGET_MS else "OVER"
    print(f"budget: in-process kvfit.plan median <= {BUDGET_MS:g} ms: {median:.2f} ms ({verdict})")


if __name__ == "__main__":
    main()
