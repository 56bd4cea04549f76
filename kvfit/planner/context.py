"""Context lengths: `32768` is exact; `32k`/`1m` suffixes are powers of 1024."""

from __future__ import annotations

import re

from ..errors import UsageError

MAX_CONTEXT = 1 << 34


def parse_context(text) -> int:
    """Tokens for a context given as an integer or with a k/m suffix (90k = 92,160)."""
    if isinstance(text, bool):
        raise UsageError(f"context {text!r} is not a token count.")
    if isinstance(text, int):
        value = text
    else:
        from ..numbers import MAX_CHARS, shown

        given = str(text)
        m = len(given) <= MAX_CHARS and re.fullmatch(r"\s*([0-9]+)\s*([kKmM]?)\s*",
                                                     given.replace("_", ""), re.ASCII)
        if not m:
            raise UsageError(f"context {shown(text)} is not a token count.",
                             hint="Write an integer (90000) or use k/m suffixes (90k = 92,160; "
                                  "1m = 1,048,576).")
        value = int(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2}[m.group(2).lower()]
    if not 0 < value <= MAX_CONTEXT:
        from ..numbers import shown
        raise UsageError(f"context {shown(text)} must be between 1 and {MAX_CONTEXT:,} tokens.")
    return value
