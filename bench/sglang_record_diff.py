"""kvfit's `--engine sglang` prediction against SGLang 0.5.23's own recorded KV-pool sizing.

    uv run python bench/sglang_record_diff.py            # match rates and every miss
    uv run python bench/sglang_record_diff.py --only qwen3_next

The record is tests/engine_probe/sglang-0.5.23-kv.jsonl (SGLang's own server-args
resolution, KVCacheConfigurator and pool configurator; see
tests/engine_probe/record_sglang_kv.py). The sibling of bench/engine_record_diff.py (vLLM):
for every recorded point it prints nothing when kvfit matches; each miss is printed with the
two figures and, when known, its cause (tests/sglang_record_cases.py KNOWN). The summary gives
the match rate per check and the share of points where every check matches. Rows SGLang
could not size here are listed too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import record_common  # noqa: E402
import sglang_record_cases as cases  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="substring of the config dir to keep")
    a = ap.parse_args()
    pts = [p for p in cases.points() if not a.only or a.only in p.dir]
    tally = record_common.Tally()
    for p in pts:
        try:
            result = cases.compare(p)
        except Exception as exc:  # a kvfit failure is a miss to list, not a crash of the table
            result = {"answered": (f"{type(exc).__name__}: {exc}"[:200], "sized", False)}
        bad = cases.misses(result)
        tally.add(result, bad)
        if bad:
            cause = cases.known_cause(p.row) or "unexplained"
            print(f"MISS {p.id}: " + "; ".join(bad) + f"  [cause: {cause}]")
    print(*record_common.not_built_lines(cases.not_built(), a.only), sep="\n")
    print(tally.headline())
    print(*tally.lines(15), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
