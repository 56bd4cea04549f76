"""Where the bundled specs and schemas live: inside the wheel, or at the repo top level."""

from __future__ import annotations

import os
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


@cache
def _resolved_root() -> tuple[Path, str]:
    """The data root resolved, and as the prefix of the files under it."""
    root = data_root().resolve()
    return root, os.path.join(str(root), "")


@cache
def _real_directory(directory: str) -> str:
    return os.path.realpath(directory)


def _realpath(path) -> str:
    """os.path.realpath(path), with each absolute directory resolved once: a file that is not
    a symbolic link is its real directory's entry (one lstat, not one per component)."""
    text = os.fspath(path)
    head, name = os.path.split(text)
    if not os.path.isabs(head) or name in ("", ".", "..") or os.path.islink(text):
        return os.path.realpath(text)
    return os.path.join(_real_directory(head), name)


def display_path(path: Path) -> str:
    """A path for messages and reports: relative to the data root or cwd when possible. A plan
    names ~80 spec files: the root and their folders are resolved once, and a file under the
    root is told by its real path's prefix (what relative_to would answer) first."""
    real = _realpath(path)
    root, prefix = _resolved_root()
    if real.startswith(prefix):
        return real[len(prefix):]
    resolved = Path(real)
    for base in (root, Path.cwd().resolve()):
        try:
            return str(resolved.relative_to(base))
        except ValueError:
            continue
    return str(path)


NAME_MAX, PATH_MAX = 255, 4095      # Linux's limits, in bytes


def user_path(text: str, what: str) -> Path:
    """A path given on the command line, refused (exit 2) when no file system could hold it:
    a component over NAME_MAX bytes, the whole over PATH_MAX, or a NUL byte. (Asking the OS
    about such a path raises ENAMETOOLONG where pathlib expects a plain no.)"""
    from .errors import UsageError

    raw = os.fsencode(text)
    longest = max((len(p) for p in raw.split(b"/")), default=0)
    if b"\0" in raw or longest > NAME_MAX or len(raw) > PATH_MAX:
        why = ("holds a NUL byte" if b"\0" in raw else
               f"has a name of {longest:,} bytes (at most {NAME_MAX})" if longest > NAME_MAX
               else f"is {len(raw):,} bytes long (at most {PATH_MAX:,})")
        raise UsageError(f"{what} {text[:80]!r}{'...' if len(text) > 80 else ''} {why}, so no "
                         "file can have it.")
    return Path(text)


def expand_user(given) -> Path:
    """A path the user gave, with `~` and `~user` expanded as a shell would. os.path.expanduser
    leaves `~user` of no such user as it is, where Path.expanduser() raises RuntimeError."""
    return Path(os.path.expanduser(given))
