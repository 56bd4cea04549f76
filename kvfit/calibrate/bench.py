"""One concurrency point: the engine's serving benchmark while /metrics is sampled.

The result JSON is read from {result_file} (vLLM: one object; SGLang: JSON lines, the last
one counts). OOM evidence is looked for in the server log written during the point (launch
mode), in the benchmark's own output, and in the result's per-request errors (an HTTP 5xx
body with out-of-memory text). A queue is never evidence of an OOM. The server's prompt-tokens
counter is read just before the benchmark starts and after it ends (prompt_counter()).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from . import procs
from .commands import default_bench, fill
from .metrics import COUNTER, Sampler, counter

OOM = re.compile(r"out of memory|OutOfMemoryError|\bOOM\b|CUBLAS_STATUS_ALLOC_FAILED",
                 re.IGNORECASE)
SEED = 0
SETTLE_READS = 8        # re-reads of the prompt-tokens counter while it is still short


@dataclass(slots=True)
class Session:
    """What every point shares: config, rules, placeholder values, paths, the server log."""

    cal: object
    rules: object
    values: dict
    workdir: Path
    metric_names: dict
    key: str | None
    server_log: Path | None = None


def point_values(s: Session, concurrency: int) -> dict:
    """The placeholder values for one point."""
    prompts = concurrency * s.cal.requests_per_concurrency
    result = s.workdir / f"bench-c{concurrency}.json"
    return s.values | {"concurrency": concurrency, "num_prompts": prompts,
                       "result_file": str(result)}


def command(s: Session, values: dict) -> list[str]:
    """The benchmark argv for one point: benchmark_command, else the engine spec's."""
    if s.cal.benchmark_command:
        return fill(s.cal.benchmark_command, values)
    return default_bench(s.cal.engine, s.rules, values)


MAX_RESULT_BYTES = 64 << 20     # a benchmark's result JSON is kilobytes


def read_result(path: Path) -> tuple[dict | None, str | None]:
    """(result object, problem): a JSON object, or the last JSON line of a JSONL file."""
    try:
        if path.stat().st_size > MAX_RESULT_BYTES:
            return None, f"the result file is larger than {MAX_RESULT_BYTES:,} bytes"
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, "the benchmark wrote no result file"
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):          # RecursionError: nesting past the stack
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            data = json.loads(lines[-1]) if lines else None
        except (ValueError, RecursionError):
            data = None
    if not isinstance(data, dict):
        return None, "the result file is not a JSON object (or JSON lines)"
    return data, None


def oom_evidence(server_text: str, bench_text: str, result: dict | None) -> list[dict]:
    """Lines that say the engine ran out of memory, with where each was found (at most 10)."""
    found = []
    for source, text in (("server log", server_text), ("benchmark output", bench_text)):
        found += [{"source": source, "line": ln.strip()[:400]} for ln in text.splitlines()
                  if OOM.search(ln)]
    errors = (result or {}).get("errors")
    if isinstance(errors, list):
        found += [{"source": "benchmark request errors (HTTP)", "line": str(e).strip()[:400]}
                  for e in errors if e and OOM.search(str(e))]
    return found[:10]


def prompt_counter(s: Session, before: dict, want: int) -> dict:
    """The prompt-tokens counter after the point, against `before`: {metric, before, after,
    delta, error}. While the rise is still short of `want` the counter is re-read a few times
    (an engine may record its stats just after it answers); a full or larger rise is final."""
    url, names = s.values["base_url"] + "/metrics", s.metric_names.get(COUNTER, [])
    after = counter(url, names, s.key)
    pause = min(max(s.cal.metrics_interval, 0.25), 1.0)
    for _ in range(SETTLE_READS):
        if before["value"] is None or after["value"] is None or \
                after["value"] - before["value"] >= want:
            break
        time.sleep(pause)
        after = counter(url, names, s.key)
    delta = None
    if before["value"] is not None and after["value"] is not None and \
            before["metric"] == after["metric"]:
        delta = after["value"] - before["value"]
        delta = int(delta) if float(delta).is_integer() else delta
    return {"metric": after["metric"] or before["metric"], "names": list(names),
            "before": before["value"], "after": after["value"], "delta": delta,
            "error": after["error"] or before["error"]}


def run_point(s: Session, concurrency: int, shown) -> dict:
    """Run one point; the raw facts qualify.judge() turns into a verdict.

    shown: a callable that redacts a command for the record."""
    values = point_values(s, concurrency)
    argv = command(s, values)
    Path(values["result_file"]).unlink(missing_ok=True)
    log = s.workdir / f"bench-c{concurrency}.log"
    start_log = procs.size(s.server_log) if s.server_log else 0
    limit = s.cal.request_timeout * s.cal.requests_per_concurrency
    sampler = Sampler(s.values["base_url"] + "/metrics", s.metric_names, s.cal.metrics_interval,
                      s.key, limit + 60.0)
    before = counter(s.values["base_url"] + "/metrics", s.metric_names.get(COUNTER, []), s.key)
    sampler.start()
    began = time.monotonic()
    try:
        env = procs.child_env({"OPENAI_API_KEY": s.key} if s.key else None)
        status, timed_out = procs.run(argv, log, env, limit, "benchmark", shown(argv))
    finally:
        sampler.stop()
    duration = round(time.monotonic() - began, 3)
    prompts = prompt_counter(s, before, values["num_prompts"] * s.values["input_tokens"])
    result, problem = read_result(Path(values["result_file"]))
    server_text = procs.read_from(s.server_log, start_log) if s.server_log else ""
    return {"offered_concurrency": concurrency, "num_prompts": values["num_prompts"],
            "command": argv, "exit_status": status, "timed_out": timed_out,
            "duration_s": duration, "result": result, "result_problem": problem,
            "output_tail": procs.tail(log, lines=12), "metrics": sampler.summary(),
            "oom": oom_evidence(server_text, procs.read_from(log, 0), result),
            "prompt_counter": prompts}
