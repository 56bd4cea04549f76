"""`kvfit explain-log`'s question: a vLLM or SGLang start-up log beside kvfit's prediction for
the same model, version and flags. Its parser (the one definition of its options), and the
answer as an ExplainResult."""

from __future__ import annotations

import argparse

from .flags import Parser
from .options import Form

MAX_LOG_BYTES = 256 << 20       # a start-up log is kilobytes to a few megabytes


def build_parser(epilog: str | None = None) -> argparse.ArgumentParser:
    """The explain-log parser; epilog: its help's closing text (the CLI's)."""
    from ..engines import engine_args
    from ..numbers import flag
    from .flags import Formatter, add_offline

    p = Parser(prog="kvfit explain-log", formatter_class=Formatter,
               epilog=epilog, description="Compare a vLLM or SGLang start-up log with kvfit's "
               "prediction for the same model, version and flags.")
    p.add_argument("log", help="start-up log file ('-' reads standard input)")
    p.add_argument("--model-dir", help="checkpoint folder with the model's config.json")
    p.add_argument("--config", help="the model's config.json (instead of --model-dir)")
    p.add_argument("--engine-version", help="engine version when the log does not state it")
    p.add_argument("--tp", type=flag("tp"), help="tensor-parallel size when the log does not state it")
    p.add_argument("--hardware", help="accelerator preset (h100-80, ...) for the GPU total when "
                   "the log does not print it")
    p.add_argument("--weight-gib", type=flag("weight_gib"), help="checkpoint weight GiB (whole model) when "
                   "the log prints no loaded weights")
    p.add_argument("--predict-weights", action="store_true",
                   help="predict the loaded weights too (checkpoint bytes, else the labelled "
                   "estimate from config shapes) even when the log prints them, so the whole "
                   "chain is checked, not only the KV rules")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_offline(p, "explain-log reads local files only; accepted so that every kvfit command "
                "takes it")
    engine_args(p, with_engine=False)
    return p


def answer(ns: dict, read):
    """The ExplainResult of parsed explain-log options and the log read() gives (text, or
    text chunks of whole lines; read once the options are checked)."""
    from ..engines import pop_engine_args
    from ..engines.explain import explain
    from .results import ExplainResult

    ns = dict(ns)
    opts = pop_engine_args(ns)
    ns.pop("offline", None)                  # explain-log never contacts the Hub
    text = read()
    model = ns["model_dir"] or ns["config"]
    result = explain(text, model_dir=model, engine_version=ns["engine_version"], tp=ns["tp"],
                     hardware=ns["hardware"], weight_gib=ns["weight_gib"],
                     flags=opts["flags"], overrides=opts["overrides"],
                     log_weights=not ns["predict_weights"])
    result.pop("prediction")
    return ExplainResult.of(result)


# kvfit.explain_log's keywords: the flags of `kvfit explain-log` (--json shapes the CLI's output).
EXPLAIN = Form("kvfit.explain_log", "kvfit explain-log", build_parser,
               frozenset({"help", "json"}))
