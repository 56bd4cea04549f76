"""vLLM V1: available KV memory, block size, groups, blocks, concurrency, and refusals.

Worked example (Llama-3.1-8B, 1 x H100, v0.19.0 log, --gpu-memory-utilization 0.95):
requested = 0.95 x 79.19 GiB = 75.23 GiB; minus weights 14.99, activation peak 1.89 and
non-torch 0.25 GiB -> 58.11 GiB available. A block is 32 layers x 16 tokens x 8 KV heads x
256 values x 2 B = 2,097,152 B -> 29,751 blocks = 476,016 tokens; at 16,384 tokens per
request a request needs 1,024 blocks -> 29,751 / 1,024 = 29.05x concurrency.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..model.engine import BlockGroup, EngineMemory, EnginePrediction, HybridPages, Quantity, Refusal
from . import budget
from .common import GIB, Inputs, flag, gib, num, prediction, too_long
from .packed import RULE as PACKED_RULE
from .packed import is_packed, own_blocks, packed_groups, stride_alignment, user_block
from .pages import group_pages, layer_pages
from .vllm_blocks import attention_block, state_blocks

_ALIGN = "engine rule vllm/platforms/interface.py:939-1137 (attention block raised so one " \
         "attention page holds one recurrent state; the recurrent page is padded to it)"


_COMPRESSED = ("compressed caches (DeepSeek-V4-style compressor rings and states): vLLM plans "
               "these with dedicated specs (kv_cache_interface.py:967-1090) that kvfit maps onto "
               "its generic groups; treat blocks and concurrency as indicative")


_PACKED_BLOCK = ("engine rule vllm/v1/engine/core.py:292-352 (the scheduler block: the smallest "
                 "block of the prefix-cacheable groups; each layer's block is its layout's "
                 "block_tokens)")

_RING = "1 ring block whatever the length (CircularBufferSpec, kv_cache_interface.py:967-989)"


def _packed(rules, flags: dict, inp: Inputs, pages, prefix: bool):
    """(grouping, block size, hybrid alignment, recurrent align table, stride alignment note) of
    a packed pool: every
    layer's own block (DeepSeek-V4), or the hybrid-aligned pool block for the layers without one
    and their recurrent pages padded to it (GLM-5.3-Flash)."""
    if own_blocks(pages):
        bs, hybrid, padded = None, None, None
    else:
        bs, hybrid = block_size(rules, flags, inp, pages, prefix)
        padded = hybrid.recurrent_page_padded_bytes.value if hybrid else None
    block = bs.value if bs else None
    align, why = stride_alignment(rules.values.get("packed_block_stride"), pages, block,
                                  inp.capability)
    grouping = packed_groups(pages, block, padded, align)
    if bs is None:
        bs = num(min(g.block_tokens for g in grouping.groups if g.family != "ring"), _PACKED_BLOCK)
    rec = state_blocks(rules, inp, grouping.groups) if prefix and hybrid else None
    return grouping, bs, hybrid, rec, why


def _setting(flags: dict, name: str, value, default_basis: str) -> Quantity:
    """A setting with its basis: the user's flag or the engine default."""
    return num(value, "user" if flags.get(name) is not None else default_basis)


def _util(rules, flags) -> Quantity:
    value = flags.get("gpu_memory_utilization")
    if value is not None:
        return num(value, "user")
    return num(rules["gpu_memory_utilization"], rules.basis("gpu_memory_utilization"))


