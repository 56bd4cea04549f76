"""Atomic file writes: a temporary file in the target's folder, then a rename.

The temporary file is made as tempfile.mkstemp makes it (O_CREAT | O_EXCL, mode 0600, a random
name, another name if that one exists) but here: importing tempfile imports shutil, which
loads the bz2 and lzma extensions, about 2 ms and 0.7 MiB of a cold Hub plan whose only write
is a few small cache files (issue 13, "peak RSS of a Hub plan <= 1.3x the local plan's").
"""

from __future__ import annotations

import os
from pathlib import Path

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_TRIES = 100


def _mkstemp(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """(descriptor, path) of a new file only this process opened, in `folder`."""
    for _ in range(_TRIES):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, _FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused temporary file name in {folder} after {_TRIES} tries")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_bytes(target: Path, data: bytes, shared: bool = False) -> None:
    """Write `data` to `target` through a temporary file and a rename; on any OSError (a full
    disk, an unwritable folder, an interrupt) the error propagates, the temporary file is
    removed and `target` is untouched. shared: the file gets the permissions a plain `open`
    would give it (0666 less the umask) instead of the temporary file's private 0600."""
    tmp = None
    try:
        fd, tmp = _mkstemp(target.parent, ".tmp-", target.suffix)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if shared:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_text(target: Path, text: str) -> bool:
    """Write `text` to `target` atomically (creating its folder). Returns False, leaving no
    temporary file behind, on any OSError; the caches that use it are optional."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(target, text.encode("utf-8"))
        return True
    except OSError:
        return False
