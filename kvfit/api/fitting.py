"""`kvfit fit`'s question: which catalog checkpoints (and local folders) meet a target on this
hardware. Its parser (the one definition of its options), and the answer as a FitResult."""

from __future__ import annotations

import argparse
import textwrap

from ..errors import UsageError
from ..numbers import flag as field_flag
from .flags import Formatter, Parser, add_offline
from .options import Form

# fit flag -> the single-plan flag it is passed on as
PASSED = {"gpus": "--gpus", "system": "--system", "nodes": "--nodes", "tp": "--tp",
          "context": "--context", "users": "--concurrent-users", "kv_dtype": "--kv-dtype",
          "engine": "--engine", "utilization": "--utilization"}


def parser(epilog: str | None = None) -> Parser:
    """The `kvfit fit` parser; epilog: its help's closing text (the CLI's examples)."""
    p = Parser(prog="kvfit fit", formatter_class=Formatter,
               epilog=epilog, description=textwrap.fill("Which checkpoints meet the target on this hardware? "
               "Plans every checkpoint of kvfit's offline catalog (and any local checkpoint "
               "folders given) with the single plan's own code and lists those that fit, best "
               "first, with their resident sequences, recommended layout, weights and "
               "quantized siblings.", 79))
    p.add_argument("paths", nargs="*", metavar="PATH", help="local checkpoint folders to plan "
                   "as well")
    p.add_argument("--hardware", help="accelerator preset (see `kvfit --list-hardware`), "
                   "custom:<GiB>, or auto: the local GPUs nvidia-smi reports (read once)")
    p.add_argument("--gpus", type=field_flag("gpus"), help="number of accelerators (default 1)")
    p.add_argument("--system", help="a complete system preset (see `kvfit --list-systems`); "
                   "not with --hardware or --gpus")
    p.add_argument("--nodes", type=field_flag("nodes"), help="number of complete systems with --system")
    p.add_argument("--tp", help="tensor-parallel size: auto (default: every divisor) or N")
    p.add_argument("--context", required=True, help="tokens per sequence: 32768, or 32k / 1m "
                   "(powers of 1024)")
    p.add_argument("--users", type=field_flag("concurrent_users", "--users"),
                   help="users to serve at once, one resident sequence "
                   "each (default 1; --concurrent-users of a single plan)")
    p.add_argument("--kv-dtype", help="cache dtype: auto (default), bf16, fp8, ...")
    from ..engines import names
    p.add_argument("--engine", choices=list(names()), help="answer with the engine's own "
                   "pool (as `kvfit MODEL --engine E`)")
    p.add_argument("--utilization", type=field_flag("utilization"),
                   help="fraction of each GPU's memory to budget")
    p.add_argument("--tune", action="store_true", help="with --engine: plan every checkpoint "
                   "with the engine settings that hold the most (as `kvfit MODEL --tune`); rows "
                   "then give the tuned verdict, sequences and the settings changed")
    p.add_argument("--tune-max-utilization", type=field_flag("tune_max_utilization"),
                   metavar="U", help="highest memory fraction --tune may choose (default: the "
                   "engine's own default)")
    p.add_argument("--family", action="append", metavar="F", help="only catalog checkpoints "
                   "of this organisation or model_type (e.g. Qwen, nvidia, qwen3, deepseek_v3; "
                   "any letter case; repeatable)")
    p.add_argument("--no-catalog", action="store_true", help="plan only the PATHs given")
    p.add_argument("--all", action="store_true", help="also list the checkpoints that do not "
                   "fit, cannot be judged or are refused, with their reason")
    p.add_argument("--json", action="store_true", help="machine-readable result")
    add_offline(p, "fit always plans offline, from the catalog and the PATHs given; accepted "
                "so that every kvfit command takes it")
    return p


def _auto(ns: argparse.Namespace) -> tuple[str | None, str | None]:
    """--hardware auto is read once: (preset, a note saying what was seen)."""
    if str(ns.hardware or "").casefold() != "auto":
        return ns.hardware, None
    from ..hardware.detect import describe, seen

    d, used = seen(ns.system, ns.gpus)
    ns.gpus = used
    return d["preset"], describe(d, used)


