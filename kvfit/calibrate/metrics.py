"""Prometheus /metrics: the running / waiting / KV-use gauges by engine and version, sampled
in a background thread while a benchmark point runs.

vLLM: vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc (the
legacy vllm:gpu_cache_usage_perc is accepted too). SGLang: sglang:num_running_reqs,
sglang:num_queue_reqs, sglang:token_usage. Names come from the engine spec's `metrics` for
the version (engines.md §5). Series that differ only by tp/pp/ep rank are one scheduler
(their maximum counts); separate DP engines are summed (KV use: their maximum).

The prompt-tokens counter (vllm:prompt_tokens_total, sglang:prompt_tokens_total) is read
once before and once after each point (counter()); its rise is the server's own count of the
prompt tokens it received, the second piece of token evidence qualify.py can use.
"""

from __future__ import annotations

import math
import threading
import time

from .endpoint import get

_RANKS = ("tp_rank", "pp_rank", "moe_ep_rank")
KINDS = ("running", "waiting", "kv_usage")
COUNTER = "prompt_tokens"


def names(engine: str, rules) -> dict:
    """{kind: [metric names, preferred first]} for the engine version's rules."""
    m = dict(rules.metrics or {})
    out = {k: [m[k]] if m.get(k) else [] for k in KINDS}
    legacy = [n for n in m.get("legacy", ()) if n.endswith("usage_perc")]
    from ..engines import get
    for n in get(engine).kv_usage_names(legacy):
        if n not in out["kv_usage"]:
            out["kv_usage"].append(n)
    out[COUNTER] = []
    if m.get(COUNTER):
        # a counter is exposed with the _total suffix; its declared name is accepted too
        name = m[COUNTER]
        out[COUNTER] = [name, name.removesuffix("_total")] if name.endswith("_total") else [name]
    return out


MAX_LINES = 200_000           # a /metrics page longer than this is cut (no engine sends one)


def _samples(text: str):
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, dict(sample.labels), _float(sample.value)