def memory(rules, flags: dict, inp: Inputs, seqs: int, mnbt: int) -> EngineMemory:
    """The KV budget one worker computes (gpu_worker.py:753-757), every term with its basis."""
    total, util = budget.torch_total(rules, inp), _util(rules, flags)
    requested = num(None if total.value is None else math.ceil(total.value * util.value),
                    "engine rule vllm/v1/worker/utils.py:716-772 (ceil(total x "
                    "gpu_memory_utilization))")
    charged = rules["cudagraph_estimate_charged"]
    weights = budget.loaded_weights(rules, inp)
    peak = budget.activation_peak(rules, inp, seqs, mnbt, flags)
    non_torch = budget.non_torch(rules, inp)
    graphs = replace(budget.cudagraph(rules, inp, seqs, bool(flags.get("enforce_eager")),
                                      int(flags.get("num_speculative_tokens") or 0), mnbt),
                     charged=charged)
    terms = (weights, peak, non_torch, graphs)
    user = flags.get("kv_cache_memory_bytes")
    used = [t.value for t in terms if t is not graphs or charged]
    missing = [t.basis for t in (requested, *terms) if t.value is None]
    if user is not None:
        avail = num(int(user), "user: --kv-cache-memory-bytes (profiling still runs)")
    elif missing:
        avail = num(None, "not predicted: " + "; ".join(missing))
    else:
        avail = num(requested.value - sum(used), "engine rule vllm/v1/worker/gpu_worker.py:"
                    "753-757 (requested - weights - activation peak - non-torch"
                    + (" - CUDA-graph estimate)" if charged else ")"))
    return EngineMemory(
        total_bytes=total, gpu_memory_utilization=util, requested_bytes=requested,
        weights_bytes=weights, activation_peak_bytes=peak, non_torch_bytes=non_torch,
        cudagraph_bytes=graphs, available_kv_bytes=avail,
        fitted_regime=budget.regime_check(rules, inp, [
            "activation_base_gib", "cudagraph_first_mib",
            "non_torch_tp1_gib" if inp.tp == 1 else "non_torch_tp_gib"],
            {"max_num_seqs": seqs, "max_num_batched_tokens": mnbt}),
        free_at_start_bytes=budget.free_before_load(rules, inp))


def _latent_block(rules, inp: Inputs) -> Quantity:
    """The MLA block size: by the backend vLLM selects for this capability and KV width
    (dense MLA), else the sparse/unknown-GPU default."""
    rows = rules.values.get("latent_block_by_capability")
    if rows and not inp.sparse and inp.capability and inp.kv_bytes:
        major = int(str(inp.capability).split(".")[0])
        width = "8bit" if inp.kv_bytes <= 1 else "16bit"
        for row in rows["value"]:
            if row["cc_major"] == major and row.get("kv", width) == width:
                return num(row["block_size"], f"engine rule {rows['source']}: compute "
                           f"capability {inp.capability}, {width} KV -> {row['backend']}")
    return num(rules["latent_block_size"], rules.basis("latent_block_size"))


def _checkpoint_alignment(rules, inp: Inputs, rec) -> tuple[int, str] | None:
    """(alignment, rule) when every recurrent layer exports prefill checkpoints on this GPU."""
    rows = rules.values.get("prefill_checkpoint_alignment")
    if not rows or not inp.capability:
        return None
    major = int(str(inp.capability).split(".")[0])
    for row in rows["value"]:
        if major in row["cc_major"] and all(
                all(part.startswith(row["component_prefix"]) for part in p.name.split("+"))
                for p in rec):
            return row["alignment"], rows["source"]
    return None


