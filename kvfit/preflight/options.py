"""The --check-engine options, validated (from flags or a preset's [engine] table)."""

from __future__ import annotations

import os
import sys

from ..errors import UsageError
from ..paths import expand_user

PROBES = ("registry", "config", "load")
DEFAULT_TIMEOUT = 300.0
MAX_ENGINE_TIMEOUT = 7 * 86_400
_DEPENDENT = {"engine_python": "--engine-python", "engine_probe": "--engine-probe",
              "engine_timeout": "--engine-timeout", "engine_tp": "--engine-tp",
              "require_engine_pass": "--require-engine-pass"}


def __getattr__(name: str):
    """EngineCheck (kvfit.preflight.check) loads when a check is asked for: a plan without
    --check-engine only confirms that none of its options was given."""
    if name == "EngineCheck":
        from .check import EngineCheck
        return EngineCheck
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def probed() -> tuple[str, ...]:
    """The engines with an installed-engine probe (Engine.probe_script)."""
    from ..engines import engines
    return tuple(e.id for e in engines() if e.probe_script)


def _python(given: str | None) -> tuple[str, str]:
    """(interpreter path to run, as the user gave it); a broken path is a usage error."""
    if given is None:
        return sys.executable, "the current interpreter"
    if os.sep not in given and "/" not in given:
        import shutil

        found = shutil.which(given)
        if not found:
            raise UsageError(f"--engine-python {given}: no such command on PATH.")
        return found, given
    path = expand_user(given)
    if not path.is_file():
        raise UsageError(f"--engine-python {given}: no such file.",
                         hint="Pass the serving environment's Python, e.g. "
                              "/path/to/vllm-env/bin/python.")
    if not os.access(path, os.X_OK):
        raise UsageError(f"--engine-python {given}: the file is not executable.")
    return str(path.absolute()), given


def _tp(req) -> tuple[int, str]:
    """(TP of the check, where it came from: the flag, or the preset key that set it)."""
    origins = getattr(req, "origins", {})
    if req.engine_tp is not None:
        if req.engine_tp < 1:
            raise UsageError(f"--engine-tp {req.engine_tp} must be at least 1.")
        return req.engine_tp, origins.get("engine_tp", "--engine-tp")
    if isinstance(req.tp, int):
        return req.tp, origins.get("tp", "--tp")
    if req.gpus:
        return req.gpus, origins.get("gpus", "--gpus")
    return 1, "default"


def engine_check(req):
    """The validated check (an EngineCheck) for a PlanRequest, or None when --check-engine
    was not given."""
    if req.check_engine is None:
        given = [flag for name, flag in _DEPENDENT.items() if getattr(req, name)
                 not in (None, False)]
        if given:
            raise UsageError(f"{', '.join(given)} only apply with --check-engine.",
                             hint=f"Add --check-engine {'|'.join(probed())}|all.")
        return None
    if req.check_engine not in (*probed(), "all"):
        raise UsageError(f"--check-engine {req.check_engine!r}: choose "
                         f"{', '.join(probed())} or all.")
    probe = req.engine_probe or "config"
    if probe not in PROBES:
        raise UsageError(f"--engine-probe {probe!r}: choose registry, config or load.")
    timeout = DEFAULT_TIMEOUT if req.engine_timeout is None else float(req.engine_timeout)
    if not 0 < timeout <= MAX_ENGINE_TIMEOUT:      # inf / 6.6e13 s overflowed the process wait
        raise UsageError(f"--engine-timeout {req.engine_timeout} must be a positive number "
                         f"of seconds, at most {MAX_ENGINE_TIMEOUT:,} (a week).")
    python, shown = _python(req.engine_python)
    tp, tp_source = _tp(req)
    engines = probed() if req.check_engine == "all" else (req.check_engine,)
    from .check import EngineCheck

    return EngineCheck(engines, python, shown, probe, timeout, tp, tp_source,
                       bool(req.require_engine_pass))
