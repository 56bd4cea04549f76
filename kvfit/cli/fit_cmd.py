"""`kvfit fit`: which catalog checkpoints (and local folders) meet a target on this hardware
(the question and its parser: kvfit.api.fit; here its help, progress line and rendering)."""

from __future__ import annotations

import json
import sys

from ..api.fitting import parser as _parser

EPILOG = """\
Every checkpoint is planned exactly as `kvfit MODEL --offline <the same flags>` plans it (the
catalog's pinned metadata, never the Hub), so any row can be checked with a single plan; the
command line is printed under the table. Rows that fit are listed best first (most resident
sequences, then the smaller weights); those that do not fit, cannot be judged (weights
unknown) or are refused (unsupported architecture, context over the declared maximum, ...)
are counted, and --all lists them with their one-line reason. With --tune (and --engine)
each checkpoint is planned with the engine settings that hold the most: a row's verdict,
sequences and layout are the tuned ones, and it names the settings that changed.

exit codes: 0 at least one checkpoint fits; 1 none fits; 2 bad input.

examples:
  kvfit fit --hardware dgx-spark --context 128k
  kvfit fit --hardware rtx-5090-32 --gpus 2 --context 32k --users 4 --family qwen3
  kvfit fit --system dgx-h100 --context 128k --kv-dtype fp8 --engine vllm --json
  kvfit fit --hardware h100-80 --gpus 8 --context 32k --engine vllm --tune --family deepseek_v4
  kvfit fit --hardware auto --context 64k ./my-checkpoint   (the local GPUs, and a folder)
"""


def parser():
    """The `kvfit fit` parser with its help's epilog (also the man page)."""
    return _parser(EPILOG)


def _progress():
    """A one-line progress counter on stderr, or None when stderr is not a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(i: int, n: int, model: str) -> None:
        print(f"\rkvfit fit: planning {i + 1}/{n} {model[:60]:<60}", end="", file=sys.stderr,
              flush=True)
    return show


def run(argv: list[str]) -> int:
    from ..api.fitting import answer
    from .fit_text import render

    ns = parser().parse_args(argv)
    progress = None if ns.json else _progress()
    result = answer(ns, progress)
    if progress is not None:
        print("\r" + " " * 80 + "\r", end="", file=sys.stderr, flush=True)
    if ns.json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        from ..textsafe import escape_controls
        sys.stdout.write(escape_controls(render(result.to_json(), ns.all)))
    return result.exit_code
