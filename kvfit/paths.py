"""Where the bundled specs and schemas live: inside the wheel, or at the repo top level."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The directory holding `specs/` and `schemas/` (wheel: kvfit/_bundled; checkout: repo)."""
    bundled = _PKG / "_bundled"
    if (bundled / "specs").is_dir():
        return bundled
    return _PKG.parent


def specs_dir(kind: str) -> Path:
    """specs/<kind> (architectures, hardware, systems, engines)."""
    return data_root() / "specs" / kind


def schema_path(name: str) -> Path:
    """schemas/<name>."""
    return data_root() / "schemas" / name


def display_path(path: Path) -> str:
    """A path for messages and reports: relative to the data root or cwd when possible."""
    for base in (data_root(), Path.cwd()):
        try:
            return str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)
