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

Last runs (2,292 points, 108 configs). main at c4a6648; then the sglang-rules session's
multimodal rules (a multimodal model's fraction x 0.95 x the vision-tower adjustment, prefill
CUDA graph off for multimodal classes outside SGLang's breakable list, KDA hybrids and
DeepSeek-V4, the multimodal KV-budget reservation) and a DSA model's auto KV dtype by GPU
generation (bfloat16 on the recorded SM90), 99a5f6d; then the sglang-v4 session: GLM-5.3-Flash's
SGLang layout (sglang-dsa-scaled: 528 B fp8 latent row, pooled index ceil(132 / 4) = 33 B per
token in the cell, the tail ring outside the pool budget) and DeepSeek-V4's DSV4PoolConfigurator
(kvfit/engines/sglang_dsv4.py, engine rule dsv4_pool; the V4 rows state no single cell, so
cell_bytes is judged on the 2,196 points whose row states one):

    check            main (c4a6648)          99a5f6d                 + GLM-5.3-Flash + DSV4
    all checks       1,620 / 2,292  70.7 %   2,172 / 2,292  94.8 %   2,292 / 2,292 100.0 %
    mem_fraction     1,668 / 2,292  72.8 %   2,292 / 2,292 100.0 %   2,292 / 2,292 100.0 %
    refusal          2,292 / 2,292 100.0 %   2,292 / 2,292 100.0 %   2,292 / 2,292 100.0 %
    cell_bytes       2,124 / 2,292  92.7 %   2,172 / 2,292  94.8 %   2,196 / 2,196 100.0 %
    tokens           2,076 / 2,292  90.6 %   2,172 / 2,292  94.8 %   2,292 / 2,292 100.0 %
    running          2,072 / 2,292  90.4 %   2,192 / 2,292  95.6 %   2,292 / 2,292 100.0 %
    swa_tokens         288 / 384    75.0 %     288 / 384    75.0 %     384 / 384   100.0 %
    swa_cell_bytes     288 / 288   100.0 %     288 / 288   100.0 %     288 / 288   100.0 %
    mamba_bytes        432 / 456    94.7 %     432 / 456    94.7 %     456 / 456   100.0 %
    mamba_slots        292 / 456    64.0 %     448 / 456    98.2 %     456 / 456   100.0 %

No known miss is left (tests/sglang_record_cases.py KNOWN is empty); the hand-checked rules are
tests/test_sglang_v4_record.py. Rows SGLang itself could not size here (NOT BUILT) are listed
after the misses. SGLang's pipeline-parallel answers are a separate record
(tests/engine_probe/sglang-0.5.23-pp.jsonl, tests/test_sglang_pp.py).
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
