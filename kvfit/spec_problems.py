"""Spec problems: one located problem (Problem), and the error that lists them (SpecError).
Both are importable from kvfit.errors."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import KvfitError
from .textsafe import safe


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
