"""Record vLLM 0.33's own KV-cache plan for the pinned configs (tests/test_vllm_kv_record.py).

    KVFIT_VLLM_PYTHON=/work/vllm-venv/bin/python python3 tests/engine_probe/record_vllm_kv.py \
        [DIR ...] [--append] > tests/engine_probe/vllm-0.33.0-kv.jsonl

Without DIRs: every pinned config dir under tests/architectures/*/configs (synthetic ones
excluded). Each dir runs vllm_kv_probe.py in its own vLLM interpreter (one architecture's
failure cannot leave state behind for the next), TP 1, 2 and 8, --kv-cache-dtype auto and
fp8. The first line is a header saying what was recorded and how; with --append the header
is not written (to grow an existing record).

--gpu b200 | rtx-pro-6000 emulates that GPU instead of the H100 (vllm_gpu_emulation.py GPUS)
and --kv lists the --kv-cache-dtype spellings; such a record goes to its own file:

    KVFIT_VLLM_PYTHON=... python3 tests/engine_probe/record_vllm_kv.py --gpu b200 \
        --kv auto,fp8,nvfp4 tests/architectures/gemma4/configs/google--gemma-4-26B-A4B ... \
        > tests/engine_probe/vllm-0.33.0-kv-b200.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recording import pinned_dirs, run_probe  # noqa: E402

HEADER = {
    "recorded": "vLLM 0.33.0 (PyPI CUDA wheel) with torch 2.13 CPU on a CPU-only host, by "
                "tests/engine_probe/record_vllm_kv.py -> vllm_kv_probe.py; platform emulated as "
                "8 x H100 80GB SM90 by vllm_gpu_emulation.py (vLLM's CUDA platform class with "
                "compute capability 9.0; compiled extensions stubbed; TP rank 0 of N via "
                "stand-in parallel groups). Per (config dir, TP, --kv-cache-dtype): the serve "
                "defaults vLLM chose, the attention backends, the per-layer KVCacheSpecs "
                "(collapsed, with layer counts) and, for 40 GiB and 70 GiB available KV memory per "
                "GPU at max_model_len 4096, 8192, 32768 and the derived maximum (each only when "
                "<= the derived maximum), vLLM's groups, block size, num_blocks, 'GPU KV cache "
                "size' tokens and 'Maximum concurrency', or the refusal it raised.",
    "lengths": [4096, 8192, 32768, "derived"],
    "available_bytes": [40 << 30, 70 << 30],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--gpu", default="h100", help="the emulated GPU (vllm_gpu_emulation.GPUS)")
    ap.add_argument("--kv", default="auto,fp8", help="--kv-cache-dtype spellings, comma-separated")
    a = ap.parse_args()
    python = os.environ.get("KVFIT_VLLM_PYTHON")
    if not python:
        print("set KVFIT_VLLM_PYTHON to a Python with vllm==0.33.0 installed", file=sys.stderr)
        return 2
    os.environ["KVFIT_VLLM_GPU"] = a.gpu
    if not a.append:
        header = HEADER
        if a.gpu != "h100":
            header = {**HEADER, "gpu": a.gpu, "kv_cache_dtypes": a.kv.split(","),
                      "recorded": HEADER["recorded"].replace(
                          "8 x H100 80GB SM90", f"8 x {a.gpu}").replace(
                          "compute capability 9.0", "the compute capability, name and total "
                          "memory vllm_gpu_emulation.GPUS gives it")}
        print(json.dumps(header), flush=True)
    for d in a.dirs or pinned_dirs():
        for line in run_probe(python, "vllm_kv_probe.py", [d], a.timeout, ("--kv", a.kv)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
