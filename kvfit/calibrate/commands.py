"""Server and benchmark commands: placeholder templates and the engine spec's defaults.

Custom arrays (server_command, benchmark_command) use {name} placeholders from PLACEHOLDERS;
`{{` and `}}` are literal braces. The defaults come from the engine spec's `commands` for
the chosen version (specs/engines/*.yaml), with the flags calibration needs added: where to
reach the server, where to write the result, the seed, and the exact random workload.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from string import Formatter

from ..errors import UsageError

PLACEHOLDERS = ("python", "engine", "base_url", "host", "port", "model", "served_model",
                "tokenizer", "revision", "context", "input_tokens", "output_tokens",
                "concurrency", "num_prompts", "result_file", "seed", "tensor_parallel",
                "data_parallel", "utilization", "max_concurrency")
POINT_ONLY = ("concurrency", "num_prompts", "result_file")


def _names(part: str, key: str) -> list[str]:
    try:
        return [f for _, f, _, _ in Formatter().parse(part) if f is not None]
    except ValueError as exc:
        raise UsageError(f"calibration.{key}: {part!r} is not a valid template ({exc}); "
                         "write {{ and }} for literal braces.") from None


def check_template(template: list, key: str) -> None:
    """Refuse empty arrays, unknown placeholders, point placeholders in server_command, and a
    benchmark_command that does not say where its result goes ({result_file})."""
    if not template:
        raise UsageError(f"calibration.{key} must not be empty.")
    used = set()
    for part in template:
        for name in _names(part, key):
            if name not in PLACEHOLDERS:
                raise UsageError(f"calibration.{key}: unknown placeholder {{{name}}}.",
                                 hint="Known: " + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                                 + ".")
            if key == "server_command" and name in POINT_ONLY:
                raise UsageError(f"calibration.server_command cannot use {{{name}}}: it is "
                                 "set per concurrency point.")
            used.add(name)
    if key == "benchmark_command" and "result_file" not in used:
        raise UsageError("calibration.benchmark_command must write its result JSON to "
                         "{result_file}; without it no point can qualify.")


def fill(template, values: dict) -> list[str]:
    """The template with every placeholder replaced (values are converted with str)."""
    return [part.format_map({k: str(v) for k, v in values.items()}) for part in template]


def launcher(engine: str, python: str) -> list[str]:
    """How to start the engine's CLI with `python` (Engine.launcher: vLLM's `vllm` script
    beside it, else `python -c` on the same entry point; SGLang is `python -m ...`)."""
    from ..engines import get
    return get(engine).launcher(python)


def _engine_argv(text: str, engine: str, python: str) -> list[str]:
    argv = shlex.split(text)
    return launcher(engine, python) + argv[1:]


def default_server(engine: str, version: str | None, values: dict, kv_spelling: str,
                   flags: dict, extra: list[str]) -> list[str]:
    """The spec's launch command for this version and layout, plus host, revision, metrics."""
    from ..engines import print_command

    cmd = print_command(engine, version, str(values["model"]), int(values["tensor_parallel"]),
                        int(values["data_parallel"]), int(values["context"]), kv_spelling,
                        flags, port=int(values["port"]))
    argv = _engine_argv(cmd["launch"], engine, str(values["python"]))
    argv += ["--host", str(values["host"])]
    if values.get("revision"):
        argv += ["--revision", str(values["revision"])]
    from ..engines import get
    return argv + list(get(engine).server_args) + list(extra)


def default_bench(engine: str, rules, values: dict) -> list[str]:
    """The spec's serving-benchmark command for this version, pointed at base_url, with the
    exact random workload, a fixed seed and the result written to {result_file}."""
    fill_spec = {"model": shlex.quote(str(values["model"])), "port": values["port"],
                 "input_tokens": values["input_tokens"], "output_tokens": values["output_tokens"],
                 "concurrency": values["concurrency"], "num_prompts": values["num_prompts"],
                 "tp": values["tensor_parallel"], "dp": values["data_parallel"],
                 "context": values["context"], "kv_dtype": "auto", "flags": ""}
    argv = _engine_argv(rules.commands["bench"].format(**fill_spec), engine,
                        str(values["python"]))
    argv += ["--base-url", str(values["base_url"]), "--seed", str(values["seed"])]
    from ..engines import get
    return argv + get(engine).bench_args(values, Path(str(values["result_file"])))
