"""Score a planner on docs/conformance/engine-views-1.jsonl (format: docs/conformance.md).

    uv run python bench/conformance_run.py                       # kvfit (bench/conformance_kvfit.py)
    uv run python bench/conformance_run.py --planner "CMD ARGS"  # any planner
    uv run python bench/conformance_run.py --engine sglang --every 10

The planner command gets the points (each line without "expected") on stdin and writes one
line per point on stdout: {"id": ..., "answers": {key: value}}. A point passes when every
expected key is answered within the file's tolerance; a key left out, or a point left out,
misses. Prints the points passed per engine and the pass rate of every key; exit 0 when every
point passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "docs" / "conformance" / "engine-views-1.jsonl"
KVFIT = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'bench' / 'conformance_kvfit.py'))}"


def load(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[0], lines[1:]


def agrees(key: str, want, got, head: dict) -> bool:
    """One expected value against the planner's answer, with the file's tolerances."""
    if got is None or isinstance(got, bool) != isinstance(want, bool):
        return False
    if isinstance(want, bool) or isinstance(want, str):
        return got == want
    if isinstance(want, list):                       # an exact fraction [numerator, denominator]
        return isinstance(got, list) and len(got) == 2 and got[1] != 0 \
            and got[0] * want[1] == want[0] * got[1]
    if not isinstance(got, (int, float)):
        return False
    if key in head.get("absolute_tolerance", {}):
        return abs(got - want) <= head["absolute_tolerance"][key]
    if key in head.get("relative_tolerance", {}):
        return abs(got - want) <= head["relative_tolerance"][key] * max(abs(want), 1e-9)
    return got == want


def score(head: dict, points: list[dict], answers: dict[str, dict]) -> dict:
    """{engine: {"points": n, "passed": k, "keys": {key: [passed, asked]}, "misses": [...]}}"""
    out: dict = {}
    for p in points:
        e = out.setdefault(p["engine"], {"points": 0, "passed": 0, "keys": {}, "misses": []})
        got = answers.get(p["id"], {})
        bad = []
        for key, want in p["expected"].items():
            ok = agrees(key, want, got.get(key), head)
            tally = e["keys"].setdefault(key, [0, 0])
            tally[0] += ok
            tally[1] += 1
            if not ok:
                bad.append(f"{key}: {got.get(key)!r} vs {want!r}")
        e["points"] += 1
        e["passed"] += not bad
        if bad:
            e["misses"].append(f"{p['id']}: " + "; ".join(bad)
                               + (f" ({got['error']})" if "error" in got else ""))
    return out


def run(planner: str, points: list[dict]) -> dict[str, dict]:
    """The planner's answers by point id (the points go in without "expected")."""
    stdin = "".join(json.dumps({k: v for k, v in p.items() if k != "expected"}) + "\n"
                    for p in points)
    done = subprocess.run(shlex.split(planner), input=stdin, capture_output=True, text=True,
                          cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the planner exited {done.returncode}: {done.stderr.strip()[-500:]}")
    out = {}
    for line in done.stdout.splitlines():
        if line.strip():
            a = json.loads(line)
            out[a["id"]] = a.get("answers") or {}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--planner", default=KVFIT, help="the planner command (default: kvfit)")
    p.add_argument("--file", type=Path, default=FILE)
    p.add_argument("--engine", choices=("vllm", "sglang"), help="only this engine's points")
    p.add_argument("--every", type=int, default=1, help="every Nth point only (a quick run)")
    p.add_argument("--show", type=int, default=10, help="misses printed per engine")
    args = p.parse_args(argv)
    head, points = load(args.file)
    points = [x for x in points if args.engine in (None, x["engine"])][::max(args.every, 1)]
    result = score(head, points, run(args.planner, points))
    for engine, e in result.items():
        print(f"{engine}: {e['passed']:,}/{e['points']:,} points pass")
        for key, (ok, asked) in sorted(e["keys"].items()):
            print(f"  {key}: {ok:,}/{asked:,}")
        for line in e["misses"][:args.show]:
            print(f"  miss {line}")
    return 0 if all(e["passed"] == e["points"] for e in result.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