def _float(value) -> float:
    """The parser keeps integers exact; one past float's range reads as infinite (implausible)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _ascii_value(line: str) -> bool:
    """False for a sample line whose value (after the labels) is not ASCII: the parser's
    float() reads Arabic-Indic '١٢' as 12, which no exporter writes."""
    if line.startswith("#"):
        return True
    return line[line.rfind("}") + 1:].isascii()


def parse(text: str) -> dict:
    """{sample name: [(labels dict, value)]} from Prometheus text exposition, read by
    prometheus_client's parser. A page the parser refuses as a whole is read line by line, so
    one malformed line costs that line, not the page."""
    lines = [ln for ln in text.splitlines()[:MAX_LINES] if _ascii_value(ln)]
    out: dict = {}
    try:
        rows = list(_samples("\n".join(lines) + "\n"))
    except (ValueError, TypeError, IndexError, KeyError, OverflowError):
        rows = []
        for line in lines:
            if not line.strip() or line.startswith("#"):
                continue
            try:
                rows.extend(_samples(line + "\n"))
            except (ValueError, TypeError, IndexError, KeyError, OverflowError):
                continue
    for name, labels, value in rows:
        out.setdefault(name, []).append((labels, value))
    return out


def _combine(series: list, kind: str) -> float:
    groups: dict = {}
    for labels, value in series:
        key = tuple(sorted((k, v) for k, v in labels.items() if k not in _RANKS))
        groups[key] = max(groups.get(key, value), value)
    return max(groups.values()) if kind == "kv_usage" else sum(groups.values())


MAX_REQUESTS = 10**7          # no server holds more requests at once


def plausible(kind: str, value: float) -> bool:
    """A gauge reading that can be genuine: finite, >= 0; request counts whole and at most
    MAX_REQUESTS; KV use a fraction from 0 to 1."""
    if not math.isfinite(value) or value < 0:
        return False
    if kind == "kv_usage":
        return value <= 1.0
    return value <= MAX_REQUESTS and float(value).is_integer()


def read(parsed: dict, wanted: dict) -> dict:
    """{kind: value or None, kind_metric: the name read, kind_bad: an implausible reading};
    the first name present wins. An implausible reading (1e308, NaN, -1, 2.5 requests, KV
    use above 1) counts as no reading, so a point is never qualified on it."""
    out = {}
    for kind in KINDS:
        out[kind] = out[f"{kind}_metric"] = out[f"{kind}_bad"] = None
        for name in wanted.get(kind, ()):
            if parsed.get(name):
                value = _combine(parsed[name], kind)
                out[f"{kind}_metric"] = name
                if plausible(kind, value):
                    out[kind] = value
                else:
                    out[f"{kind}_bad"] = f"{name} read {value!r}"
                break
    return out


def read_counter(parsed: dict, wanted: list) -> tuple[float | None, str | None]:
    """(value, name read) of the first counter name present (combined like the running
    gauge: TP/PP/EP ranks once, DP engines summed), else (None, None)."""
    for name in wanted or ():
        if parsed.get(name):
            return _combine(parsed[name], COUNTER), name
    return None, None


def counter(url: str, wanted: list, key: str | None, timeout: float = 10.0) -> dict:
    """One GET /metrics for the prompt-tokens counter: {value, metric, error}."""
    if not wanted:
        return {"value": None, "metric": None, "error": None}
    status, body = get(url, timeout, key)
    if status != 200:
        return {"value": None, "metric": None,
                "error": (f"HTTP {status}" if status else str(body))[:300]}
    value, name = read_counter(parse(body), wanted)
    return {"value": value, "metric": name, "error": None}


def cache_dtype(parsed: dict, engine: str) -> str | None:
    """The cache_dtype label on the engine's cache-info metric (Engine.cache_info_metric: vLLM's
    vllm:cache_config_info), when the server exports it."""
    from ..engines import get
    metric = get(engine).cache_info_metric
    for labels, _ in parsed.get(metric, ()) if metric else ():
        if labels.get("cache_dtype"):
            return labels["cache_dtype"]
    return None


class Sampler(threading.Thread):
    """GET /metrics every `interval` seconds until stop() (at most `max_seconds`)."""

    def __init__(self, url: str, wanted: dict, interval: float, key: str | None,
                 max_seconds: float):
        super().__init__(daemon=True)
        self.url, self.wanted, self.interval, self.key = url, wanted, interval, key
        self.limit = max_seconds
        self.samples: list[dict] = []
        self.errors: list[str] = []
        self._halt = threading.Event()

    def run(self) -> None:
        """Sample until stop() or the time limit (bounded in count too)."""
        start = time.monotonic()
        for _ in range(int(self.limit / self.interval) + 2):
            self.sample_once()
            if self._halt.wait(self.interval) or time.monotonic() - start > self.limit:
                break

    def sample_once(self) -> None:
        """One GET /metrics, kept as a sample (or an error)."""
        status, body = get(self.url, max(1.0, min(10.0, self.interval * 5)), self.key)
        if status != 200:
            self.errors.append(f"HTTP {status}" if status else body)
            return
        self.samples.append(read(parse(body), self.wanted) | {"t": time.monotonic()})

    def stop(self) -> None:
        """Ask the loop to end and wait for it (one last sample is taken by the caller)."""
        self._halt.set()
        self.join(timeout=15.0)

    def summary(self) -> dict:
        """Max running / waiting / KV use over the samples, and which names were read."""
        def peak(kind):
            vals = [s[kind] for s in self.samples if s[kind] is not None]
            return max(vals) if vals else None
        named = {k: next((s[f"{k}_metric"] for s in self.samples if s[f"{k}_metric"]), None)
                 for k in KINDS}
        bad = [s[f"{k}_bad"] for s in self.samples for k in KINDS if s.get(f"{k}_bad")]
        return {"samples": len(self.samples), "errors": len(self.errors) + len(bad),
                "last_error": (bad[-1] if bad else self.errors[-1][:300]) if bad or self.errors
                else None, "implausible": list(dict.fromkeys(bad))[:3],   # distinct readings
                "max_running": peak("running"), "max_waiting": peak("waiting"),
                "waiting_samples": sum(1 for s in self.samples if (s["waiting"] or 0) > 0),
                "max_kv_usage": peak("kv_usage"), "metrics": named}
