"""Verdicts: each point's separate facts, and the sweep's ceilings.

A point qualifies only when the benchmark exited cleanly, its input tokens are proven equal to
the requested workload (num_prompts x input tokens), it completed every request, left no OOM
evidence, and /metrics gave a running-requests reading. Input tokens are proven by the
benchmark's aggregate total_input_tokens being exactly the request, or, when the benchmark
reports whole special tokens per request fewer (vLLM's random dataset, BOS tokenizers), by
the server's own prompt-tokens counter rising by exactly the request over the point; the
report names which evidence qualified it. Missing or mismatched evidence fails closed.
Queueing (waiting > 0) is recorded as a fact and never counts as an OOM or a failure. SLO qualification is a
separate verdict that feeds the SLO-qualified ceiling only.
"""

from __future__ import annotations

import math

PROVENANCE = "host measurement"
MAX_SPECIAL_TOKENS = 4      # a benchmark shortfall per request the server counter can vouch for
SHORTFALL_REASON = ("the benchmark's random dataset reserves room for special tokens; the "
                    "server counted the full prompts")
# result key for each SLO threshold, per engine benchmark (p99 is the statistic judged)
LATENCY = {"ttft_ms": ("p99_ttft_ms",), "tpot_ms": ("p99_tpot_ms",),
           "e2e_ms": ("p99_e2el_ms", "p99_e2e_latency_ms")}


MAX_READING = 1e15         # larger than any count or latency (ms) a benchmark can report


def _num(value):
    """A finite number >= 0 from a benchmark result, else None: NaN, Infinity, strings, bools,
    negative counts or latencies, and integers past any real reading (10**400 would not even
    convert to a float) all read as not reported, so the evidence fails closed."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_READING else None
    return value if math.isfinite(value) and 0 <= value <= MAX_READING else None


def _count(value):
    """A whole count >= 0 (7 or 7.0, -0.0 as 0), else None: a count of 31.5 tokens or
    requests is not a count, so the evidence fails closed."""
    value = _num(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    return value


def _server_count(counter: dict | None, want: int, per_request: int) -> dict:
    """The server's prompt-tokens counter over the point, against the requested total."""
    c = counter or {}
    name, delta = c.get("metric"), c.get("delta")
    if not c.get("names"):
        why = "kvfit knows no prompt-token counter for this engine version"
    elif c.get("error"):
        why = f"the prompt-token counter could not be read ({c['error']})"
    elif name is None:
        why = f"the server exported no prompt-token counter ({' or '.join(c['names'])})"
    elif delta is None:
        why = f"{name} was not read both before and after the point"
    elif delta != want:
        why = f"the server's {name} rose by {delta:,} over the point, not {want:,}"
        if per_request and delta == want + per_request:
            why += (" (one more full prompt than requested: the benchmark's initial test or "
                    "warmup request, or other traffic on the server)")
    else:
        why = None
    return {"metric": name, "before": c.get("before"), "after": c.get("after"),
            "delta": delta, "matches": why is None, "problem": why}


def _tokens(result: dict | None, prompts: int, per_request: int,
            counter: dict | None = None) -> dict:
    """Input-token evidence. The benchmark's total_input_tokens must equal the request; the
    only exception is a shortfall of whole special tokens per request (1 to
    MAX_SPECIAL_TOKENS) when the server's own prompt-tokens counter rose by exactly the
    requested total. Anything else, a missing count or counter included, fails closed."""
    want = prompts * per_request
    got = _count((result or {}).get("total_input_tokens"))
    server = _server_count(counter, want, per_request)
    short = None if got is None or not prompts else want - got
    per = short / prompts if short is not None else None
    special = per is not None and float(per).is_integer() and 1 <= per <= MAX_SPECIAL_TOKENS
    shortfall, by = None, None
    if got is None:
        why = "the benchmark result reports no total_input_tokens"
    elif got == want:
        why, by = None, "benchmark total_input_tokens"
    else:
        why = f"total_input_tokens {got:,} is not the requested {want:,}"
        if special:
            why += (f" ({per:g} per request fewer: vLLM's random dataset leaves room for the "
                    "tokenizer's special tokens, e.g. BOS, and does not count them)")
        if special and server["matches"]:
            why, by = None, "server prompt-token counter"
            shortfall = {"total": short, "per_request": int(per), "reason": SHORTFALL_REASON}
    if why is not None:
        if server["matches"]:
            why += (f"; the server's {server['metric']} rose by exactly {want:,}, but it "
                    "vouches only for a benchmark shortfall of 1 to "
                    f"{MAX_SPECIAL_TOKENS} whole special tokens per request")
        else:
            why += "; " + server["problem"]
    return {"requested_total": want, "per_request": per_request, "reported_total": got,
            "key": "total_input_tokens", "matches": why is None, "problem": why,
            "benchmark_matches": got == want, "qualified_by": by,
            "benchmark_shortfall": shortfall, "server_counter": server}


