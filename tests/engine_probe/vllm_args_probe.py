"""Run under a vLLM interpreter: parse `vllm serve ...` command lines exactly as vLLM does.

    /work/vllm-venv/bin/python tests/engine_probe/vllm_args_probe.py < cmds.json

stdin is a JSON list of command strings, each starting `vllm serve MODEL ...`. For each one we
print a JSON line {"command", "ok", "error", "args"}: `args` holds every attribute of the parsed
namespace, overlaid with the AsyncEngineArgs built from it (speculative_config etc. as dicts).

The parser is the one `vllm serve` builds (vLLM 0.33.0): a top-level FlexibleArgumentParser
with subparsers (vllm/entrypoints/cli/main.py:88-114), ServeSubcommand.subparser_init
(vllm/entrypoints/cli/serve.py:161-174) -> make_arg_parser (vllm/entrypoints/common/cli_args.py:431),
which adds FrontendArgs and AsyncEngineArgs.add_cli_args (vllm/engine/arg_utils.py:3250). Then,
as at run time, ServeSubcommand.validate (serve.py:158), model_tag -> model (serve.py:56-57) and
AsyncEngineArgs.from_cli_args (arg_utils.py:1972; called at serve.py:189). No VllmConfig is built,
so no model is downloaded and no GPU is needed; but since --kv-cache-dtype is a free string at
parse time (vllm/config/cache.py:235), we also build a CacheConfig from the cache flags, which
runs its dtype/range validators (vllm/config/cache.py:468-476) as create_engine_config would.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import io
import json
import os
import shlex
import sys


def to_json(value, depth: int = 0):
    if depth > 6:
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value, depth + 1)
    if isinstance(value, dict):
        return {str(k): to_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v, depth + 1) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name, None), depth + 1) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        with contextlib.suppress(Exception):
            return to_json(value.model_dump(), depth + 1)
    return repr(value)


def build_parser():
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(prog="vllm", description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    cmd = ServeSubcommand()
    cmd.subparser_init(subparsers).set_defaults(dispatch_function=cmd.cmd)
    return parser, cmd


def probe(parser, cmd, command: str) -> dict:
    from vllm.config import CacheConfig
    from vllm.engine.arg_utils import AsyncEngineArgs

    out = {"command": command, "ok": False, "error": None, "args": {}}
    argv = shlex.split(command)
    if argv[:2] != ["vllm", "serve"]:
        out["error"] = "command must start with 'vllm serve'"
        return out
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stderr):
            ns = parser.parse_args(argv[1:])
    except SystemExit:
        out["error"] = stderr.getvalue().strip().splitlines()[-1] if stderr.getvalue() else "parse error"
        return out
    try:
        cmd.validate(ns)
        if getattr(ns, "model_tag", None) is not None:
            ns.model = ns.model_tag
        engine_args = AsyncEngineArgs.from_cli_args(ns)
        CacheConfig(
            block_size=engine_args.block_size,
            cache_dtype=engine_args.kv_cache_dtype,
            gpu_memory_utilization=engine_args.gpu_memory_utilization,
            kv_cache_memory_bytes=engine_args.kv_cache_memory_bytes,
        )
    except Exception as exc:  # vLLM's own validation refused the arguments
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    args = {k: v for k, v in vars(ns).items() if not callable(v)}
    args.update({f.name: getattr(engine_args, f.name) for f in dataclasses.fields(engine_args)})
    out["ok"] = True
    out["args"] = {k: to_json(v) for k, v in sorted(args.items())}
    return out


def main() -> None:
    # No GPU here: name the CPU platform so vLLM's config defaults can be computed.
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")  # keep stdout for JSON
    commands = json.load(sys.stdin)
    parser, cmd = build_parser()
    for command in commands:
        print(json.dumps(probe(parser, cmd, command)), flush=True)


if __name__ == "__main__":
    main()
