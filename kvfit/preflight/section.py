"""The report's `engine_check` section and the exit code it implies."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..errors import UsageError
from .inputs import probe_inputs
from .options import EngineCheck
from .result import PASSING
from .run import run_probe

MEANING = {
    "registry": "registry: the installed package's model, quantization and cache-dtype "
                "registries were read; the engine did not parse the config. Not load-tested.",
    "config": "preflight-pass means config-compatible on the detected backend: the engine's "
              "registries accept the checkpoint and the engine parsed its config and resolved "
              "its implementation (remote code off, no weights, nothing allocated). It is not "
              "load-tested: weight loading, kernels and memory are exercised only by "
              "--engine-probe load.",
    "load": "load: the engine was started at this context and TP and generated one token "
            "(smoke-pass); that still says nothing about throughput, latency or long-context "
            "accuracy.",
}


def run_check(check: EngineCheck, req, meta, report) -> dict:
    """Probe every requested engine; the temporary directory is removed afterwards."""
    if check.probe == "load" and meta.origin == "gguf":
        raise UsageError("--engine-probe load does not start GGUF checkpoints; use "
                         "--engine-probe config.")
    with tempfile.TemporaryDirectory(prefix="kvfit-engine-") as name:
        tmp = Path(name)
        inp = probe_inputs(req, meta, report, check.tp, tmp)
        results = [run_probe(engine, check, inp.argv(check.probe), tmp, req.offline,
                             quiet=bool(getattr(req, "json", False)))
                   for engine in check.engines]
    source = inp.config_source
    if source.startswith("the config.json kvfit resolved"):
        source += " (removed afterwards)"
    return {"probe": check.probe, "meaning": MEANING[check.probe], "python": check.python,
            "tp": check.tp, "tp_source": check.tp_source, "context_tokens": inp.context,
            "config_source": source, "require_pass": check.require_pass,
            "passed": all(r["status"] in PASSING for r in results), "results": results}


def exit_code(section: dict, base: int) -> tuple[int, str | None]:
    """(exit code, stderr note): 2 when a probe timed out; 3 with --require-engine-pass when
    an engine did not pass; otherwise the plan's own code."""
    slow = [r["engine"] for r in section["results"] if r["timed_out"]]
    if slow:
        return 2, (f"kvfit: engine check: {', '.join(slow)} did not answer within "
                   "--engine-timeout; raise it (importing an engine can take minutes) or check "
                   "the interpreter.")
    if section["require_pass"] and not section["passed"]:
        bad = ", ".join(f"{r['engine']} {r['status']}" for r in section["results"]
                        if r["status"] not in PASSING)
        return 3, f"kvfit: engine check: {bad}; --require-engine-pass exits 3."
    return base, None
