"""Atomic small-file writes for kvfit's caches."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text(target: Path, text: str) -> bool:
    """Write `text` to `target` through a temporary file and a rename. Returns False (and
    leaves no temporary file behind) on any OSError: a full disk, an unwritable folder, an
    interrupt; the caches that use it are optional."""
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