def block_size(rules, flags: dict, inp: Inputs, pages,
               prefix: bool = True) -> tuple[Quantity, HybridPages | None]:
    """Tokens per attention block, and the hybrid alignment when recurrent state exists
    (prefix: prefix caching on, i.e. vLLM's align mode for recurrent state)."""
    user = flags.get("block_size")
    if user:
        bs = num(int(user), "user")
    elif inp.latent:
        bs = _latent_block(rules, inp)
    else:
        bs = attention_block(rules, inp)
    rec = [p for p in pages if p.family == "recurrent"]
    att = [p for p in pages if p.family not in ("recurrent", "ring")]
    if not (rec and att):
        return bs, None
    one_token = max(p.token_bytes for p in att)
    state = max(p.state_bytes for p in rec)
    mult = rules["kernel_block_multiple"]
    align = max(mult, bs.value)
    if inp.latent:
        align = max(align, rules["hybrid_align_latent_min"])
    checkpoint = _checkpoint_alignment(rules, inp, rec) if prefix else None
    if checkpoint:
        align = math.lcm(align, checkpoint[0])
    tokens = align * math.ceil(state / (align * one_token))
    tokens = mult * math.ceil(tokens / mult)
    padded = math.ceil(tokens * one_token)
    hybrid = HybridPages(
        attention_page_bytes_per_token=num(int(one_token), "kvfit state, per rank"),
        recurrent_page_bytes=num(state, "kvfit state, per rank"),
        recurrent_page_padded_bytes=num(padded, _ALIGN),
        recurrent_padding_percent=num(round(100 * (padded - state) / state, 2), _ALIGN),
        log_line=f"Setting attention block size to {tokens} tokens to ensure that attention "
                 "page size is >= mamba page size")
    basis = _ALIGN if not checkpoint else f"{_ALIGN}; a multiple of {checkpoint[0]} tokens: " \
        "the recurrent layers export prefill checkpoints (rule prefill_checkpoint_alignment)"
    return num(tokens, basis), hybrid


def request_blocks(rules, groups, L: int, mnbt: int, dcp: int, spec: int,
                   align: dict | bool | None) -> list[BlockGroup]:
    """Blocks one request of L tokens pins in each group (kv_cache_utils.py:1061-1093).

    align: None / False without prefix-caching align mode, else {recurrent group: (state
    blocks, kernel rule)} from state_blocks (True, or a group not listed: mamba_blocks_align)."""
    in_flight = rules["sliding_in_flight_batches"] * mnbt
    out = []
    for g in groups:
        bt = g.block_tokens
        if g.family == "sliding":
            held = min(g.window - 1 + in_flight, L)
            n, why = math.ceil(held / bt) + 1, f"ceil(min({g.window} - 1 + {in_flight}, {L}) / " \
                f"{bt}) + 1: the window plus {rules['sliding_in_flight_batches']} x " \
                f"{mnbt} in-flight tokens (kv_cache_interface.py:918-955)"
        elif g.family == "chunked":
            n, why = math.ceil(min(g.window + in_flight, L) / bt), "chunk + in-flight tokens"
        elif g.family == "ring":
            n, why = 1, _RING
        elif g.family == "recurrent":
            on = align is not None and align is not False
            table = align if isinstance(align, dict) else {}
            base, kernel = (table.get(g.name) or (rules["mamba_blocks_align"], None)) if on \
                else (rules["mamba_blocks_plain"], None)
            n, why = base + spec, (f"{base} state blocks" + (" (prefix-caching align mode)" if
                                                             on else "") + f" + {spec} spec")
            if kernel:
                why += f"; {kernel}"
        else:
            n, why = math.ceil(math.ceil(L / dcp) / bt), f"ceil({L} / {dcp} / {bt})" if dcp > 1 \
                else f"ceil({L} / {bt})"
        out.append(BlockGroup(family=g.family, components=g.name, blocks=n, rule=why))
    return out


def _total(rules, groups, L, mnbt, dcp, spec, align) -> int:
    return sum(b.blocks for b in request_blocks(rules, groups, L, mnbt, dcp, spec, align))


def _fit_length(rules, groups, avail: int, bpb: int, mnbt, dcp, spec, align, L: int) -> int:
    """The longest max_model_len whose one request fits (binary search, like the engine)."""
    lo, hi = 0, L
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _total(rules, groups, mid, mnbt, dcp, spec, align) * bpb <= avail:
            lo = mid
        else:
            hi = mid - 1
    return lo


def batch_defaults(rules, inp: Inputs) -> tuple[int, int, str]:
    """(max_num_seqs, max_num_batched_tokens, basis) vLLM picks when neither flag is given."""
    tiers = rules.values.get("batch_default_tiers")
    total = inp.total_bytes or inp.visible_bytes
    if not tiers or not total:
        return (rules["max_num_seqs_default"], rules["max_num_batched_tokens_default"],
                rules.basis("max_num_seqs_default") + " (GPU unknown)")
    for tier in tiers["value"]:
        if total >= tier["min_total_gib"] * GIB and inp.device not in tier.get(
                "exclude_hardware", ()):
            why = f"{total / GIB:.1f} GiB GPU >= {tier['min_total_gib']} GiB tier"
            return (tier["max_num_seqs"], tier["max_num_batched_tokens"],
                    f"engine rule {tiers['source']}: {why}")
    raise AssertionError("the last tier has min_total_gib 0")


