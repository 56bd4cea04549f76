"""Ten planning questions every front end must answer alike (issue 23: the CLI's --json,
kvfit.plan(...).to_json(), the page's /api/plan and the MCP `plan` tool).

Each is (id, model, options): options are keyword arguments of kvfit.plan, named by the CLI
flags' destinations; every model is an embedded catalog checkpoint, so each plan runs offline.
The mix: dense, MoE, MLA, hybrid (linear attention + full), sliding window; --hardware and
--system; without an engine, with --engine vllm and --engine sglang; and a systems search.
"""

QUESTIONS = [
    ("dense-h100x8", "Qwen/Qwen3-32B", {"hardware": "h100-80", "gpus": 8, "context": "32k"}),
    ("dense-vllm", "meta-llama/Llama-3.1-70B",
     {"hardware": "h100-80", "gpus": 4, "context": "128k", "concurrent_users": 8, "engine": "vllm"}),
    ("moe-rtx", "Qwen/Qwen3-30B-A3B", {"hardware": "rtx-5090-32", "gpus": 2, "context": "32k",
                                       "concurrent_users": 4}),
    ("moe-sglang", "Qwen/Qwen3-235B-A22B-FP8",
     {"hardware": "h200-141", "gpus": 8, "context": "32k", "concurrent_users": 16, "engine": "sglang"}),
    ("mla-system", "deepseek-ai/DeepSeek-V3", {"system": "dgx-b200", "context": "128k",
                                               "concurrent_users": 8}),
    ("mla-vllm-nodes", "deepseek-ai/DeepSeek-R1",
     {"system": "dgx-h100", "nodes": 2, "context": "64k", "engine": "vllm"}),
    ("hybrid-spark", "Qwen/Qwen3-Next-80B-A3B-Thinking",
     {"hardware": "dgx-spark", "context": "256k", "kv_dtype": "fp8"}),
    ("sliding-rtx", "google/gemma-3-27b-it", {"hardware": "rtx-pro-6000-96", "context": "32k",
                                              "concurrent_users": 4, "active_sequences_per_user": 2}),
    ("sliding-moe-sglang", "openai/gpt-oss-120b",
     {"hardware": "h100-80", "context": "128k", "concurrent_users": 32, "engine": "sglang"}),
    ("systems-search", "deepseek-ai/DeepSeek-V4-Flash",
     {"systems": ["dgx-h100", "dgx-b200"], "context": "1m", "concurrent_users": 25}),
]


# One --tune question (issue 24): the recommended engine settings, what each costs and their
# launch command are the same on every surface (tests/test_tune.py derives its figures).
TUNED = ("tune-v4-flash-vllm", "deepseek-ai/DeepSeek-V4-Flash",
         {"hardware": "h100-80", "gpus": 8, "context": "32k", "engine": "vllm", "tune": True})


def cli_args(model: str, options: dict) -> list[str]:
    """The `kvfit` command line (without the program name) asking the same question."""
    argv = [model]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:                   # a switch (tune)
            argv.append(flag)
            continue
        argv += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return argv + ["--offline"]
