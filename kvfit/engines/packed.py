"""vLLM's packed KV-cache groups: layers with their own block sizes and page sizes in one pool.

When a cache layer fixes its own block (an architecture layout's `block_tokens`: DeepSeek-V4
under vLLM 0.33, every layer: sliding window 64, compressed MLA 256, compressor rings 4 / 8;
GLM-5.3-Flash, its indexer tail ring of 4), that layer's backend takes only block-outermost
layouts (v1/attention/backends/mla/indexer.py:314-315, 349-352), the layers' pages differ,
and vLLM packs them side by side inside one block of a block-outermost pool
(v1/core/kv_cache_planning.py:914-1041, _get_packed_kv_cache_groups). Layers without a block
of their own take the pool's (`block`, GLM-5.3-Flash: the hybrid-aligned attention block,
its KDA states padded to one attention page):

1. buckets: layers of one spec type with one block size (UniformTypeKVCacheSpecs,
   kv_cache_interface.py:1347-1361); here: full / compressed MLA together, sliding by window,
   recurrent (MambaSpec) and ring (CircularBufferSpec) apart;
2. a bucket is balanced when every page size in it has the same layer count; the balanced
   multi-page buckets set a floor on the repeats per group, and the repeats are the
   `_approximate_gcd` of the balanced buckets' layer counts (least total padding, ties to
   the larger);
3. a balanced bucket splits into cdiv(count, repeats) groups, taking every n-th repeat;
   an unbalanced bucket stays one group; a recurrent or ring bucket, and a sliding-window
   bucket with no repeat pattern, is a state bucket, capped at the states the widest group's
   block already holds (kv_cache_planning.py:995-1026);
4. bytes per block = the widest group's pages, rounded up to the lcm of the layers' block
   stride alignments (kv_cache_planning.py:574-605; 1 when a kernel block equals the block,
   kv_cache_interface.py:224-234; engine rule packed_block_stride), num_blocks = available //
   bytes per block, and a request pins every group's blocks.

Worked example (DeepSeek-V4-Flash, fp8_ds_mla, one rank): buckets sliding-128 / block 64
(43 x 37,440 B), MLA / block 256 (21 x 8,640 + 21 x 37,440 + 20 x 1,728 B: unbalanced),
sliding-8 / block 4 (21 x 8,640 + 21 x 32,832 B) and sliding-128 / block 8 (20 x 32,832 B).
Floor 21; the gcd over 43, 21, 20 from 21 pads least at 22 (1 + 1 + 2 layers) -> the window
bucket splits 22 + 21; widest group 21 x 8,640 + 21 x 37,440 + 20 x 1,728 = 1,002,240 B.

Worked example (GLM-5.3-Flash, bf16, TP 1, block 4,352): buckets KDA (34 x 4,456,448 B padded),
MLA (11 x 4,456,448 latent + 11 x 143,616 pooled index: balanced, floor 11) and ring / block 4
(11 x 2,048 B). The gcd over 34, 11, 11 from 11 pads least at 12 (2 + 1 + 1): MLA one group of
50,600,704 B; KDA, a state bucket, at most 50,600,704 // 4,456,448 = 11 per group -> 4 groups
(9, 9, 8, 8); the ring one group. Aligned to lcm(1,024, 8,448) = 33,792: 50,620,416 B.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..errors import ConfigError
from .pages import Group, Grouping, LayerPage, page_bytes

RULE = ("engine rule vllm/v1/core/kv_cache_planning.py:914-1041 (packed groups of layers with "
        "their own block and page sizes; bytes per block = the widest group, :574-605)")


_STATE = ("recurrent", "ring")


def is_packed(pages: list[LayerPage]) -> bool:
    """True when a cache layer fixes its own engine block (a packed, block-outermost pool)."""
    return any(p.block_tokens for p in pages)


def own_blocks(pages: list[LayerPage]) -> bool:
    """True when every cache layer fixes its own block (no pool-wide attention block)."""
    return bool(pages) and all(p.block_tokens for p in pages)


def user_block(rules, pages, block: int) -> tuple[list, object]:
    """A user --block-size on a model whose every layer has its own engine block: it sets the
    block of the layer families that take cache_config.block_size (rule
    own_block_user_families; DeepSeek-V4: the compressed MLA and indexer layers), the others
    keep theirs. (pages, refusal): refused when it is not a multiple of such a layer's own
    (kernel) block."""
    rule = rules.values.get("own_block_user_families")
    if not rule:
        return pages, None
    out = []
    for p in pages:
        if p.family in rule["value"]:
            if block % p.block_tokens:
                from ..model.engine import Refusal
                return pages, Refusal(reason=f"--block-size {block} is not a multiple of the "
                                      f"{p.block_tokens}-token kernel block of the {p.name} "
                                      "layers: no attention kernel block fits it.",
                                      rule=rules.basis("own_block_user_families"))
            p = replace(p, block_tokens=block)
        out.append(p)
    return out, None


def _bucket_key(p: LayerPage) -> tuple:
    if p.family == "sliding":
        kind = ("sliding", p.window)
    else:
        kind = (p.family, None) if p.family in _STATE else ("full", None)
    return (*kind, p.block_tokens)


def stride_alignment(rule, pages: list[LayerPage], block: int | None,
                     capability: str | None) -> tuple[int, str]:
    """(lcm of the packed layers' block stride alignments, why) from rule packed_block_stride;
    block: the pool's block for layers without their own."""
    align, why = 1, []
    major = int(str(capability).split(".")[0]) if capability else None
    for row in rule["value"] if rule else ():
        if "cc_major" in row and major not in row["cc_major"]:
            continue
        for p in pages:
            if p.name != row["component"]:
                continue
            if "rows" in row:
                a = row["rows"] * math.ceil(p.token_bytes)
            else:
                own = p.block_tokens or block
                kernel = math.gcd(row["kernel_entries"] * (p.ratio or 1), own)
                a = 1 if kernel == own else page_bytes(p, kernel)
            if a < 1:       # a kernel block of fewer tokens than one compressed entry spans
                raise ConfigError(f"the {p.name} cache keeps one entry per {p.ratio or 1:,} "
                                  f"tokens, so a kernel block of {row['backend']} holds none: "
                                  "this config's dimensions give vLLM's packed pool no block "
                                  "size.")
            align = math.lcm(align, a)
            why.append(f"{p.name} {a:,} B ({row['backend']})")
    return align, "; ".join(why)


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


def packed_groups(pages: list[LayerPage], block: int | None = None,
                  recurrent_page: int | None = None, alignment: int = 1) -> Grouping:
    """The groups vLLM packs these layers into, one rank.

    block: the pool's block for layers without their own; recurrent_page: the recurrent
    state page padded to one attention page; alignment: the block stride alignment (bytes)."""
    pages = [p if p.block_tokens else replace(p, block_tokens=block) for p in pages]
    buckets: dict[tuple, list[LayerPage]] = {}
    for p in pages:
        buckets.setdefault(_bucket_key(p), []).append(p)
    info = []
    for members in buckets.values():
        sizes: dict[int, int] = {}
        for p in members:
            size = recurrent_page if p.family == "recurrent" and recurrent_page else \
                page_bytes(p, p.block_tokens)
            sizes[size] = sizes.get(size, 0) + p.layers
        info.append((members, sizes, len(set(sizes.values())) == 1))
    floor = max((max(s.values()) for _, s, bal in info if bal and len(s) > 1), default=0)
    repeats = approximate_gcd([max(s.values()) for _, s, bal in info if bal], floor) \
        if floor else None

    def n_groups(sizes, balanced) -> int:
        return math.ceil(max(sizes.values()) / repeats) if balanced and repeats else 1

    def state_bucket(members) -> bool:
        return members[0].family in _STATE or (repeats is None and members[0].family == "sliding")

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
    widest = max(g.page_bytes for g in groups)
    return Grouping("packed", tuple(groups), 0, -(-widest // alignment) * alignment)
