"""Record SGLang 0.5.23's own KV-pool sizing for the pinned configs (tests/test_sglang_kv_record.py).

    KVFIT_SGLANG_PYTHON=/work/sglang-venv/bin/python python3 tests/engine_probe/record_sglang_kv.py \
        [DIR ...] [--append] [--jobs 2] > tests/engine_probe/sglang-0.5.23-kv.jsonl

The SGLang venv is the one of the args probe (sglang==0.5.23 with --no-deps, CPU torch) plus
`dill` and `sentencepiece`, which sglang.srt.configs imports at load; --jobs runs that many
interpreters at once (the record's rows do not depend on it).

Without DIRs: every pinned config dir under tests/architectures/*/configs (synthetic ones
excluded), the same dirs the vLLM record uses. The dirs of one architecture run
sglang_kv_probe.py in one SGLang interpreter of their own (one architecture's failure cannot
leave state behind for the next; SGLang re-publishes its whole config for every row), TP 1,
2 and 8, --kv-cache-dtype auto and fp8_e4m3. Output keeps the pinned-dir order. The first
line is a header saying what was recorded and how; with --append it is not written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from itertools import groupby
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recording import pinned_dirs, run_probe  # noqa: E402

HEADER = {
    "recorded": "SGLang 0.5.23 (PyPI wheel, --no-deps) with torch 2.13 CPU on a CPU-only host, by "
                "tests/engine_probe/record_sglang_kv.py -> sglang_kv_probe.py; platform emulated as "
                "8 x H100 80GB SM90 by sglang_gpu_emulation.py (CUDA available, capability 9.0, "
                "an nvidia-smi stand-in, stated free memory, placeholder modules for kernel and "
                "image libraries). Per (config dir, TP, --kv-cache-dtype): the server defaults "
                "SGLang's own resolution chose (mem_fraction_static, page size, backend, ...), the "
                "pool configurator and its per-token cell bytes (and Mamba state bytes per "
                "request), and, for a KV budget of 40 GiB and 70 GiB per GPU (free after loading "
                "minus pre_model_load x (1 - mem_fraction_static), pre_model_load 78.68 GiB) at "
                "context 4096 and the derived context length, KVCacheConfigurator's own "
                "max_total_num_tokens, max_running_requests, SWA / full pool tokens and Mamba pool "
                "size, or the refusal it raised.",
    "lengths": [4096, "derived"],
    "available_bytes": [40 << 30, 70 << 30],
    "free_before_gib": 78.68,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1800)
    a = ap.parse_args()
    python = os.environ.get("KVFIT_SGLANG_PYTHON")
    if not python:
        print("set KVFIT_SGLANG_PYTHON to a Python with sglang==0.5.23 installed", file=sys.stderr)
        return 2
    if not a.append:
        print(json.dumps(HEADER), flush=True)
    dirs = a.dirs or pinned_dirs()
    groups = [list(g) for _, g in groupby(dirs, key=lambda d: Path(d).parent.parent.name)]
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for lines in pool.map(lambda g: run_probe(python, "sglang_kv_probe.py", g, a.timeout),
                              groups):
            for line in lines:
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
