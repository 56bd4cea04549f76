"""Error types. Each renders as one paragraph; the CLI maps them to exit codes.

Exit codes (see README): 0 answered; 1 answered but the target is not met;
2 bad input, unsupported architecture or hub error; 3 engine preflight failed;
4 calibration ran but did not qualify; 70 an unexpected internal error (a kvfit bug).
Every rendered message goes through kvfit.textsafe.safe (secrets redacted, control
characters escaped).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .textsafe import safe


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


class BadInput(KvfitError):
    """The question is wrong: bad flags, keywords, values, presets or checkpoint configs."""

    kind = "bad input"


class UsageError(BadInput):
    """Bad flags, bad TOML preset, bad values on the command line (or API keywords)."""

    kind = "usage error"


class ConfigError(BadInput):
    """A checkpoint's config or metadata is malformed or inconsistent."""

    kind = "config error"


class Unsupported(KvfitError):
    """No checked spec covers this checkpoint (fail closed)."""

    kind = "unsupported architecture"


class UnsupportedArchitecture(Unsupported):
    """No checked spec covers this checkpoint (the name the planner raises)."""


class HubError(KvfitError):
    """The Hugging Face Hub (or a local mirror of it) could not answer."""

    kind = "hub error"


@dataclass(frozen=True, slots=True)
class Problem:
    """One spec problem at a source position (1-based line and column)."""

    code: str
    file: str
    line: int
    col: int
    message: str
    help: str | None = None
    at: str | None = None
    source_line: str | None = None
    width: int = 1

    def render(self) -> str:
        out = [f"error[{self.code}]: {self.message}", f"  --> {self.file}:{self.line}:{self.col}"]
        if self.source_line is not None:
            num = str(self.line)
            pad = " " * len(num)
            out += [f"{pad} |", f"{num} | {self.source_line}",
                    f"{pad} | {' ' * (self.col - 1)}{'^' * max(1, self.width)}"]
        if self.at:
            out.append(f"   = at: {self.at}")
        if self.help:
            out.append(f"   = help: {self.help}")
        return "\n".join(out)

    def to_json(self) -> dict:
        return {"code": self.code, "file": safe(self.file), "line": self.line, "col": self.col,
                "message": safe(self.message), "help": safe(self.help) if self.help else self.help,
                "at": safe(self.at) if self.at else self.at}


@dataclass
class SpecError(KvfitError):
    """One or more problems in spec files, all collected before raising."""

    problems: list[Problem] = field(default_factory=list)
    kind = "spec error"

    def __post_init__(self):
        n = len(self.problems)
        first = self.problems[0] if self.problems else None
        where = f" (first at {first.file}:{first.line}:{first.col})" if first else ""
        KvfitError.__init__(self, f"{n} {'problem' if n == 1 else 'problems'} in spec "
                            f"files{where}.")

    def render(self) -> str:
        body = "\n\n".join(p.render() for p in self.problems)
        n = len(self.problems)
        return safe(f"{body}\n\nkvfit: {n} spec {'problem' if n == 1 else 'problems'}; nothing "
                    "was planned.")
