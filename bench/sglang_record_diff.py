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

Last runs (2,292 points, 108 configs; the sglang-rules session). main at c4a6648; then the
multimodal rules (a multimodal model's fraction x 0.95 x the vision-tower adjustment, prefill
CUDA graph off for multimodal classes outside SGLang's breakable list, KDA hybrids and
DeepSeek-V4, the multimodal KV-budget reservation); then a DSA model's auto KV dtype by GPU
generation (bfloat16 on the recorded SM90):

    check            main (c4a6648)          + multimodal rules      + DSA auto KV by GPU
    all checks       1,620 / 2,292  70.7 %   2,124 / 2,292  92.7 %   2,172 / 2,292  94.8 %
    mem_fraction     1,668 / 2,292  72.8 %   2,292 / 2,292 100.0 %   2,292 / 2,292 100.0 %
    refusal          2,292 / 2,292 100.0 %   2,292 / 2,292 100.0 %   2,292 / 2,292 100.0 %
    cell_bytes       2,124 / 2,292  92.7 %   2,124 / 2,292  92.7 %   2,172 / 2,292  94.8 %
    tokens           2,076 / 2,292  90.6 %   2,124 / 2,292  92.7 %   2,172 / 2,292  94.8 %
    running          2,072 / 2,292  90.4 %   2,180 / 2,292  95.1 %   2,192 / 2,292  95.6 %
    swa_tokens         288 / 384    75.0 %     288 / 384    75.0 %     288 / 384    75.0 %
    swa_cell_bytes     288 / 288   100.0 %     288 / 288   100.0 %     288 / 288   100.0 %
    mamba_bytes        432 / 456    94.7 %     432 / 456    94.7 %     432 / 456    94.7 %
    mamba_slots        292 / 456    64.0 %     448 / 456    98.2 %     448 / 456    98.2 %

The 120 misses left are two known causes (tests/sglang_record_cases.py KNOWN): DeepSeek-V4's
own DSV4PoolConfigurator (96 points: 4 checkpoints x 24) and GLM-5.3-Flash's pooled index
cell and missing tail ring (24 points; its 256-token DSA pages are modelled). SGLang's
pipeline-parallel answers are a separate record (tests/engine_probe/sglang-0.5.23-pp.jsonl,
tests/test_sglang_pp.py).
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