def _latency(result: dict | None) -> dict:
    out = {}
    for name, keys in LATENCY.items():
        found = next((k for k in keys if _num((result or {}).get(k)) is not None), None)
        out[name] = None if found is None else float(result[found])
        out[f"{name}_key"] = found
    return out


def _slo(latency: dict, slo: dict) -> dict:
    if not slo:
        return {"requested": False, "qualified": None, "failures": []}
    failures = []
    for key, limit in slo.items():
        name = key.removeprefix("max_")
        value = latency.get(name)
        if value is None:
            failures.append(f"p99 {name} not reported (limit {limit:g} ms)")
        elif value > limit:
            failures.append(f"p99 {name} {value:g} ms > {limit:g} ms")
    return {"requested": True, "qualified": not failures, "failures": failures,
            "statistic": "p99", "thresholds_ms": dict(slo)}


def _counts(result: dict | None, prompts: int) -> dict:
    completed = _count((result or {}).get("completed"))
    failed = _count((result or {}).get("failed"))
    if failed is None and completed is not None:
        failed = prompts - completed
    return {"requested": prompts, "completed": completed, "failed": failed}


def _reasons(raw: dict, tokens: dict, counts: dict, resident) -> list[str]:
    why = []
    if raw["timed_out"]:
        why.append("the benchmark did not finish within request_timeout x "
                   "requests_per_concurrency and was stopped")
    elif raw["exit_status"] != 0:
        why.append(f"the benchmark exited with status {raw['exit_status']}")
    if raw["result_problem"]:
        why.append(raw["result_problem"])
    if tokens["problem"]:
        why.append(tokens["problem"] + " (token evidence fails closed)")
    if counts["completed"] != counts["requested"] or counts["failed"]:
        why.append(f"{counts['completed']} of {counts['requested']} requests completed")
    if raw["oom"]:
        why.append(f"direct OOM evidence ({raw['oom'][0]['source']})")
    if resident is None:
        why.append("no running-requests gauge was read from /metrics")
    elif resident == 0 and counts["completed"]:
        why.append(f"the running-requests gauge never rose above 0 while {counts['completed']} "
                   "requests completed, so it did not measure them")
    return why