def _mm_prefix_floor(rules, inp: Inputs, mnbt: int, basis: str) -> tuple[int, str]:
    """The default max_num_batched_tokens raised to the largest multimodal item of a prefix-LM
    model (Gemma 4: a 2,496-token video), which must fit in one batch."""
    rule = rules.values.get("mm_prefix_batched_tokens_floor")
    model = inp.model_config or {}
    text = model.get("text_config") if isinstance(model.get("text_config"), dict) else {}
    for row in rule["value"] if rule else ():
        if model.get("model_type") == row["model_type"] and \
                text.get(row["text_config_key"]) == row["equals"] and mnbt < row["tokens"]:
            return row["tokens"], (f"engine rule {rule['source']}: the GPU tier's default "
                                   f"{mnbt} raised to one {row.get('modality', 'multimodal')} "
                                   f"item of {row['tokens']} tokens")
    return mnbt, basis


def predict(rules, flags: dict, inp: Inputs) -> EnginePrediction:
    """vLLM's start-up numbers for one engine (one DP replica) at this TP size."""
    L = int(flag(flags, "max_model_len", inp.context))
    seqs_default, mnbt_default, batch_basis = batch_defaults(rules, inp)
    mnbt_default, batch_basis = _mm_prefix_floor(rules, inp, mnbt_default, batch_basis)
    mnbt = int(flag(flags, "max_num_batched_tokens", mnbt_default))
    seqs = int(flag(flags, "max_num_seqs", seqs_default))
    dcp, spec = int(flag(flags, "decode_context_parallel_size", 1)), int(
        flag(flags, "num_speculative_tokens", 0))
    prefix = flag(flags, "enable_prefix_caching", rules["prefix_caching_default"])
    pages = layer_pages(inp.components, inp.tp)
    mem = memory(rules, flags, inp, seqs, mnbt)
    stride, block_refusal = "", None
    if own_blocks(pages) and flags.get("block_size"):
        pages, block_refusal = user_block(rules, pages, int(flags["block_size"]))
    if is_packed(pages):
        grouping, bs, hybrid, align, stride = _packed(rules, flags, inp, pages, bool(prefix))
        if block_refusal is None and own_blocks(pages) and flags.get("block_size"):
            bs = num(bs.value, f"{bs.basis}; --block-size {flags['block_size']} sets "
                     f"the {', '.join(rules['own_block_user_families'])} layers' block only "
                     f"({rules.basis('own_block_user_families')})")
    else:
        bs, hybrid = block_size(rules, flags, inp, pages, bool(prefix))
        align_mode = bool(prefix) and hybrid is not None
        grouping = group_pages(pages, bs.value, rules["group_size_ratio"],
                               bs.value if align_mode else L)
        align = state_blocks(rules, inp, grouping.groups) if align_mode else None
    pipeline = None
    if inp.stages:                   # PP: each stage's own pool; the smallest binds
        from .vllm_pp import stage_pools
        mem, per_block, pipeline = stage_pools(memory, rules, flags, inp, grouping, seqs, mnbt)
        grouping = replace(grouping, bytes_per_block=per_block)
    out = {"max_model_len": _setting(flags, "max_model_len", L, "plan: the context"),
           "max_num_batched_tokens": _setting(flags, "max_num_batched_tokens", mnbt, batch_basis),
           "max_num_seqs": _setting(flags, "max_num_seqs", seqs, batch_basis),
           "prefix_caching": _setting(flags, "enable_prefix_caching", bool(prefix),
                                      rules.basis("prefix_caching_default")),
           "memory": mem, "block_size": bs, "hybrid": hybrid,
           "groups": num([{"family": g.family, "components": g.name, "layers": g.layers,
                           "slots": g.slots, "block_tokens": g.block_tokens,
                           "page_bytes": g.page_bytes} for g in grouping.groups],
                         PACKED_RULE if grouping.kind == "packed" else
                         "engine rule vllm/v1/core/kv_cache_planning.py:1113-1200, 346-556"),
           "padding_layers": num(grouping.padding_layers, "engine rule vllm/v1/core/"
                                 "kv_cache_planning.py:533-541 (phantom layers fill short groups)"),
           "bytes_per_block": num(grouping.bytes_per_block, "engine rule vllm/v1/core/"
                                  "kv_cache_planning.py:574-605 (sum of the group's pages" +
                                  (f", rounded up to the lcm of the block stride alignments: "
                                   f"{stride}; rule packed_block_stride)" if stride else ")"))}
    per_group = request_blocks(rules, grouping.groups, L, mnbt, dcp, spec, align)
    blocks = sum(b.blocks for b in per_group)
    out["request_blocks_by_group"] = tuple(per_group)
    out["blocks_per_request"] = num(blocks, "engine rule vllm/v1/core/kv_cache_utils.py:1061-1093"
                                    " (sum over groups)")
    out |= capacity(rules, grouping, mem.available_kv_bytes.value, blocks, L, dcp)
    out["refusal"] = block_refusal or _batch_refusal(mnbt, seqs) or refusal(
        rules, mem, grouping, blocks, L, (mnbt, dcp, spec, align, inp))
    out["warnings"] = (_COMPRESSED,) if grouping.kind != "packed" and any(
        p.family == "compressed" for p in pages) else ()
    if pipeline is not None:
        out["pipeline_stages"] = pipeline
    return prediction(rules, inp, **out)


