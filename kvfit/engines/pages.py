"""Per-rank cache pages: kvfit state components -> the engine's cache-layer specs and groups.

Each counted component becomes `layers` engine cache layers of one family:
  full, latent, index, draft -> "full"   (vLLM FullAttentionSpec / MLAAttentionSpec type)
  sliding -> "sliding", chunked -> "chunked", compressed -> "compressed" (one state per
  `ratio` tokens), constant -> "recurrent" (Mamba-style state; components on the same layer
  set are one layer's state, summed), or "ring" when its layout fixes an engine block (vLLM's
  CircularBufferSpec: the state is one block of `block_tokens` slots per request whatever the
  length, not prefix-cacheable, kv_cache_interface.py:967-1005), none -> nothing.
Bytes are per rank: a head-sharded component keeps max(1, heads // tp) of its heads.

vLLM grouping (kv_cache_planning.py:1113-1200, 346-556), worked example (gemma-3-27b, TP=1,
bf16, block 16): 52 sliding + 10 full layers, page 16 x 8,192 B each. Different families ->
hybrid: group size = min(52, 10) = 10 (52 >= 1.5 x 10), sliding split into ceil(52/10) = 6
groups (8 phantom padding layers) + 1 full group; a block spans one page of each of the 10
layer slots: 10 x 131,072 = 1,310,720 B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

FAMILY = {"full": "full", "latent": "full", "index": "full", "draft": "full",
          "sliding": "sliding", "chunked": "chunked", "compressed": "compressed",
          "constant": "recurrent"}


@dataclass(frozen=True, slots=True)
class LayerPage:
    """One family of cache layers on one rank.

    token_bytes: bytes per token per layer (attention families; Fraction, exact);
    state_bytes: bytes per sequence per layer (recurrent), before any padding;
    window: sliding window / chunk (tokens); ratio: tokens per compressed entry.
    """

    name: str
    family: str
    layers: int
    token_bytes: Fraction = Fraction(0)
    state_bytes: int = 0
    window: int | None = None
    ratio: int | None = None
    block_tokens: int | None = None    # the engine's own block for this layer (else the pool's)
    page_alignment: int | None = None  # bytes each block's page is rounded up to


@dataclass(frozen=True, slots=True)
class Group:
    """One vLLM KV-cache group: `slots` layer slots (real + phantom) of one spec.

    block_tokens: tokens one block of this group holds; page_bytes: bytes per slot per block.
    """

    family: str
    name: str
    layers: int
    slots: int
    block_tokens: int
    page_bytes: int
    window: int | None = None
    ratio: int | None = None


@dataclass(frozen=True, slots=True)
class Grouping:
    """How the pool is cut: groups, phantom padding layers, and bytes per block (one rank)."""

    kind: str
    groups: tuple[Group, ...]
    padding_layers: int
    bytes_per_block: int
    recurrent_padding: float | None = None


def layer_pages(components, tp: int) -> list[LayerPage]:
    """The engine cache layers of `components` on one rank at attention TP size `tp`."""
    out, recurrent = [], {}
    for c in components:
        fam = FAMILY.get(c.kind)
        if fam is None or c.layers == 0:
            continue
        share = Fraction(1) if c.heads is None else Fraction(c.heads_per_rank(tp), c.heads)
        per_layer = c.bytes_per_entry * share
        if fam == "recurrent" and c.block_tokens:   # a one-block ring of block_tokens slots
            out.append(LayerPage(c.name, "ring", c.layers, state_bytes=math.ceil(per_layer),
                                 block_tokens=c.block_tokens, page_alignment=c.page_alignment))
            continue
        if fam == "recurrent":
            key = c.layer_set
            prev = recurrent.get(key)
            state = math.ceil(per_layer) + (prev.state_bytes if prev else 0)
            name = f"{prev.name}+{c.name}" if prev else c.name
            recurrent[key] = LayerPage(name, fam, c.layers, state_bytes=state)
            continue
        window = c.window if fam in ("sliding", "chunked") else None
        out.append(LayerPage(c.name, fam, c.layers, per_layer, window=window, ratio=c.ratio,
                             block_tokens=c.block_tokens,
                             page_alignment=c.page_alignment))
    return out + list(recurrent.values())


def page_bytes(p: LayerPage, block_tokens: int) -> int:
    """Bytes of one block of layer `p` (recurrent, ring: the whole state)."""
    if p.family == "recurrent":
        return p.state_bytes
    if p.family == "ring":
        page = p.state_bytes
    else:
        entries = block_tokens // p.ratio if p.family == "compressed" else block_tokens
        page = math.ceil(entries * p.token_bytes)
    align = p.page_alignment or 1
    return -(-page // align) * align


def _spec_key(p: LayerPage, block: int) -> tuple:
    return (p.family, p.window, p.ratio, p.token_bytes, p.state_bytes, block)


def group_pages(pages: list[LayerPage], block_tokens: int, ratio_limit: float,
                recurrent_block: int | None = None) -> Grouping:
    """vLLM's KV-cache groups for these layers (kv_cache_planning.py:1113-1200, 346-556).

    block_tokens: the attention block size; recurrent_block: tokens per recurrent block
    (the attention block in align mode, max_model_len otherwise).
    """
    sized = [(p, page_bytes(p, block_tokens)) for p in pages]
    families = {p.family for p in pages}
    if len(families) == 1 and len({(p.window, p.ratio) for p in pages}) == 1:
        name = "+".join(p.name for p in pages)
        total = sum(p.layers * b for p, b in sized)
        kind = "uniform" if len({b for _, b in sized}) == 1 else "uniform-type"
        p0, n = pages[0], sum(p.layers for p in pages)
        block = (recurrent_block or block_tokens) if p0.family == "recurrent" else block_tokens
        group = Group(p0.family, name, n, n, block, max(b for _, b in sized), p0.window, p0.ratio)
        return Grouping(kind, (group,), 0, total)
    return _hybrid(sized, block_tokens, ratio_limit, recurrent_block)


def _unify(sized, block_tokens: int, recurrent_block):
    """Page-size unification: every layer's page becomes the largest page P."""
    big = max(b for _, b in sized)
    unified, padding = [], None
    for p, b in sized:
        if p.family == "recurrent":
            if b < big:
                padding = (big - b) / b
            unified.append((p, recurrent_block or block_tokens))
        elif big % b == 0:
            unified.append((p, block_tokens * (big // b)))
        else:
            unified.append((p, block_tokens))
    return big, unified, padding


def _hybrid(sized, block_tokens: int, ratio_limit: float, recurrent_block) -> Grouping:
    big, unified, rec_pad = _unify(sized, block_tokens, recurrent_block)
    buckets: dict[tuple, list] = {}
    for p, blk in unified:
        buckets.setdefault(_spec_key(p, blk), []).append((p, blk))
    counts = {k: sum(p.layers for p, _ in v) for k, v in buckets.items()}
    lo, hi = min(counts.values()), max(counts.values())
    size = hi if hi < ratio_limit * lo else lo
    groups, padding = [], 0
    for key, members in buckets.items():
        p, blk = members[0]
        n = counts[key]
        names = "+".join(sorted({m.name for m, _ in members}))
        for i in range(math.ceil(n / size)):
            real = min(size, n - i * size)
            padding += size - real
            groups.append(Group(p.family, names, real, size, blk, big, p.window, p.ratio))
    return Grouping("hybrid", tuple(groups), padding, size * big, rec_pad)

