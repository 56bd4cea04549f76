"""Hostile HTTP answers against a real plan process: exit code, seconds, peak memory.

    uv run python bench/hub_hostile.py [--timeout 10]

Each case of tests/hubserver/hostile.py (broken chunk framing, endless bodies, slow drip,
huge or non-ASCII headers, redirect loops, bombs, hostile size headers) is served by a raw
server on 127.0.0.1 to `kvfit ... --timeout T` in a new process. Prints one row per case;
tests/hub/test_hub_hostile_http.py asserts the outcomes, not the times.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"repo": "kvfit-test/hostile", "gguf": "hf://kvfit-test/hostile/model-Q8_0.gguf"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from hubserver import hostile

    print(f"{'case':38} {'exit':>4} {'s':>6} {'MiB':>5}  message")
    for name, (script, kind) in hostile.SCRIPTS.items():
        server = hostile.RawServer(script).start()
        try:
            code, _, err, seconds, rss = hostile.run_plan(server.url, TARGETS[kind],
                                                          timeout=args.timeout)
        finally:
            server.stop()
        print(f"{name:38} {code:>4} {seconds:6.2f} {rss:5.0f}  {err.strip()[7:80]}")


if __name__ == "__main__":
    main()