def capacity(rules, grouping, avail: int | None, blocks: int, L: int, dcp: int) -> dict:
    """num_gpu_blocks, max concurrency and the printed 'GPU KV cache size' tokens."""
    if avail is None:
        none = num(None, "needs the available KV memory")
        return {"num_gpu_blocks": none, "max_concurrency": none, "kv_cache_tokens": none,
                "attention_token_capacity": none, "capacity_over_len": none, "log_lines": ()}
    n = max(0, avail // grouping.bytes_per_block)
    conc = n / blocks if blocks else 0.0
    if rules["tokens_formula"] == "concurrency_x_len":
        tokens = int(conc * L)
    else:
        smallest = min(g.block_tokens for g in grouping.groups)
        tokens = n // len(grouping.groups) * smallest * dcp
    attn = [g.block_tokens for g in grouping.groups if g.family not in ("recurrent", "ring")]
    pool_tokens = n * min(attn) * dcp if attn else 0
    lines = [f"Available KV cache memory: {gib(avail)}", f"GPU KV cache size: {tokens:,} tokens",
             f"Maximum concurrency for {L:,} tokens per request: {conc:.2f}x"]
    if rules["concurrency_line"] == "one_line":
        lines[1:] = [f"{lines[1]}, {lines[2]}"]
    return {"num_gpu_blocks": num(n, "engine rule vllm/v1/core/kv_cache_planning.py:681, "
                                  "1568-1573 (available // bytes per block)"),
            "max_concurrency": num(round(conc, 4), "engine rule vllm/v1/core/kv_cache_utils.py:"
                                   "1061-1093 (blocks / blocks per request, null block included)"),
            "kv_cache_tokens": num(tokens, rules.basis("tokens_formula")),
            "attention_token_capacity": num(pool_tokens, "derived: num_gpu_blocks x attention "
                                            "block size (tokens the pool holds per attention layer)"),
            "capacity_over_len": num(round(pool_tokens / L, 4), "derived: attention_token_capacity"
                                     " / max_model_len (a tokens-per-request estimate)"),
            "log_lines": tuple(lines)}


def _batch_refusal(mnbt: int, seqs: int) -> Refusal | None:
    """vLLM refuses a step budget smaller than the running-request cap."""
    if mnbt >= seqs:
        return None
    return Refusal(reason=f"max_num_batched_tokens ({mnbt}) must be greater than or equal to "
                          f"max_num_seqs ({seqs}).",
                   rule="engine rule vllm/config/scheduler.py (SchedulerConfig."
                        "verify_max_model_len raises when max_num_batched_tokens < max_num_seqs)")


def _indexer_refusal(rules, inp) -> Refusal | None:
    """An MXFP4 sparse-indexer cache on a GPU family the engine does not run it on."""
    majors = rules.values.get("indexer_mxfp4_capability")
    if inp.index_dtype != "mxfp4" or not majors or not inp.capability:
        return None
    if int(str(inp.capability).split(".")[0]) in majors["value"]:
        return None
    return Refusal(reason=f"indexer_kv_dtype='mxfp4' is not supported on compute capability "
                          f"{inp.capability}: vLLM runs the MXFP4 indexer cache only on "
                          f"capability {' / '.join(f'{m}.x' for m in majors['value'])} "
                          "(Blackwell datacenter GPUs).",
                   rule=rules.basis("indexer_mxfp4_capability"))


def _mm_prefix_kv_refusal(rules, inp) -> Refusal | None:
    """A KV dtype no attention backend takes for this multimodal prefix-LM model."""
    rule = rules.values.get("mm_prefix_kv_refused")
    config = inp.model_config or {}
    cfg = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    for cond in rule["value"] if rule else ():      # rows: conditions of the spec rule (YAML)
        if config.get("model_type") == cond["model_type"] and inp.kv_name in cond["kv"] and \
                cfg.get(cond["text_config_key"]) == cond["equals"]:
            return Refusal(reason=f"No valid attention backend found for --kv-cache-dtype "
                                  f"{inp.kv_name} with {cond['model_type']}'s multimodal "
                                  f"prefix attention ({cond['text_config_key']} = "
                                  f"{cond['equals']!r}).",
                           rule=rules.basis("mm_prefix_kv_refused"))
    return None


def refusal(rules, mem: EngineMemory, grouping, blocks: int, L: int, knobs) -> Refusal | None:
    """The engine's start-up refusal (reason and rule), or None when it starts."""
    free, req = mem.free_at_start_bytes.value, mem.requested_bytes.value
    before_memory = (too_long("vllm/config/model.py (_get_and_verify_max_len)", L, knobs[-1])
                     or _indexer_refusal(rules, knobs[-1]) or _mm_prefix_kv_refusal(rules, knobs[-1]))
    if before_memory:         # refused whatever the memory: context, indexer or KV dtype
        return before_memory
    if req is not None and req > free:
        return Refusal(reason=f"Free memory on device ({gib(free)}) on startup is less than "
                              f"desired GPU memory utilization ({gib(req)}).",
                       rule="engine rule vllm/v1/worker/utils.py:716-772 (free_at_init < "
                            "requested)")
    avail = mem.available_kv_bytes.value
    if avail is None:
        return None
    bpb = grouping.bytes_per_block
    usable = avail - rules["null_blocks"] * bpb
    if avail <= 0:
        return Refusal(reason="No available memory for the cache blocks. Try increasing "
                              "`gpu_memory_utilization` when initializing the engine.",
                       rule="engine rule vllm/v1/core/kv_cache_planning.py:50-87")
    need = blocks * bpb
    if need <= usable:
        return None
    longest = _fit_length(rules, grouping.groups, usable, bpb, *knobs[:-1], L)
    return Refusal(reason=f"To serve at least one request with the model's max seq len ({L}), "
                          f"({need / GIB:.2f} GiB KV cache is needed, which is larger than the "
                          f"available KV cache memory ({usable / GIB:.2f} GiB). Based on the "
                          f"available memory, the estimated maximum model length is {longest}.",
                   rule="engine rule vllm/v1/core/kv_cache_planning.py:50-87, 1550-1559",
                   estimated_max_model_len=longest)
