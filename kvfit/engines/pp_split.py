"""Pipeline parallelism: the engine's split of the decoder layers over PP stages, and what
each stage holds (its layers' state, its share of the weights). vLLM's split is below;
SGLang 0.5.10+ gives the remainder to the last stages instead (sglang/srt/distributed/
utils.py:110-150: 32 layers over 3 -> [10, 11, 11]); the engine spec's rule pp_split says which.

vLLM splits the `num_hidden_layers` decoder layers with `get_pp_indices`
(vllm/distributed/utils.py:198-240): `n // pp` layers each, and the remainder `r` goes one
layer each to the stages before the last, counting back from the second-to-last
(`partitions[-i] += 1` for i in 2 .. r + 1); VLLM_PP_LAYER_PARTITION ("16,32") replaces the
split. The draft / MTP model lives whole on the last stage
(vllm/v1/worker/gpu_model_runner.py:594-598), as do the sampler's logits
(gpu_model_runner.py:6139, `_dummy_sampler_run` only on the last rank). Every stage keeps its
own KV pool; the engine plans every worker's blocks and keeps the smallest count
(vllm/v1/core/kv_cache_planning.py:1580-1595), so the fullest stage binds.

Worked example (Llama-3.1-8B, 32 layers, PP=3): 32 // 3 = 10, remainder 2 -> stages
[11, 11, 10] (partitions[-2] and partitions[-3] each + 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError

SPLIT_RULE = "engine rule vllm/distributed/utils.py:198-240 (get_pp_indices)"


def partition(n_layers: int, pp: int, override: str | None = None,
              split: str = "spread_before_last") -> list[int]:
    """Decoder layers per stage, as the engine splits them (or as the partition the user
    states, the engine's VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION, says).

    split (the engine spec's rule pp_split): spread_before_last (vLLM: the remainder one layer
    each to the stages before the last, counting back), spread_last (SGLang 0.5.10+: the last
    n % pp stages one more each, sglang/srt/distributed/utils.py:137-148), last_takes_rest
    (older SGLang: the last stage takes the whole remainder)."""
    if override is not None:
        try:
            parts = [int(x) for x in override.split(",")]
        except ValueError:
            raise UsageError(f"--pp-layer-partition {override!r} must be comma-separated whole "
                             "numbers, one per stage (the engine's layer-partition variable).") \
                from None
        if len(parts) != pp or sum(parts) != n_layers or min(parts) < 1:
            raise UsageError(f"--pp-layer-partition {override!r}: {pp} stages of at least one "
                             f"layer each must add up to the model's {n_layers} layers.")
        return parts
    if pp > n_layers:
        raise UsageError(f"--pp {pp} exceeds the model's {n_layers} decoder layers: every "
                         "pipeline stage needs at least one layer.")
    parts, rest = [n_layers // pp] * pp, n_layers % pp
    if split == "last_takes_rest":
        parts[-1] += rest
    elif split == "spread_last":
        for i in range(1, rest + 1):
            parts[-i] += 1
    else:
        for i in range(2, rest + 2):
            parts[-i] += 1
    return parts


def bounds(parts: list[int]) -> list[tuple[int, int]]:
    """[start, end) layer indices of each stage."""
    out, start = [], 0
    for n in parts:
        out.append((start, start + n))
        start += n
    return out


@dataclass(frozen=True, slots=True)
class Stage:
    """One pipeline stage: its layer range, state components and weight bytes (whole stage,
    before TP splits it), of which `replicated_bytes` every rank of the stage holds whole."""

    index: int
    start: int
    end: int
    components: tuple
    weights_bytes: int | None
    first: bool
    last: bool
    replicated_bytes: int = 0

    @property
    def layers(self) -> int:
        return self.end - self.start


def stage_components(comps, start: int, end: int, last: bool) -> list:
    """The components of the layers [start, end) (extra/draft layers on the last stage)."""
    out = []
    for c in comps:
        if c.layer_ids is None:
            if last:
                out.append(c)
            continue
        n = sum(1 for i in c.layer_ids if start <= i < end)
        if n:
            per_layer = c.bytes_per_sequence // c.layers
            out.append(replace(c, layers=n, bytes_per_sequence=n * per_layer,
                               layer_ids=tuple(i for i in c.layer_ids if start <= i < end)))
    return out


@dataclass(frozen=True, slots=True)
class Edge:
    """Embedding and LM-head bytes (each, before TP), whether the head is tied to the
    embedding, and where the numbers come from."""

    embed_bytes: int = 0
    head_bytes: int = 0
    tied: bool = False
    basis: str = ""


def stage_weights(weights, parts: list[int], edge: Edge) -> list[tuple[int | None, int]]:
    """Each stage's weight bytes, and the part of them its ranks hold whole. `weights`: the
    plan's Weights (kvfit.checkpoint.weights). The embedding goes on the first stage, the LM
    head on the last (a tied head is a second copy there); the replicated rows of a stage's
    own layers on that stage (Weights.replicated_on: the router and the latent projections
    are per-layer rows; layers past the decoder, MTP / draft, on the last stage; a row outside
    the layers on the first, with the embedding); the rest split in proportion to layers (an
    estimate: it assumes equal layers; a first dense layer of an MoE makes stage 0 lighter)."""
    if weights.bytes is None:
        return [(None, 0)] * len(parts)
    last = len(parts) - 1
    reps = [weights.replicated_on(lo, hi if i < last else 1 << 62, i == 0)
            for i, (lo, hi) in enumerate(bounds(parts))]
    embed, head = edge.embed_bytes, edge.head_bytes
    body = max(0, weights.bytes - embed - (0 if edge.tied else head) - sum(reps))
    n = sum(parts)
    out = [body * k // n + r for k, r in zip(parts, reps, strict=True)]
    out[0] += embed
    out[-1] += head
    return list(zip(out, reps, strict=True))


def edge_weights(root: dict, model_bytes) -> Edge:
    """Embedding and LM-head bytes from the (text) config: vocab x hidden x model dtype bytes."""
    def whole(name):
        v = root.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None

    vocab, hidden = whole("vocab_size"), whole("hidden_size")
    tied = root.get("tie_word_embeddings") is True
    each = int(vocab * hidden * float(model_bytes)) if vocab and hidden else 0
    basis = (f"estimate: embedding and LM head {vocab:,} x {hidden:,} x {model_bytes} B each on "
             "the first / last stage, the other weights split in proportion to layers"
             if each else "estimate: weights split in proportion to layers (vocab_size or "
             "hidden_size unknown)")
    return Edge(each, each, tied, basis)


def stages(comps, n_layers: int, pp: int, weights, edge: Edge,
           override: str | None = None, split: str = "spread_before_last") -> list[Stage]:
    """Every stage of a PP=`pp` split of the model (`weights`: the plan's Weights; split: the
    engine's pp_split rule)."""
    parts = partition(n_layers, pp, override, split)
    ws = stage_weights(weights, parts, edge)
    out = []
    for i, (lo, hi) in enumerate(bounds(parts)):
        last = i == pp - 1
        upto = 1 << 62 if last else hi      # MTP layers past the decoder: the last stage
        out.append(Stage(i, lo, hi, tuple(stage_components(comps, lo, upto, last)), ws[i][0],
                         i == 0, last, ws[i][1]))
    return out
