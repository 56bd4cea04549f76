"""Error types. Each renders as one paragraph; the CLI maps them to exit codes.

Exit codes (see README): 0 answered; 1 answered but the target is not met;
2 bad input, unsupported architecture or hub error; 3 engine preflight failed;
4 calibration ran but did not qualify; 70 an unexpected internal error (a kvfit bug).
Every rendered message goes through kvfit.textsafe.safe (secrets redacted, control
characters escaped).
"""

from __future__ import annotations

from .textsafe import safe


def __getattr__(name: str):
    """Problem and SpecError (kvfit.spec_problems) load when a spec problem is built or
    named: a plan that reads only validated specs never makes one."""
    if name in ("Problem", "SpecError"):
        from . import spec_problems
        return getattr(spec_problems, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class KvfitError(Exception):
    """Base class: a user-facing problem with a one-paragraph message."""

    exit_code = 2
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None, fields: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.fields = tuple(fields)

    def render(self) -> str:
        text = f"kvfit: {self.kind}: {self.message}"
        if self.hint:
            text += f" {self.hint}"
        return safe(text)

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": safe(self.message),
                "hint": safe(self.hint) if self.hint is not None else None,
                "fields": [safe(f) for f in self.fields]}


class UsageError(KvfitError):
    """Bad flags, bad TOML preset, bad values on the command line."""

    kind = "usage error"


class ConfigError(KvfitError):
    """A checkpoint's config or metadata is malformed or inconsistent."""

    kind = "config error"


class UnsupportedArchitecture(KvfitError):
    """No checked spec covers this checkpoint (fail closed)."""

    kind = "unsupported architecture"


class HubError(KvfitError):
    """The Hugging Face Hub (or a local mirror of it) could not answer."""

    kind = "hub error"
