"""The retention vocabulary: how many entries one layer of each kind keeps for a context.

This is the code half of the spec/code split. Specs choose a kind per component; the
meaning of the kind lives here, one small policy per name.

Worked example (sliding, window 1024, context 131072): each sliding layer keeps the
last 1024 tokens, so it retains min(131072, 1024) = 1024 entries, while a full layer keeps
all 131072.
"""

from __future__ import annotations

import math


def _all(ctx: int, param: int | None) -> int:
    """full / latent / index: one entry per token of context."""
    return ctx


def _window(ctx: int, param: int | None) -> int:
    """sliding / chunked: at most `param` (the window or chunk) tokens are kept."""
    return min(ctx, param)


def _compressed(ctx: int, param: int | None) -> int:
    """compressed: one entry per `param` tokens, a partial group still takes an entry."""
    return math.ceil(ctx / param)


def _none(ctx: int, param: int | None) -> int:
    """none: the layer keeps no per-sequence cache (MLP-only or no-op attention layers)."""
    return 0


def _constant(ctx: int, param: int | None) -> int:
    """constant: one fixed-size state per sequence, independent of context."""
    return 1


RETENTION = {
    "full": _all,
    "latent": _all,
    "index": _all,
    "sliding": _window,
    "chunked": _window,
    "compressed": _compressed,
    "constant": _constant,
    "draft": _window,
    "none": _none,
}

DESCRIPTIONS = {
    "full": "keeps every token",
    "latent": "keeps every token as one compressed latent row",
    "index": "keeps every token's indexer key",
    "sliding": "keeps the last `window` tokens",
    "chunked": "keeps the tokens of the current `window`-sized chunk",
    "compressed": "keeps one entry per `ratio` tokens",
    "constant": "keeps a fixed-size state per sequence",
    "draft": "draft-model layers keep the last `window` tokens",
    "none": "keeps nothing",
}


def entries(kind: str, ctx: int, param: int | None = None) -> int:
    """Entries one layer of `kind` retains at context `ctx` (tokens)."""
    return RETENTION[kind](ctx, param)
