"""`kvfit explain-log FILE`: predicted vs printed for a vLLM or SGLang start-up log (the question
and its parser: kvfit.api.explain; here the file reading, help and rendering)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..api.explain import MAX_LOG_BYTES
from ..errors import UsageError
from ..report.words import brief

EPILOG = """\
The log may be plain or carry process prefixes ((EngineCore pid=...) INFO ..., [... TP0]).
kvfit recovers the engine, version, model and flags, evaluates the model's state from its
config (--model-dir: logs name Hub ids), predicts the start-up numbers, and prints them
beside the printed ones. Inputs the log states (GPU total, loaded weights) are used as
inputs; "from the printed memory" rows check the paging rules alone.

exit codes: 0 compared; 2 not a readable start-up log, missing model config, bad flags.

example:
  kvfit explain-log serve.log --model-dir ./Llama-3.1-8B-Instruct
"""


def build_parser() -> argparse.ArgumentParser:
    """The explain-log parser (kvfit.api.explain) with its help's epilog."""
    from ..api.explain import build_parser as options

    return options(EPILOG)


def _fmt(value, unit: str) -> str:
    from ..report.words import gib, number

    if value is None:
        return "-"
    if unit == "gib":
        return gib(value * 2**30, 2)      # the engines print GiB with two decimals
    if unit == "ratio":
        return f"{value:.4g}"
    return number(int(round(value)))


def render(result: dict) -> str:
    """The side-by-side table (plain text, deterministic)."""
    head = (f"kvfit explain-log: {result['engine']} {result['version']} "
            f"(version: {result['version_basis']}; rules {result['rules_range']})\n"
            f"model {result['model'] or '(not named in the log)'} -> config {result['config']} (spec "
            f"{result['architecture']}), TP={result['tp']} ({result['tp_basis']}), "
            f"KV {result['kv_dtype']}, max_model_len {_fmt(result['max_model_len'], '')}\n")
    table = [("number", "printed", "predicted", "diff", "rule")]
    for r in result["rows"]:
        diff = "-" if r["diff_pct"] is None else f"{r['diff_pct']:+.2f}%"
        table.append((r["number"], _fmt(r["printed"], r["unit"]), _fmt(r["predicted"], r["unit"]),
                      diff, brief(r["rule"], "--json shows the whole rule") if r["rule"] else "-"))
        for key in ("note", "why"):
            if r.get(key):
                table.append(("", "", "", "", f"{key}: {r[key]}"))
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = [f"{a:<{widths[0]}}  {b:>{widths[1]}}  {c:>{widths[2]}}  {d:>{widths[3]}}  {e}"
             for a, b, c, d, e in table]
    notes = [f"note: {n}" for n in result["notes"]]
    return head + "\n" + "\n".join(lines) + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")


_CHUNK_BYTES = 4 << 20


def _log_chunks(name: str):
    """The log (a regular file, or '-' for standard input) as text chunks of whole lines,
    streamed: at most MAX_LOG_BYTES are read, and a failing read is one paragraph (exit 2)."""
    from ..numbers import shown

    if name == "-":
        return _stream(sys.stdin.buffer, "standard input")
    path = Path(name)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise UsageError(f"no such log file: {name[:300]}") from None
    except OSError as exc:
        raise UsageError(_unreadable(name, exc)) from None
    import stat

    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"log {shown(name, 300)} is not a regular file.",
                         hint="Pass the start-up log file, or '-' to read standard input.")
    if info.st_size > MAX_LOG_BYTES:
        raise UsageError(_too_long(name, f"{info.st_size:,} bytes"), hint=_CUT_HINT)
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise UsageError(_unreadable(name, exc)) from None
    return _stream(stream, name)


def _unreadable(name: str, exc: OSError) -> str:
    from ..numbers import shown

    return f"cannot read log {shown(name, 300)}: {str(exc.strerror or exc).rstrip('.')}."


_CUT_HINT = ("Pass the start-up part: from the launch to the KV-cache lines (for example "
             "`head -n 5000 LOG`).")


def _too_long(name: str, size: str) -> str:
    from ..numbers import shown

    return (f"log {shown(name, 300)} is {size}; kvfit explain-log reads at most "
            f"{MAX_LOG_BYTES:,} bytes of a start-up log.")


def _stream(stream, name: str):
    from ..engines.logparse import MAX_LINE_CHARS

    total = 0
    with stream:
        while True:
            try:
                block = stream.read(_CHUNK_BYTES)
                if block and not block.endswith(b"\n"):
                    block += stream.readline(MAX_LINE_CHARS * 4)
            except OSError as exc:
                raise UsageError(_unreadable(name, exc)) from None
            if not block:
                return
            total += len(block)
            if total > MAX_LOG_BYTES:
                raise UsageError(_too_long(name, f"more than {MAX_LOG_BYTES:,} bytes"),
                                 hint=_CUT_HINT)
            yield block.decode("utf-8", "replace")


def run(argv: list[str]) -> int:
    """Entry for `kvfit explain-log ARGS`; returns the exit code (errors raise KvfitError)."""
    from ..api.explain import answer

    ns = vars(build_parser().parse_args(argv))
    result = answer(ns, lambda: _log_chunks(ns["log"]))
    if ns["json"]:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render(result.to_json()))
    return result.exit_code


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (until `kvfit explain-log` is dispatched from kvfit.cli.main)."""
    from ..errors import KvfitError

    argv = sys.argv[1:] if argv is None else argv
    try:
        return run(argv)
    except KvfitError as err:
        print(err.render(), file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
