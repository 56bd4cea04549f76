"""Record SGLang 0.5.23's own parse of the launch commands kvfit prints (tests/test_launch_parse.py).

    KVFIT_SGLANG_PYTHON=/path/to/sglang-env/bin/python uv run python \
        tests/engine_probe/record_sglang_commands.py > tests/engine_probe/sglang-0.5.23-commands.jsonl

Like record_vllm_commands.py, with sglang_args_probe.py (SGLang's prepare_server_args, plus the
CPU-only rewrite of deprecated attention-DP flags) in the SGLang interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_vllm_commands import commands  # noqa: E402

HERE = Path(__file__).resolve().parent
KEYS = ("model_path", "revision", "tp_size", "dp_size", "attn_dp_size", "ep_size",
        "mem_fraction_static", "kv_cache_dtype", "context_length", "speculative_algorithm",
        "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
        "nnodes", "node_rank", "port", "json_model_override_args")
PLANS = [
    ["zai-org/GLM-5.3", "--system", "dgx-b300", "--context", "128k", "--kv-dtype", "fp8",
     "--mtp", "--utilization", "0.8", "--parallelism", "sglang-dpa"],
    ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
     "--kv-dtype", "fp8"],
    ["Qwen/Qwen3-32B", "--system", "dgx-h100", "--nodes", "2", "--context", "32k"],
    ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "128k",
     "--kv-dtype", "fp8", "--rope-scaling",
     '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}'],
]


def main() -> int:
    python = os.environ.get("KVFIT_SGLANG_PYTHON")
    if not python:
        print("set KVFIT_SGLANG_PYTHON to a Python with SGLang installed", file=sys.stderr)
        return 2
    from kvfit.progress import progress

    with progress("record SGLang commands", total=len(PLANS)) as shown:   # stderr, TTY only
        rows = []
        for plan in PLANS:
            shown.step(" ".join(plan)[:60])
            rows += [(plan, h, c) for h, c in commands(plan, "sglang")]
        shown.note(f"parsing {len(rows)} commands with SGLang's own parser (its import is slow)")
        out = subprocess.run([python, str(HERE / "sglang_args_probe.py")], input=json.dumps(
            [c for _, _, c in rows]), capture_output=True, text=True, check=True).stdout
    parsed = [json.loads(line) for line in out.splitlines() if line.strip()]
    for (plan, host, cmd), got in zip(rows, parsed, strict=True):
        args = {k: (got.get("resolved") or {}).get(k) for k in KEYS}
        print(json.dumps({"plan": plan, "host": host, "command": cmd, "ok": got["ok"],
                          "error": got.get("error"), "args": args}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
