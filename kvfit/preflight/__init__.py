"""Installed-engine preflight: ask the vLLM / SGLang installed in a given Python about this plan.

    check = engine_check(req)                      # None without --check-engine
    report["engine_check"] = run_check(check, req, meta, report)
    code, note = exit_code(report["engine_check"], code)

Each engine is probed by a plain script (probe_vllm.py, probe_sglang.py) run as
`ENGINE_PYTHON probe_x.py ARGS` in a subprocess with a timeout. The scripts never import
kvfit, set trust_remote_code=False, download nothing (registry and config modes) and allocate
no model; they print one JSON object, which result.py checks field by field.
"""

from __future__ import annotations

from .options import engine_check

__all__ = ["EngineCheck", "engine_check", "exit_code", "run_check"]


def __getattr__(name: str):
    """The probe runner loads only when a check runs (--check-engine), as does EngineCheck
    (kvfit.preflight.check). The check's text is kvfit.report.check_text."""
    if name == "EngineCheck":
        from .check import EngineCheck
        return EngineCheck
    if name in ("exit_code", "run_check"):
        from . import section
        return getattr(section, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
