"""Fakes for the calibration tests (no tests here): an OpenAI-compatible server and a benchmark.

FakeServer: a threaded stdlib HTTP server on 127.0.0.1 (ephemeral port) serving /health,
/v1/models, /version (vLLM flavour) or /server_info (SGLang flavour), /metrics with gauges
that follow the requests in flight, and POST /v1/completions. At most `capacity` requests
run at once; the rest wait (a queue, reported by the waiting gauge).

Step-driven, not timed: the fake bench tags each request with its batch (one bench run) and
concurrency. A request is held until its batch's first wave has fully arrived and settled
(running = min(in flight, capacity)) AND a /metrics read has happened after that moment;
then the batch runs to completion. So the sampler always sees the peak, however slow or
loaded the machine - no outcome depends on timing. `hold` is only a safety bound (seconds)
on that wait, never reached while a sampler runs. With `oom_above`, a
request arriving while more than that many are in flight gets HTTP 500 with CUDA OOM text.
A prompt-tokens counter (vllm:prompt_tokens_total / sglang:prompt_tokens_total) rises by the
prompt length of every request served, plus `count_skew` per request (to fake a mismatch);
`prompt_counter=False` leaves it out of /metrics; `running_gauge` prints that literal as the
running-requests gauge (a hostile or broken server).

Run as a script:
  python test_calibrate_fakes.py server --host H --port P [--capacity N] [--oom-above N] ...
  python test_calibrate_fakes.py bench --base-url U --concurrency C --num-prompts N
      --input-tokens I --output-tokens O --result-file F [--skew-at C] [--under-report]
      [--print-key]
The bench writes a result JSON in the vLLM `bench serve` format (total_input_tokens,
completed, failed, p99_*_ms, errors). Its latencies are deterministic (e2e = 50 ms x
concurrency, TTFT = 40 ms x concurrency) so SLO tests do not depend on timing. With
--under-report it sends full prompts but reports one input token per request fewer (as
`vllm bench serve`'s random dataset does for a tokenizer that adds a BOS).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.error import HTTPError, URLError
from urllib.request import ProxyHandler, Request, build_opener

OOM_TEXT = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


class State:
    """What the fake server knows: capacity, flavour, requests seen, requests in flight."""

    def __init__(self, flavor="vllm", capacity=4, hold=30.0, oom_above=None, api_key=None,
                 model="fake-model", max_model_len=131072, log_oom=False, prompt_counter=True,
                 count_skew=0, running_gauge=None):
        self.flavor, self.capacity, self.hold, self.oom_above = flavor, capacity, hold, oom_above
        self.api_key, self.model, self.max_model_len = api_key, model, max_model_len
        self.log_oom = log_oom
        self.prompt_counter, self.count_skew, self.prompt_tokens = prompt_counter, count_skew, 0
        self.running_gauge = running_gauge    # a literal to print instead of the real count
        self.hits: list[str] = []
        self.inflight = self.running = 0
        self.cond = threading.Condition()
        self.reads = 0                   # /metrics answers so far
        self.batches: dict[str, dict] = {}

    def arrive(self, body: dict) -> dict | None:
        """Count a tagged request into its batch (under the lock); None for untagged ones."""
        tag = body.get("fake_batch")
        if tag is None:
            return None
        batch = self.batches.setdefault(tag, {"target": int(body["fake_wave"]), "arrived": 0,
                                              "mark": None, "open": False})
        batch["arrived"] += 1
        return batch

    def settle(self) -> None:
        """Mark every batch whose first wave is in and settled (under the lock)."""
        settled = self.running == min(self.inflight, self.capacity)
        for batch in self.batches.values():
            if batch["mark"] is None and batch["arrived"] >= batch["target"] and settled:
                batch["mark"] = self.reads

    def metrics(self) -> str:
        with self.cond:
            run, wait, seen = self.running, self.inflight - self.running, self.prompt_tokens
            self.reads += 1
            for batch in self.batches.values():
                if batch["mark"] is not None and self.reads > batch["mark"]:
                    batch["open"] = True       # this read saw the settled peak
            self.cond.notify_all()
        use = run / self.capacity
        shown = f"{run}.0" if self.running_gauge is None else self.running_gauge
        run = run if self.running_gauge is None else self.running_gauge
        if self.flavor == "sglang":
            lab = 'model_name="fake-model",tp_rank="0",pp_rank="0"'
            count = (f"# TYPE sglang:prompt_tokens_total counter\n"
                     f"sglang:prompt_tokens_total{{{lab}}} {seen}.0\n") if self.prompt_counter else ""
            return (f"# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{{{lab}}} {run}\n"
                    f"sglang:num_queue_reqs{{{lab}}} {wait}\nsglang:token_usage{{{lab}}} {use}\n"
                    + count)
        lab = 'engine="0",model_name="fake-model"'
        kv = "vllm:gpu_cache_usage_perc" if self.flavor == "vllm-legacy" else "vllm:kv_cache_usage_perc"
        count = (f"# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total{{{lab}}} {seen}.0\n"
                 f"vllm:prompt_tokens_created{{{lab}}} 1.7e+09\n") if self.prompt_counter else ""
        return (f"# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n"
                f"vllm:num_requests_running{{{lab}}} {shown}\n"
                f"vllm:num_requests_waiting{{{lab}}} {wait}.0\n{kv}{{{lab}}} {use}\n"
                f'vllm:cache_config_info{{block_size="16",cache_dtype="auto",{lab}}} 1.0\n' + count)


def _handler(state: State):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, code, body, kind="application/json"):
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self):
            want = f"Bearer {state.api_key}"
            return state.api_key is None or self.headers.get("Authorization") == want

        def do_GET(self):
            state.hits.append("GET " + self.path)
            if self.path == "/health":
                return self._send(200, "", "text/plain")
            if self.path == "/metrics":
                return self._send(200, state.metrics(), "text/plain; version=0.0.4")
            if not self._authorized():
                return self._send(401, {"error": "unauthorized"})
            if self.path == "/v1/models":
                return self._send(200, {"object": "list", "data": [
                    {"id": state.model, "max_model_len": state.max_model_len}]})
            if self.path == "/version" and state.flavor != "sglang":
                return self._send(200, {"version": "0.33.0"})
            if self.path == "/server_info" and state.flavor == "sglang":
                return self._send(200, {"version": "0.5.23", "kv_cache_dtype": "auto",
                                        "tp_size": 1, "dp_size": 1})
            return self._send(404, {"error": "not found"})

        def do_POST(self):
            state.hits.append("POST " + self.path)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if not self._authorized():
                return self._send(401, {"error": "unauthorized"})
            with state.cond:
                state.inflight += 1
                oom = state.oom_above is not None and state.inflight > state.oom_above
                batch = state.arrive(body)          # a refused request is part of the wave
                state.settle()
            try:
                if oom:
                    if state.log_oom:
                        print(OOM_TEXT, file=sys.stderr, flush=True)
                    return self._send(500, {"error": OOM_TEXT})
                self._serve(body, batch)
            finally:
                with state.cond:
                    state.inflight -= 1
                    state.settle()

        def _serve(self, body, batch):
            with state.cond:
                state.cond.wait_for(lambda: state.running < state.capacity, timeout=30)
                state.running += 1
                state.settle()
                if batch is not None:
                    state.cond.wait_for(lambda: batch["open"], timeout=state.hold)
                state.prompt_tokens += body.get("prompt_tokens", 0) + state.count_skew
                state.running -= 1
                state.settle()
                state.cond.notify_all()
            self._send(200, {"usage": {"prompt_tokens": body.get("prompt_tokens", 0),
                                       "completion_tokens": body.get("max_tokens", 1)}})
    return Handler


class FakeServer:
    """Start with `with FakeServer(...) as srv:`; srv.base_url, srv.state.hits."""

    def __init__(self, host="127.0.0.1", port=0, **kw):
        self.state = State(**kw)
        self.httpd = ThreadingHTTPServer((host, port), _handler(self.state))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def _post(base_url, tokens, out_tokens, key, tag=None):
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    data = json.dumps({"model": "fake-model", "prompt_tokens": tokens, "max_tokens": out_tokens}
                      | (tag or {})).encode()
    req = Request(base_url + "/v1/completions", data=data, headers=headers)
    try:
        with build_opener(ProxyHandler({})).open(req, timeout=30) as resp:
            resp.read()
            return None
    except HTTPError as exc:
        return f"HTTP {exc.code}: {exc.read().decode(errors='replace')}"
    except (URLError, OSError) as exc:
        return f"connection error: {exc}"


def bench(args) -> int:
    import os
    key = os.environ.get("OPENAI_API_KEY")
    if args.print_key:
        print(f"using api key {key}")
    # one batch per bench run; its first wave is min(concurrency, prompts) requests
    tag = {"fake_batch": f"{os.getpid()}-{time.monotonic_ns()}",
           "fake_wave": min(args.concurrency, args.num_prompts)}
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        errors = list(pool.map(lambda _: _post(args.base_url, args.input_tokens, args.output_tokens,
                                               key, tag), range(args.num_prompts)))
    done = sum(1 for e in errors if e is None)
    skew = 1 if args.skew_at is not None and args.concurrency >= args.skew_at else 0
    c = args.concurrency
    result = {"backend": "fake", "num_prompts": args.num_prompts, "max_concurrency": c,
              "completed": done, "failed": args.num_prompts - done,
              "total_input_tokens": done * (args.input_tokens - args.under_report) + skew,
              "total_output_tokens": done * args.output_tokens,
              "p99_ttft_ms": float("nan") if args.nan_latency else 40.0 * c,
              "p99_tpot_ms": float("inf") if args.nan_latency else 5.0, "p99_e2el_ms": 50.0 * c,
              "errors": [e for e in errors if e]}
    if not args.no_result:
        with open(args.result_file, "w") as f:
            json.dump(result, f)
    print(f"fake bench: {done}/{args.num_prompts} completed at concurrency {c}")
    return 0


def serve(args) -> int:
    srv = FakeServer(args.host, args.port, flavor=args.flavor, capacity=args.capacity,
                     hold=args.hold, oom_above=args.oom_above, log_oom=True)
    print(f"fake server listening on {args.host}:{srv.port}", flush=True)
    srv.httpd.serve_forever(poll_interval=0.05)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--flavor", default="vllm")
    s.add_argument("--capacity", type=int, default=4)
    s.add_argument("--hold", type=float, default=30.0)
    s.add_argument("--oom-above", type=int)
    b = sub.add_parser("bench")
    for name in ("--base-url", "--result-file"):
        b.add_argument(name, required=True)
    for name in ("--concurrency", "--num-prompts", "--input-tokens", "--output-tokens"):
        b.add_argument(name, type=int, required=True)
    b.add_argument("--skew-at", type=int)
    b.add_argument("--under-report", action="store_const", const=1, default=0)
    b.add_argument("--print-key", action="store_true")
    b.add_argument("--no-result", action="store_true")
    b.add_argument("--nan-latency", action="store_true", help="write NaN / Infinity latencies")
    args = p.parse_args(argv)
    return serve(args) if args.cmd == "server" else bench(args)


if __name__ == "__main__":
    sys.exit(main())
