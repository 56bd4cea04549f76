"""Atomic file writes: a temporary file in the target's folder, then a rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_bytes(target: Path, data: bytes, shared: bool = False, fsync: bool = False) -> None:
    """Write `data` to `target` through a temporary file and a rename; on any OSError (a full
    disk, an unwritable folder, an interrupt) the error propagates, the temporary file is
    removed and `target` is untouched. shared: the file gets the permissions a plain `open`
    would give it (0666 less the umask) instead of the temporary file's private 0600.
    fsync: the data reaches the disk before the rename, so a crash right after leaves the old
    file or the whole new one (for records a user keeps; caches do without)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=target.suffix, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        if shared:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(target: Path, text: str) -> bool:
    """Write `text` to `target` atomically (creating its folder). Returns False, leaving no
    temporary file behind, on any OSError; the caches that use it are optional."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(target, text.encode("utf-8"))
        return True
    except OSError:
        return False
