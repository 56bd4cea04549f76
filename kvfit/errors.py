"""Error types. Each renders as one paragraph; the CLI maps them to exit codes.

Exit codes (see README): 0 answered; 1 answered but the target is not met;
2 bad input, unsupported architecture or hub error; 3 engine preflight failed;
4 calibration ran but did not qualify.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
        return text

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, "hint": self.hint,
                "fields": list(self.fields)}


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


@dataclass(frozen=True)
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
        return {"code": self.code, "file": self.file, "line": self.line, "col": self.col,
                "message": self.message, "help": self.help, "at": self.at}


@dataclass
class SpecError(KvfitError):
    """One or more problems in spec files, all collected before raising."""

    problems: list[Problem] = field(default_factory=list)
    kind = "spec error"

    def __post_init__(self):
        n = len(self.problems)
        first = self.problems[0] if self.problems else None
        where = f" (first at {first.file}:{first.line}:{first.col})" if first else ""
        KvfitError.__init__(self, f"{n} problem(s) in spec files{where}.")

    def render(self) -> str:
        body = "\n\n".join(p.render() for p in self.problems)
        return f"{body}\n\nkvfit: {len(self.problems)} spec problem(s); nothing was planned."
