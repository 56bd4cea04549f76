"""Record vLLM 0.33's own parse of the launch commands kvfit prints (tests/test_launch_parse.py).

    KVFIT_VLLM_PYTHON=/path/to/vllm-env/bin/python uv run python \
        tests/engine_probe/record_vllm_commands.py > tests/engine_probe/vllm-0.33.0-commands.jsonl

For every plan in PLANS it runs kvfit (offline, in this interpreter), takes the printed
`vllm serve` command of the recommended layout (each host's, when there are several), parses
it with vllm_args_probe.py in the vLLM interpreter, and writes one JSON line per command:
{"plan", "host", "command", "ok", "args"} with the parsed values the test checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEYS = ("model", "revision", "tensor_parallel_size", "data_parallel_size",
        "enable_expert_parallel", "gpu_memory_utilization", "kv_cache_dtype", "max_model_len",
        "speculative_config", "nnodes", "node_rank", "headless", "attention_config", "port", "hf_overrides")
PLANS = [
    ["zai-org/GLM-5.3", "--system", "dgx-b300", "--context", "128k", "--kv-dtype", "fp8",
     "--mtp", "--utilization", "0.8", "--parallelism", "vllm-dp-ep"],
    ["zai-org/GLM-5.3", "--system", "dgx-b300", "--nodes", "2", "--context", "128k",
     "--kv-dtype", "fp8", "--parallelism", "vllm-dp-ep", "--tp", "16", "--index-dtype", "fp8"],
    ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "32k"],
    ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "2", "--context", "32k",
     "--utilization", "0.85", "--kv-dtype", "fp8"],
    ["openai/gpt-oss-120b", "--system", "dgx-h100", "--nodes", "2", "--context", "128k",
     "--concurrent-users", "64"],
    ["Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context", "128k",
     "--kv-dtype", "fp8", "--rope-scaling",
     '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}'],
]


def commands(plan: list[str], engine: str = "vllm") -> list[tuple[int, str]]:
    """(host, command) pairs kvfit prints for `plan` with --print-command `engine`."""
    from kvfit.cli.plan_args import build_parser
    from kvfit.planner.build import plan as run_plan
    from kvfit.planner.request import PlanRequest, normalize_tp
    from kvfit.planner.spellings import resolve

    ns = vars(build_parser().parse_args([*plan, "--offline", "--print-command", engine]))
    values = ns | resolve(ns)
    cmd = run_plan(PlanRequest(**normalize_tp(values))).engine_command.to_json()
    if cmd["hosts"]:
        return [(h["host"], h["launch"]) for h in cmd["hosts"]]
    return [(0, cmd["launch"])]


def main() -> int:
    python = os.environ.get("KVFIT_VLLM_PYTHON")
    if not python:
        print("set KVFIT_VLLM_PYTHON to a Python with vLLM installed", file=sys.stderr)
        return 2
    from kvfit.progress import progress

    with progress("record vLLM commands", total=len(PLANS)) as shown:   # stderr, TTY only
        rows = []
        for plan in PLANS:
            shown.step(" ".join(plan)[:60])
            rows += [(plan, h, c) for h, c in commands(plan)]
        shown.note(f"parsing {len(rows)} commands with vLLM's own parser (its import is slow)")
        out = subprocess.run([python, str(HERE / "vllm_args_probe.py")], input=json.dumps(
            [c for _, _, c in rows]), capture_output=True, text=True, check=True).stdout
    parsed = [json.loads(line) for line in out.splitlines() if line.strip()]
    for (plan, host, cmd), got in zip(rows, parsed, strict=True):
        args = {k: got["args"].get(k) for k in KEYS}
        args["attention_config"] = {"indexer_kv_dtype": (args["attention_config"] or {}).get(
            "indexer_kv_dtype")}
        print(json.dumps({"plan": plan, "host": host, "command": cmd, "ok": got["ok"],
                          "error": got.get("error"), "args": args}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
