"""What an installed-engine check asks (validated by kvfit.preflight.options.engine_check)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EngineCheck:
    """What to check: engines, in which interpreter, how deeply, at which TP, for how long."""

    engines: tuple[str, ...]
    python: str
    python_given: str
    probe: str
    timeout: float
    tp: int
    tp_source: str
    require_pass: bool