def judge(raw: dict, per_request: int, slo: dict) -> dict:
    """The recorded point: separate facts, reasons, and whether it qualifies."""
    m, result = raw["metrics"], raw["result"]
    tokens = _tokens(result, raw["num_prompts"], per_request, raw.get("prompt_counter"))
    counts = _counts(result, raw["num_prompts"])
    resident = None if m["max_running"] is None else int(m["max_running"])
    reasons_extra = [f"/metrics gave implausible gauge readings ({'; '.join(m['implausible'])}), "
                     "so its readings cannot be trusted"] if m.get("implausible") else []
    offered = raw["offered_concurrency"]
    if resident is not None and resident > offered:
        # more running requests than the benchmark ever sent: the gauge counts other clients,
        # or sums series that are not separate engines; a capacity read from it would be false
        reasons_extra.append(f"the running-requests gauge read {resident:,} while at most "
                             f"{offered:,} requests were offered at once, so it does not count "
                             "this benchmark's requests alone")
    waiting = m["max_waiting"]
    reasons = _reasons(raw, tokens, counts, resident) + reasons_extra
    latency = _latency(result)
    return {
        "offered_concurrency": raw["offered_concurrency"], "num_prompts": raw["num_prompts"],
        "command": raw["command"], "qualified": not reasons, "reasons": reasons,
        "benchmark": {"exit_status": raw["exit_status"], "timed_out": raw["timed_out"],
                      "duration_s": raw["duration_s"], "output_tail": raw["output_tail"]},
        "tokens": tokens, "completions": counts,
        "resident": {"max_running": resident, "metric": m["metrics"]["running"]},
        "queueing": {"max_waiting": None if waiting is None else int(waiting),
                     "queued": None if waiting is None else waiting > 0,
                     "samples_with_waiting": m["waiting_samples"],
                     "metric": m["metrics"]["waiting"]},
        "kv_usage": {"max": m["max_kv_usage"], "metric": m["metrics"]["kv_usage"]},
        "metrics_samples": {"count": m["samples"], "errors": m["errors"],
                            "last_error": m["last_error"]},
        "oom": {"detected": bool(raw["oom"]), "evidence": raw["oom"]},
        "latency": latency, "slo": _slo(latency, slo),
    }


def _slo_ceiling(points: list[dict], slo: dict) -> int | None:
    """The largest offered concurrency up to which every point qualified and met the SLO."""
    ceiling = None
    for p in points:
        if not (p["qualified"] and p["slo"]["qualified"]):
            break
        ceiling = p["offered_concurrency"]
    return ceiling if slo else None


def _compare(predicted: int | None, measured: int | None) -> dict | None:
    if predicted is None or measured is None:
        return None
    return {"predicted": predicted, "measured": measured, "difference": measured - predicted,
            "ratio": round(measured / predicted, 4) if predicted else None}


def _bound(measured, limited: list[int]) -> str:
    if measured is None:
        return "not measured"
    if limited:
        return f"reached: the engine queued what it could not hold (offered {limited[0]})"
    return "lower bound: no qualified point offered more than the engine held at once"


def _status(points: list[dict], planned: list[int], measured) -> list[str]:
    why = [f"concurrency {p['offered_concurrency']}: {'; '.join(p['reasons'])}"
           for p in points if not p["qualified"]]
    if len(points) < len(planned):
        why.append("stop_on_failure: not run: " + ", ".join(
            str(c) for c in planned[len(points):]))
    if measured is None and not why:
        why.append("no point measured a resident request")
    return why


def summarize(points: list[dict], planned: list[int], predicted: int | None,
              engine_prediction: dict | None, slo: dict) -> dict:
    """The sweep's result: measured and SLO-qualified ceilings against the predictions."""
    good = [p for p in points if p["qualified"]]
    measured = max((p["resident"]["max_running"] for p in good), default=None)
    fully = [p["offered_concurrency"] for p in good
             if p["resident"]["max_running"] >= p["offered_concurrency"]]
    limited = [p["offered_concurrency"] for p in good if p["queueing"]["queued"]
               and p["resident"]["max_running"] < p["offered_concurrency"]]
    reasons = _status(points, planned, measured)
    engine_total = (engine_prediction or {}).get("total")
    return {
        "provenance": PROVENANCE, "calibrated": not reasons, "reasons": reasons,
        "measured_capacity_ceiling": measured,
        "ceiling_bound": _bound(measured, limited),
        "largest_fully_resident_concurrency": max(fully, default=None),
        "slo_qualified_ceiling": _slo_ceiling(points, slo),
        "slo_thresholds_ms": dict(slo),
        "predicted_boundary": predicted,
        "predicted_vs_measured": _compare(predicted, measured),
        "engine_predicted_vs_measured": _compare(engine_total, measured),
        "points_planned": list(planned), "points_run": len(points),
        "points_qualified": len(good),
    }
