"""How many Hub requests does a plan make, cold and warm, and how long do they take?

    uv run python bench/hub_requests.py [--runs 5] [--latency-ms 50]

Runs kvfit.hub.resolve against the local test hub (tests/hubserver; no network), with an
artificial delay per request to stand in for the real Hub's round trip. "cold" starts with
an empty metadata cache; "warm" repeats the plan on the same reference; "pinned" repeats it
at the full commit sha. Prints request counts and median times as warm/cold ratios.
Nothing here asserts a time; tests assert request counts only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {
    "branch, config + index": ("kvfit-test/tiny-qwen3", False),
    "branch, + hf_quant_config": ("kvfit-test/quantized", False),
    "branch, + safetensors headers": ("kvfit-test/tiny-qwen3", True),
    "split GGUF URL": ("hf://kvfit-test/tiny-gguf/Q4_K_M/tiny-Q4_K_M-00001-of-00003.gguf", False),
}


def _setup_environment() -> None:
    """Isolated HF_HOME and no telemetry, before huggingface_hub is imported."""
    home = tempfile.mkdtemp(prefix="kvfit-bench-")
    os.environ.update(HF_HOME=home, HF_HUB_DISABLE_TELEMETRY="1")
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "KVFIT_CACHE_DIR"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(ROOT / "tests"))


def _plan(server, text: str, headers: bool) -> tuple[int, float, str]:
    """(requests, seconds, resolved sha) for one resolve."""
    from kvfit.hub import parse_reference, resolve

    server.state.log.clear()
    start = time.perf_counter()
    meta = resolve(parse_reference(text), read_headers=headers)
    return server.state.count(), time.perf_counter() - start, meta.revision


def _pinned(text: str, sha: str) -> str:
    """The same reference at a full sha."""
    if text.startswith("hf://"):
        repo, _, rest = text[len("hf://"):].partition("/")
        name, _, path = rest.partition("/")
        return f"hf://{repo}/{name}@{sha}/{path}"
    return f"{text}@{sha}"


def measure(server, text: str, headers: bool, runs: int) -> dict[str, tuple[int, float]]:
    """Median (requests, seconds) for cold, warm and pinned-warm plans."""
    rows: dict[str, list[tuple[int, float]]] = {"cold": [], "warm": [], "pinned": []}
    for _ in range(runs):
        os.environ["KVFIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kvfit-bench-cache-")
        count, seconds, sha = _plan(server, text, headers)
        rows["cold"].append((count, seconds))
        rows["warm"].append(_plan(server, text, headers)[:2])
        rows["pinned"].append(_plan(server, _pinned(text, sha), headers)[:2])
    return {k: (max(c for c, _ in v), statistics.median(s for _, s in v)) for k, v in rows.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=50.0,
                        help="artificial delay added to every test-hub request")
    args = parser.parse_args()
    _setup_environment()
    from hubserver import Fault, HubServer
    from hubserver.repos import build_standard_hub

    server = HubServer()
    build_standard_hub(server.state)
    server.start()
    os.environ["HF_ENDPOINT"] = server.url
    print(f"test hub {server.url}, {args.latency_ms:g} ms per request, median of {args.runs}")
    print(f"{'scenario':32} {'requests cold/warm/pinned':>26} {'cold ms':>9} "
          f"{'warm/cold':>10} {'pinned/cold':>12}")
    try:
        for label, (text, headers) in SCENARIOS.items():
            server.state.faults[:] = [Fault(delay=args.latency_ms / 1000)]
            res = measure(server, text, headers, args.runs)
            counts = "/".join(str(res[k][0]) for k in ("cold", "warm", "pinned"))
            cold = res["cold"][1]
            print(f"{label:32} {counts:>26} {cold * 1000:9.1f} {res['warm'][1] / cold:10.3f} "
                  f"{res['pinned'][1] / cold:12.3f}")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
