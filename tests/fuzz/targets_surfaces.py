"""Targets for the command-line and tool-output kinds: flags (plan, --sweep, --plot),
fit_args, catalog_args, nvidia_smi, nvml and explain_file. Each runs kvfit's own entry for
that input in-process and checks the answer: a value no number reader may take (NEVER) is
never answered, free memory is never above total, explain-log never predicts at a TP its
log's rank names contradict."""

from __future__ import annotations

import io
import json
import math
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from .checks import _check
from .targets_plan import MODEL, check_report

# values that are no number in any field: answering with one of them is a wrong answer
NEVER = {"9" * 5000, "²", "nan", "inf", "1e309", "", "١٢", "0x10", "-1"}


def _run(entry, argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        code = entry(argv)
    return code, out.getvalue()


def _given_never(argv: list[str]) -> list[str]:
    """The flags of `argv` given a NEVER value, and --sweep specs holding one."""
    pairs = list(zip(argv, argv[1:], strict=False))
    bad = [f for f, v in pairs if f.startswith("--") and f != "--sweep"
           and f not in ("--hardware", "--system", "--kv-dtype", "--engine", "--plot")
           and v in NEVER]
    bad += [v for f, v in pairs if f == "--sweep" and v.partition("=")[0]
            not in ("kv-dtype",) and set(v.partition("=")[2].split(",")) & NEVER]
    return bad


def flags(case: tuple[list[str], str]) -> str:
    from kvfit.cli.main import run_plan

    argv, mode = case
    with tempfile.TemporaryDirectory() as root:
        full = [str(MODEL), *argv, "--offline", "--json"]
        if mode == "plot":
            import random

            from .gen_surfaces import _plot
            full += ["--plot", _plot(random.Random(" ".join(argv)), root)]
        code, out = _run(run_plan, full)
    _check(code in (0, 1, 5), f"exit {code}")
    bad = _given_never(argv)
    _check(not bad, f"answered with {str(bad)[:80]}")
    report = json.loads(out)
    if "sweep" not in report:
        check_report(report)
    return mode


def fit_args(argv: list[str]) -> str:
    from kvfit.cli.fit_cmd import run

    code, out = _run(run, [*argv, "--no-catalog", str(MODEL), "--json"])
    _check(code in (0, 1), f"exit {code}")
    bad = _given_never(argv)
    _check(not bad, f"answered with {str(bad)[:80]}")
    doc = json.loads(out)
    _check(sum(doc["counts"].values()) == 1, f"counts {doc['counts']}")
    return "fits" if code == 0 else "does not fit"


def catalog_args(argv: list[str]) -> str:
    from kvfit.cli.catalog_cmd import run

    code, _ = _run(run, argv)
    _check(code == 0, f"exit {code}")
    return argv[0]


def _check_detected(d: dict) -> None:
    from kvfit.hardware.detect import MAX_MIB

    _check(d["count"] >= 1 and d["preset"], f"{d['count']} GPUs, preset {d['preset']!r}")
    for g in d["gpus"]:
        t, f = g["total_mib"], g["free_mib"]
        _check(t is None or 0 <= t <= MAX_MIB, f"total {t!r} MiB")
        _check(f is None or 0 <= f <= MAX_MIB, f"free {f!r} MiB")
        _check(t is None or f is None or f <= t, f"free {f} MiB above total {t} MiB")


def nvidia_smi(case: tuple[int, bytes, bytes]) -> str:
    from kvfit.hardware.detect import detect, read_output

    _check_detected(detect(read_output(*case)))
    return "detected"


class _NvmlError(Exception):
    pass


def nvml(case: tuple) -> str:
    from types import SimpleNamespace

    from kvfit.hardware import detect as det
    from kvfit.hardware import nvml as module

    count, gpus = case

    def memory(handle):
        total, free = gpus[handle][1:]
        return SimpleNamespace(**{k: v for k, v in (("total", total), ("free", free))
                                  if v is not None})
    fake = SimpleNamespace(
        NVMLError=_NvmlError, nvmlInit=lambda: None, nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: count, nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda h: gpus[h][0] if h < len(gpus) else (_ for _ in ()).throw(
            _NvmlError("no such device")),
        nvmlDeviceGetMemoryInfo=memory)
    before = module.load
    module.load = lambda: fake
    try:
        d = det.detect()
    finally:
        module.load = before
    _check(d["source"] == "NVML", f"source {d['source']}")
    _check_detected(d)
    return "detected"


def explain_file(case: tuple[str, str, list[str]]) -> str:
    from engine_log_cases import load_cases

    from kvfit.cli.explain_log import run

    slug, text, extra = case
    model = {c.slug: c.model_dir for c in load_cases()}[slug]
    with tempfile.TemporaryDirectory() as root:
        path = Path(root, "start.log")
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        code, out = _run(run, [str(path), "--model-dir", str(model), "--json", *extra])
    _check(code == 0, f"exit {code}")
    bad = _given_never(extra) + (["--tp 0"] if ["--tp", "0"] == extra[:2] else [])
    _check(not bad, f"answered with {str(bad)[:80]}")
    doc = json.loads(out)
    _check(isinstance(doc["tp"], int) and doc["tp"] >= 1, f"tp {doc['tp']!r}")
    from kvfit.engines.logparse import read_lines
    _, _, rank = read_lines([text])
    _check(rank is None or rank < doc["tp"], f"rank {rank} named, planned at TP={doc['tp']}")
    for r in doc["rows"]:
        for key in ("printed", "predicted"):
            v = r.get(key)
            _check(v is None or (isinstance(v, int | float) and math.isfinite(v)),
                   f"{r['number']} {key} = {v!r}")
    return doc["engine"]


TARGETS = {"flags": flags, "fit_args": fit_args, "catalog_args": catalog_args,
           "nvidia_smi": nvidia_smi, "nvml": nvml, "explain_file": explain_file}
