"""vLLM's packed KV-cache groups: layers with their own block sizes and page sizes in one pool.

When every cache layer fixes its own block (an architecture layout's `block_tokens`, e.g.
DeepSeek-V4 under vLLM 0.33: sliding window 64, compressed MLA 256, compressor rings 4 / 8),
the layers' pages differ and vLLM packs them side by side inside one block of a
block-outermost pool (v1/core/kv_cache_planning.py:914-1041, _get_packed_kv_cache_groups):

1. buckets: layers of one spec type with one block size (UniformTypeKVCacheSpecs,
   kv_cache_interface.py:1347-1361); here: full / compressed MLA together, sliding by window;
2. a bucket is balanced when every page size in it has the same layer count; the balanced
   multi-page buckets set a floor on the repeats per group, and the repeats are the
   `_approximate_gcd` of the balanced buckets' layer counts (least total padding, ties to
   the larger);
3. a balanced bucket splits into cdiv(count, repeats) groups, taking every n-th repeat;
   an unbalanced bucket stays one group; a sliding-window bucket with no repeat pattern is
   a state bucket, capped at the states the widest group's block already holds;
4. bytes per block = the widest group's pages (kv_cache_planning.py:574-605; the block
   stride alignment is 1 when the kernel block equals the block, kv_cache_interface.py:224-234),
   num_blocks = available // bytes per block, and a request pins every group's blocks.

Worked example (DeepSeek-V4-Flash, fp8_ds_mla, one rank): buckets sliding-128 / block 64
(43 x 37,440 B), MLA / block 256 (21 x 8,640 + 21 x 37,440 + 20 x 1,728 B: unbalanced),
sliding-8 / block 4 (21 x 8,640 + 21 x 32,832 B) and sliding-128 / block 8 (20 x 32,832 B).
Floor 21; the gcd over 43, 21, 20 from 21 pads least at 22 (1 + 1 + 2 layers) -> the window
bucket splits 22 + 21; widest group 21 x 8,640 + 21 x 37,440 + 20 x 1,728 = 1,002,240 B.
"""

from __future__ import annotations

import math

from .pages import Group, Grouping, LayerPage, page_bytes

RULE = ("engine rule vllm/v1/core/kv_cache_planning.py:914-1041 (packed groups of layers with "
        "their own block and page sizes; bytes per block = the widest group, :574-605)")


def is_packed(pages: list[LayerPage]) -> bool:
    """True when every cache layer fixes its own engine block (a packed layout)."""
    return bool(pages) and all(p.block_tokens for p in pages)


def _bucket_key(p: LayerPage) -> tuple:
    kind = ("sliding", p.window) if p.family == "sliding" else ("full", None)
    return (*kind, p.block_tokens)


def approximate_gcd(values: list[int], lower_bound: int) -> int:
    """The chunk size in [lower_bound, max(values)] with least upward padding (ties: larger)."""
    best, best_pad = lower_bound, None
    for d in range(lower_bound, max(values) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad <= best_pad:
            best, best_pad = d, pad
    return best


def _widest(sizes: dict[int, int], n: int) -> int:
    return sum(math.ceil(count / n) * page for page, count in sizes.items())


def packed_groups(pages: list[LayerPage]) -> Grouping:
    """The groups vLLM packs these layers into, one rank."""
    buckets: dict[tuple, list[LayerPage]] = {}
    for p in pages:
        buckets.setdefault(_bucket_key(p), []).append(p)
    info = []
    for members in buckets.values():
        sizes: dict[int, int] = {}
        for p in members:
            size = page_bytes(p, p.block_tokens)
            sizes[size] = sizes.get(size, 0) + p.layers
        info.append((members, sizes, len(set(sizes.values())) == 1))
    floor = max((max(s.values()) for _, s, bal in info if bal and len(s) > 1), default=0)
    repeats = approximate_gcd([max(s.values()) for _, s, bal in info if bal], floor) \
        if floor else None

    def n_groups(sizes, balanced) -> int:
        return math.ceil(max(sizes.values()) / repeats) if balanced and repeats else 1

    def state_bucket(members) -> bool:
        return repeats is None and members[0].family == "sliding"

    anchor = max(_widest(s, sum(s.values()) if state_bucket(m) else n_groups(s, bal))
                 for m, s, bal in info)
    groups = []
    for members, sizes, balanced in info:
        n = n_groups(sizes, balanced)
        if state_bucket(members):
            first = next(iter(sizes))
            n = max(n, math.ceil(sum(sizes.values()) / max(anchor // first, 1)))
        names = "+".join(p.name for p in members)
        p0 = members[0]
        per_repeat = sum(sizes) if balanced else None
        reps = min(sizes.values())
        for i in range(n):
            if n == 1:
                layers, page = sum(sizes.values()), sum(c * s for s, c in sizes.items())
            else:
                mine = len(range(i, reps, n))
                layers, page = mine * len(sizes), mine * per_repeat
            groups.append(Group(p0.family, names, layers, layers, p0.block_tokens, page,
                                p0.window, p0.ratio))
    return Grouping("packed", tuple(groups), 0, max(g.page_bytes for g in groups))
