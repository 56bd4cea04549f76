"""kvfit's `--engine vllm` prediction against vLLM 0.33's own recorded KV-cache plan.

    uv run python bench/engine_record_diff.py            # match rates and every miss
    uv run python bench/engine_record_diff.py --only qwen3_5

The record is tests/engine_probe/vllm-0.33.0-kv.jsonl (vLLM's own spec and capacity code,
see tests/engine_probe/record_vllm_kv.py). For every recorded point it prints nothing when
kvfit matches; each miss is printed with the two figures and, when known, its cause
(tests/engine_record_cases.py KNOWN). The summary gives the match rate per check and the
share of points where every check matches. Rows vLLM could not build here are listed too.

Last runs. Session 4 and the block rules: 93 configs, 558 rows, 2,908 points (45 with a
refusal on one side or both and no page checks, so the page checks count 2,863; after the
block rules every check matched). Session 5 after every merge: 119 configs, 804 rows, 4,500
points (page checks 4,432): the 26 configs recorded since (DeepSeek-V4, DSA fp8, Kimi-K3,
GLM-5.3-Flash, Llama-4 FP8, the 15 dirs never run before) and the DeepSeek-V4 rules (packed
grouping, compressor rings). Session 6, GLM-5.3-Flash's packed pool (branch glm5-pack).
Session 10 (branch rules): phi-2 and llava-1.5-7b recorded (2 more configs: 816 rows, 4,524
points, page checks 4,456); every check matches:

    check          session 4 (041fbe5)      session 5 (4,500)        session 6 (4,500)        session 10
    all checks     2,653 / 2,908  91.2 %    4,452 / 4,500  98.9 %    4,500 / 4,500  100.0 %   4,524/4,524
    refusal        2,906 / 2,908  99.9 %    4,500 / 4,500  100.0 %   4,500 / 4,500  100.0 %   4,524/4,524
    token_bytes    2,749 / 2,863  96.0 %    4,384 / 4,432  98.9 %    4,432 / 4,432  100.0 %   4,456/4,456
    block_size     2,703 / 2,863  94.4 %    4,408 / 4,432  99.5 %    4,432 / 4,432  100.0 %   4,456/4,456
    num_blocks     2,610 / 2,863  91.2 %    4,384 / 4,432  98.9 %    4,432 / 4,432  100.0 %   4,456/4,456
    tokens         2,693 / 2,863  94.1 %    4,386 / 4,432  99.0 %    4,432 / 4,432  100.0 %   4,456/4,456
    concurrency    2,693 / 2,863  94.1 %    4,386 / 4,432  99.0 %    4,432 / 4,432  100.0 %   4,456/4,456
    TP refusals        4 / 4                    6 / 6                    6 / 6                6/6

The 255 misses of session 4 were three rules, now engine-spec data (specs/engines/vllm.yaml):
Gemma-4 with an 8-bit cache (attention_block_by_head_size: 64-token FA4 fp8 blocks on SM90),
DSA NVFP4 checkpoints declaring fp8_e4m3 (cache layout vllm-fp8-e4m3-mla: 576 + 132 B rows on
FLASHINFER_MLA_SPARSE_SM90) and MiniMax-M3 (component_block_size 128, indexer_kv_default
bf16). The 48 misses of session 5 were all GLM-5.3-Flash (glm5_next): vLLM keeps its indexer
tail as a one-block CircularBufferSpec ring whose backend takes only block-outermost layouts,
so it packs the KDA states, the MLA + pooled-indexer blocks and the 4-token ring (packed
grouping, kvfit/engines/packed.py) and rounds each block up to the backends' block stride
alignments (rule packed_block_stride); fp8 on SM90 stores raw E4M3 512 B latent rows
(FLASHINFER_MLA_SPARSE_SM90, not the 656 B blob); its KDA runs FlashKDA (3 state blocks per
group). tests/test_vllm_glm5_next_record.py works every point of it by hand. Nothing is in
tests/engine_record_cases.py KNOWN now. The 528 points whose weight bytes kvfit cannot know
(session 5's note: compared with --weight-gib 1) are planned as a user would, without it: with
--kv-cache-memory-bytes vLLM needs no weights for its pool, nor does kvfit's engine section
(the verdict stays unjudged, exit 5, unless the pool alone misses the target). The NOT BUILT
rows are configs vLLM's own code could not build on the CPU host (custom code, model types
transformers does not know), so no comparison exists for them.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import engine_record_cases as cases  # noqa: E402
import record_common  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="substring of the config dir to keep")
    a = ap.parse_args()
    pts = [p for p in cases.points() if not a.only or a.only in p.dir]
    tally, notes = record_common.Tally(), Counter()
    for p in pts:
        result = cases.compare(p)
        bad = cases.misses(result)
        tally.add({k: v for k, v in result.items() if k not in ("cause", "note")}, bad)
        if result.get("note"):
            notes[result["note"]] += 1
        if bad:
            cause = cases.known_cause(p.row) or result.get("cause") or "unexplained"
            print(f"MISS {p.id}: " + "; ".join(bad) + f"  [cause: {cause}]")
    tp_rows = [r for r in cases.tp_refusals() if not a.only or a.only in r["dir"]]
    agree = [r for r in tp_rows if cases.kvfit_refuses_tp(r)]
    for r in tp_rows:
        if r not in agree:
            print(f"MISS {Path(r['dir']).name} tp{r['tp']}: vLLM refuses the TP size, kvfit plans it")
    print(*record_common.not_built_lines([r for r in cases.not_built() if r not in tp_rows],
                                         a.only), sep="\n")
    print(tally.headline())
    print(f"  TP refusals  {len(agree):>5} / {len(tp_rows):<5} (vLLM refuses the TP size: kvfit too)")
    for note, n in notes.items():
        print(f"  note ({n} points): {note}")
    print(*tally.lines(12), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