def plan_flags(ns: argparse.Namespace, hardware: str | None) -> list[str]:
    """The single-plan flags every candidate is planned with (after the model)."""
    flags = ["--offline"] + (["--hardware", hardware] if hardware else [])
    for name, flag in PASSED.items():
        value = getattr(ns, name)
        if value is not None:
            flags += [flag, str(value)]
    if getattr(ns, "tune", False):
        flags.append("--tune")
    if getattr(ns, "tune_max_utilization", None) is not None:
        flags += ["--tune-max-utilization", str(ns.tune_max_utilization)]
    return flags


def _check_target(flags: list[str]) -> None:
    """Refuse a bad target once (exit 2), not once per checkpoint."""
    from ..planner.placements import check_tp
    from ..planner.request import check_request
    from ..planner.systems import from_request
    from .options import PLAN
    from .request import request_from

    req = request_from(vars(PLAN.parser().parse_args(["target", *flags])))
    check_request(req)                  # the single plan's own checks, with its words
    from ..planner.tune import check as check_tune
    check_tune(req)
    topo = from_request(req)
    if topo is None:
        raise UsageError("kvfit fit needs the hardware to plan on: --hardware ID|auto "
                         "[--gpus N] or --system ID [--nodes N].",
                         hint="See `kvfit --list-hardware` and `kvfit --list-systems`.")
    check_tp(req, topo)                 # the same topology for every checkpoint


def candidates(ns: argparse.Namespace):
    """Catalog entries (filtered by --family) and local folders, in that order."""
    from ..hub.catalog import catalog_repo_ids
    from ..hub.catalog_info import family_keys, siblings
    from ..paths import user_path
    from ..planner.fit import Candidate

    out = []
    if not ns.no_catalog:
        ids = catalog_repo_ids()
        if ns.family:
            wanted = {f.casefold() for f in ns.family}
            keys = {r: family_keys(r) for r in ids}
            ids = [r for r in ids if keys[r] & wanted]
            if not ids:
                known = sorted(set().union(*keys.values()))
                from ..numbers import shown
                names = ", ".join(shown(f) for f in ns.family)
                raise UsageError(f"--family {names}: no catalog checkpoint has "
                                 "that organisation or model_type.",
                                 hint=f"Known: {', '.join(known)}.")
        out += [Candidate(r, "catalog", tuple(siblings(r))) for r in ids]
    for raw in ns.paths:
        path = user_path(raw, "checkpoint folder")
        if not path.exists():
            raise UsageError(f"no such checkpoint folder or file: {raw}")
        out.append(Candidate(raw, "local", tuple(siblings(path.resolve().name))))
    if not out:
        raise UsageError("--no-catalog needs at least one PATH to plan.")
    return out


def answer(ns: argparse.Namespace, progress=None):
    """The FitResult of parsed `kvfit fit` options; progress(i, n, model) is called before
    each checkpoint is planned (the CLI's counter)."""
    from ..planner.fit import run as run_fit
    from .options import PLAN
    from .request import request_from, verdict_code
    from .results import FitResult

    hardware, seen = _auto(ns)
    flags = plan_flags(ns, hardware)
    _check_target(flags)
    cands = candidates(ns)
    plan_parser = PLAN.parser()
    result = run_fit(cands, lambda model: request_from(vars(plan_parser.parse_args([model, *flags]))),
                     verdict_code, progress)
    return FitResult.of({"fit_version": 1, "plan_flags": flags, "detected_hardware": seen,
                         "verify": "kvfit MODEL " + " ".join(flags)} | result)


# kvfit.fit's keywords: the flags of `kvfit fit` (concurrent_users also names --users, as on a
# single plan); --json and --all shape the CLI's output only.
FIT = Form("kvfit.fit", "kvfit fit", parser, frozenset({"help", "json", "all"}),
           {"concurrent_users": "users"})
