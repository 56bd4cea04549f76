"""Context lengths: `32768` is exact; `32k`/`1m` suffixes are powers of 1024."""

from __future__ import annotations

from ..errors import UsageError

MAX_CONTEXT = 1 << 34


def parse_context(text) -> int:
    """Tokens for a context given as an integer or with a k/m suffix (90k = 92,160)."""
    if isinstance(text, bool):
        raise UsageError(f"context {text!r} is not a token count.")
    if isinstance(text, int):
        value = text
    else:
        from ..numbers import parse_tokens, shown

        value = parse_tokens(str(text))
        if value is None:
            raise UsageError(f"context {shown(text)} is not a token count.",
                             hint="Write an integer in ASCII digits (90000) or use k/m suffixes "
                                  "(90k = 92,160; 1m = 1,048,576).")
    if not 0 < value <= MAX_CONTEXT:
        from ..numbers import shown
        raise UsageError(f"context {shown(text)} must be between 1 and {MAX_CONTEXT:,} tokens.")
    return value
