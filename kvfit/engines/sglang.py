"""SGLang: static-memory fraction, per-token cells, token pools, recurrent pool, running cap.

Worked example (Qwen3-14B, 1 x RTX A6000, 0.4.x log): free before loading 19.67 + 27.57 =
47.24 GB, weights 27.57 GB, mem_fraction_static 0.88 (TP-size table) -> rest = 19.67 -
47.24 x 0.12 = 14.00 GB. One token costs 40 layers x 8 KV heads x (128 + 128) x 2 B =
163,840 B -> 91,7xx tokens (page 1); the pool holds tokens + 1 padding page.
"""

from __future__ import annotations

import math

from ..checkpoint.kv_auto import dsa_model
from ..model.engine import EnginePrediction, PoolCells, Quantity, Refusal
from . import budget, sglang_dsv4, sglang_mm
from .common import MIB, Inputs, flag, gib, num, prediction, too_long
from .pages import layer_pages


def _tier(rules, gpu_mib: int) -> dict:
    rows = rules["capacity_tiers"]
    return next((r for r in rows if gpu_mib / 1024 < r["below_gib"]), rows[-1])


def mem_fraction(rules, flags: dict, inp: Inputs, gpu_mib: int, attn_dp: int) -> Quantity:
    """--mem-fraction-static: the user's, else the version's default rule."""
    if flags.get("mem_fraction_static") is not None:
        return num(flags["mem_fraction_static"], "user")
    if inp.utilization is not None:
        return _from_utilization(rules, inp)
    if rules["mem_fraction_rule"] == "tp_table":
        row = next(r for r in rules["mem_fraction_tp_table"] if inp.tp >= r["min_tp"])
        return num(row["value"], rules.basis("mem_fraction_tp_table") + f" (TP={inp.tp})")
    if not gpu_mib:
        return num(None, "GPU memory unknown (pass --hardware or --mem-fraction-static)")
    pp = len(inp.stages) if inp.stages else 1
    tier = _tier(rules, gpu_mib)
    chunk = int(flag(flags, "chunked_prefill_size", tier["chunked_prefill_size"]))
    max_bs = tier["max_bs_tp4"] if inp.tp >= 4 else tier["max_bs"]
    if flags.get("max_running_requests"):
        max_bs = min(max_bs, int(flags["max_running_requests"]))
    graph = rules["reserve_decode_graph_mib_per_bs"] * max_bs
    if attn_dp > 1:
        graph += 3 * max_bs * attn_dp + (1.5 * max_bs * attn_dp if max_bs > 300 else 0)
    prefill, prefill_why = sglang_mm.prefill_graph(rules, inp, pp)
    if not prefill:
        pass
    elif inp.latent:
        graph += rules["reserve_prefill_graph_mla_mib"]
    else:
        rows = rules["prefill_graph_counts"]
        row = min(rows, key=lambda r: abs(r["tokens"] - chunk))
        graph += rules["reserve_prefill_graph_mib_each"] * row["count"]
    reserved = (rules["reserve_base_mib"] + rules["reserve_activation_per_token_mib"]
                * max(chunk, rules["reserve_activation_min_tokens"])
                + inp.tp * pp / 8 * rules["reserve_tp_mib_per_8_ranks"] + graph)
    if gpu_mib / 1024 > rules["reserve_floor_above_gib"]:
        reserved = max(reserved, rules["reserve_floor_mib"])
    value = round((gpu_mib - reserved) / gpu_mib, 3)
    if value <= 0:           # SGLang's own rule gives no static memory: it cannot start
        from ..errors import UsageError
        raise UsageError(f"SGLang reserves {reserved:,.0f} MiB of each GPU before its static "
                         f"memory, more than the {gpu_mib:,} MiB planned on, so its "
                         f"mem_fraction_static would be {value:g} and it cannot start.",
                         hint="Plan on a GPU with more memory, or pass --mem-fraction-static.")
    graphs = f"decode graphs up to {max_bs}" + ("" if prefill else
                                                 f"; no prefill graph: {prefill_why}")
    basis = rules.basis("mem_fraction_rule") + (f" (reserve {reserved:,.0f} MiB of {gpu_mib:,} "
                                                f"MiB; chunked prefill {chunk}, {graphs})")
    vlm = sglang_mm.vlm_factor(rules, inp)
    if vlm is not None:
        value *= vlm.value
        basis += f"; x {vlm.value:.6g} for a multimodal model: {vlm.basis}"
    return num(value, basis, reserved_mib=round(reserved), chunked_prefill_size=chunk,
               vlm_factor=vlm.value if vlm else None)


def _from_utilization(rules, inp: Inputs) -> Quantity:
    """--utilization u (a fraction of the GPU's total memory, as vLLM's) converted to the
    static fraction of free memory before loading that gives the same static pool:
    mem_fraction_static = u x total / free before load (kv_cache_configurator.py:2990-3060:
    the pool gets free_before x mem_fraction_static minus the weights)."""
    total, free = budget.torch_total(rules, inp), _free_before(rules, inp)
    if total.value is None or free.value is None:
        return num(None, "GPU memory unknown (pass --hardware or --mem-fraction-static)")
    value = round(inp.utilization * total.value / free.value, 3)
    return num(value, f"converted from --utilization {inp.utilization:g}: u x total "
               f"({total.value / 2**30:.2f} GiB) / free before load "
               f"({free.value / 2**30:.2f} GiB) (engine rule sglang/srt/mem_cache/"
               "kv_cache_configurator.py:2990-3060)", from_utilization=inp.utilization)


def _page(rules, flags: dict, inp: Inputs) -> tuple[int, str]:
    """Tokens per page: the user's, else the one the attention backend forces, else the DSA
    page of a sparse-attention model, else 1."""
    if flags.get("page_size"):
        return int(flags["page_size"]), "user"
    backend = flags.get("attention_backend")
    row = next((r for r in rules["forced_page_sizes"] if r["backend"] == backend), None)
    if row:
        return row["page_size"], rules.basis("forced_page_sizes") + f" ({backend})"
    if "dsa_page_size" in rules.values and (
            dsa_model(rules, inp.architectures, inp.config) if inp.architectures else inp.sparse):
        kpool = (inp.config or {}).get("index_kpool")
        kpool = kpool if isinstance(kpool, int) and not isinstance(kpool, bool) and kpool > 0 else 1
        return rules["dsa_page_size"] * kpool, rules.basis("dsa_page_size") + (
            f" (x index_kpool {kpool})" if kpool > 1 else "")
    return rules["page_size_default"], rules.basis("page_size_default")


def hybrid_swa(rules, inp: Inputs) -> bool:
    """Whether SGLang gives sliding / chunked layers their own SWA pool: only for the
    architecture classes it lists; every other model's windowed layers sit in the full pool
    at full size. Unknown architectures (none given) keep the SWA pool."""
    rule = rules.values.get("hybrid_swa_architectures")
    listed = rule["value"] if rule else None
    return not listed or not inp.architectures or any(a in listed for a in inp.architectures)


def _cells(pages, swa_pool: bool = True) -> dict:
    """Bytes per token of the full pool and the SWA pool, and per recurrent slot (one rank)."""
    windowed = ("sliding", "chunked")
    full = sum(p.layers * p.token_bytes for p in pages
               if p.family == "full" or (not swa_pool and p.family in windowed))
    swa = sum(p.layers * p.token_bytes for p in pages if swa_pool and p.family in windowed)
    slot = sum(p.layers * p.state_bytes for p in pages if p.family in ("recurrent", "ring"))
    other = sorted({p.family for p in pages} - {"full", "sliding", "chunked", "recurrent", "ring"})
    return {"full": full, "swa": swa, "slot": slot, "unmodelled": other}


def _exact(x: float) -> int | float:
    """Whole bytes as an int; DeepSeek-V4's page-padded prices keep their fraction."""
    return int(x) if float(x).is_integer() else round(x, 4)


def _page_align(tokens: float, page: int) -> int:
    return int(tokens) // page * page


def _draft_tokens(flags) -> int:
    """SGLang's --speculative-num-draft-tokens for kvfit's speculative tokens: the launch
    command runs EAGLE with topk 1, steps N and N + 1 draft tokens (0: no speculation)."""
    n = int(flag(flags, "num_speculative_tokens", 0))
    return n + 1 if n > 0 else 0


def _requests(rules, flags) -> int | None:
    """--max-running-requests: the user's, else 48 under speculative decoding (rule
    speculative_max_running_requests), else None (sized from the pool)."""
    if flags.get("max_running_requests"):
        return int(flags["max_running_requests"])
    if _draft_tokens(flags) and "speculative_max_running_requests" in rules.values:
        return rules["speculative_max_running_requests"]
    return None


def _slots_rule(rules, flags) -> str:
    """The rule naming the recurrent slots one running request holds."""
    if flags.get("disable_radix_cache"):
        return "mamba_slots_no_radix"
    if flags.get("disable_overlap_schedule") and "mamba_slots_no_overlap" in rules.values:
        return "mamba_slots_no_overlap"
    return "mamba_slots_per_request"


def _recurrent(rules, flags, rest: float, slot: int, attn_dp: int = 1
               ) -> tuple[int, float, str]:
    """(slots, bytes left for KV, basis) for the recurrent pool (kv_cache_configurator.py:
    3229-3409): a stated --max-mamba-cache-size per attention-DP worker; without the radix
    cache, one slot per running request when their number is set; else r/(1+r) of the rest.
    Under speculative decoding each running request also holds D intermediate states
    (D draft tokens), reserved from the rest (:3296-3380)."""
    D = _draft_tokens(flags)
    per = rules[_slots_rule(rules, flags)]
    running = _requests(rules, flags)
    spec = (f"; minus intermediate states for {D} draft tokens per running request "
            "(kv_cache_configurator.py:3296-3380)") if D else ""
    if flags.get("max_mamba_cache_size"):
        size = int(flags["max_mamba_cache_size"]) // attn_dp
        basis = "user: --max-mamba-cache-size, per attention-DP worker" + spec
        if D:
            rest -= slot * (min(max(1, running // attn_dp), size // per) + 1) * D
    elif flags.get("disable_radix_cache") and running:
        size = max(1, running // attn_dp)
        basis = ("engine rule sglang/srt/mem_cache/kv_cache_configurator.py:3325-3348 (no radix "
                 "cache: one slot per running request, --max-running-requests per worker)" + spec)
        if D:
            rest -= slot * (size + 1) * D
    else:
        r = float(flag(flags, "mamba_full_memory_ratio", rules["mamba_full_memory_ratio"]))
        budget = rest * r / (1 + r)
        basis = rules.basis("mamba_full_memory_ratio") + f" (r = {r}: r/(1+r) of the rest)"
        if D:
            size = max(0, math.floor((budget - slot * (1 + D)) // (slot * (1 + D / per))))
            rest -= slot * (min(max(1, running // attn_dp), size // per) + 1) * D
            basis += "; solved with the intermediate states" + spec
        else:
            size = max(0, math.floor((budget - slot) / slot))
    return size, rest - (size + 1) * slot, basis


def predict(rules, flags: dict, inp: Inputs, mfs: Quantity | None = None,
            slot: int | None = None) -> EnginePrediction:
    """SGLang's start-up numbers for one attention-DP group at this TP size (under PP: every
    stage's, the binding one's on top, kvfit.engines.sglang_pp). mfs / slot: a PP stage's
    fraction and Mamba slot bytes, which the whole pipeline decides."""
    attn_dp = int(flag(flags, "attn_dp_size", 1))
    if inp.stages:       # the pipeline's fraction (tp x pp slack), the same on every stage
        from .sglang_pp import predict_stages
        return predict_stages(predict, rules, flags, inp,
                              mem_fraction(rules, flags, inp, inp.visible_bytes // MIB, attn_dp))
    attn_tp = max(1, inp.tp // attn_dp)
    dsv4 = sglang_dsv4.rule(rules, inp)
    page, page_basis = sglang_dsv4.page(rules) if dsv4 else _page(rules, flags, inp)
    context = int(flag(flags, "context_length", inp.context))
    gpu_mib = inp.visible_bytes // MIB
    mfs = mfs or mem_fraction(rules, flags, inp, gpu_mib, attn_dp)
    if dsv4:
        v4 = sglang_dsv4.cells(dsv4, inp.components, attn_tp, page)
        slot = sum(c.per_rank(attn_tp) for c, _ in v4["requests"])
        cells = {"full": v4["full"], "swa": v4["swa"], "slot": slot, "unmodelled": v4["unmodelled"]}
    else:
        cells = _cells(layer_pages(inp.components, attn_tp), hybrid_swa(rules, inp))
    if slot is not None:
        cells["slot"] = slot
    free = _free_before(rules, inp)
    weights = budget.loaded_weights(rules, inp)
    ratio = float(flag(flags, "swa_full_tokens_ratio", (dsv4 or rules)["swa_full_tokens_ratio"]))
    state = "kvfit state, per rank (engine rule sglang/srt/model_executor/pool_configurator.py:" + (
        "1353-1404: DSV4PoolConfigurator, page-padded; recurrent: the C128 rings per request slot)"
        if dsv4 else "340-535)")
    out = {"attn_tp": num(attn_tp, "engine rule sglang/srt/runtime_context.py:73-76 (tp / "
                          "attn_dp)"),
           "swa_full_tokens_ratio": ratio, "padding_tokens": rules["padding_pages"] * page,
           "page_size": num(page, page_basis),
           "context_len": num(context, "user" if flags.get("max_model_len") else
                              "plan: the context"),
           "mem_fraction_static": mfs, "free_before_load_bytes": free, "weights_bytes": weights,
           "cells": PoolCells(full_bytes_per_token=num(_exact(cells["full"]), state),
                              swa_bytes_per_token=num(_exact(cells["swa"]), state),
                              recurrent_bytes_per_slot=num(int(cells["slot"]), state),
                              unmodelled_kinds=tuple(cells["unmodelled"]))}
    long = too_long("sglang/srt/configs/model_config.py (context length check)", context, inp)
    if cells["unmodelled"] and dsv4:
        out["warnings"] = (f"{', '.join(cells['unmodelled'])}: not modelled in SGLang's "
                           f"DeepSeek-V4 pools ({rules.values['dsv4_pool']['note']}); left out "
                           "of the cells",)
    elif cells["unmodelled"]:
        out["warnings"] = (f"cache kinds {', '.join(cells['unmodelled'])} are not in SGLang's "
                           "generic pools; they are left out of the cell",)
    missing = [f"{name}: {x.basis}" for name, x in (("free memory", free), ("weights", weights),
               ("mem_fraction_static", mfs)) if x.value is None]
    if missing:
        why = "not predicted: " + "; ".join(missing)
        return prediction(rules, inp, **out, rest_bytes=num(None, why),
                          **_pools(rules, flags, None, cells, page, context, attn_dp, why)
                          | {"refusal": long})
    mm = sglang_mm.mm_reservation(rules, inp, gpu_mib)
    rest = mfs.value * free.value - weights.value - mm.value
    out["rest_bytes"] = num(int(rest), "engine rule sglang/srt/mem_cache/kv_cache_configurator.py:"
                            "2990-3060 (free after weights - free before x (1 - mem_fraction_static)"
                            + (f" - the multimodal reservation: {mm.basis})" if mm.value else ")"))
    if mm.value:
        out["multimodal_reserve_bytes"] = mm
    if dsv4 and rest > 0:
        out |= sglang_dsv4.pools(rules, dsv4, flags, rest, v4, page, attn_dp, lambda r, f, t, dp:
                                 _running(r, f, t, context, dp, None))
    else:
        out |= _pools(rules, flags, rest, cells, page, context, attn_dp)
    if long:
        out["refusal"] = long
    elif rest <= 0:
        need = round(1 - (free.value - weights.value) / free.value, 3)
        out["refusal"] = Refusal(
            reason="Not enough memory: the weights leave no room for the KV cache. Increase "
                   f"--mem-fraction-static (at least {need}).",
            rule="engine rule sglang/srt/mem_cache/kv_cache_configurator.py:3043-3058")
    return prediction(rules, inp, **out)


def _free_before(rules, inp: Inputs) -> Quantity:
    return budget.free_before_load(rules, inp, "log: avail mem + mem usage at 'Load weight end'")


def _pools(rules, flags, rest, cells, page: int, context: int, attn_dp: int,
           why: str = "needs the memory left after weights") -> dict:
    """max_total_num_tokens, SWA tokens, recurrent slots, pool bytes and the running cap (as
    EnginePrediction fields)."""
    none = num(None, why)
    out = {"max_total_num_tokens": none, "swa_tokens": None, "mamba_cache_size": None,
           "max_running_requests": none, "pool_bytes": none, "refusal": None, "log_lines": ()}
    if rest is None or rest <= 0:
        return out
    kv_rest, slots = rest, None
    if cells["slot"]:
        slots, kv_rest, basis = _recurrent(rules, flags, rest, cells["slot"], attn_dp)
        out["mamba_cache_size"] = num(slots, basis)
    ratio = float(flag(flags, "swa_full_tokens_ratio", rules["swa_full_tokens_ratio"]))
    cell = cells["full"] + (ratio * cells["swa"] if cells["swa"] else 0)
    if cell <= 0:
        return out
    tokens = _page_align(kv_rest / cell, page)
    if flags.get("max_total_tokens"):
        tokens = min(tokens, int(flags["max_total_tokens"]))
    rule = "engine rule sglang/srt/model_executor/pool_configurator.py:637-647 " \
           "(floor(rest / cell) rounded down to the page)"
    out["max_total_num_tokens"] = num(tokens, rule)
    pad = rules["padding_pages"] * page
    pool = int((tokens + pad) * cells["full"])
    lines = []
    if cells["swa"]:
        swa = _page_align(tokens * ratio, page)
        out["swa_tokens"] = num(swa, rules.basis("swa_full_tokens_ratio"))
        pool += int((swa + pad) * cells["swa"])
        lines.append(f"Use sliding window memory pool. full_layer_tokens={tokens}, "
                     f"swa_layer_tokens={swa}")
    out["pool_bytes"] = num(int(pool), rules.basis("padding_pages") + " (tokens + one padding "
                            "page, x bytes per token; K + V together)")
    lines.append(f"KV Cache is allocated. #tokens: {tokens}, K+V size: {gib(pool)[:-4]} GB")
    out["max_running_requests"] = _running(rules, flags, tokens, context, attn_dp, slots)
    out["log_lines"] = tuple(lines)
    return out


def _running(rules, flags, tokens: int, context: int, attn_dp: int, slots) -> Quantity:
    """Effective max_running_requests per DP worker (kv_cache_configurator.py:3119-3172)."""
    est = int(tokens / context * rules["running_requests_per_context"])
    est = min(max(est, rules["running_requests_min"]), rules["running_requests_max"])
    user = _requests(rules, flags)
    value = min(int(user) // attn_dp if user else est, tokens // 2)
    basis = rules.basis("running_requests_per_context")
    if user and not flags.get("max_running_requests"):
        basis = rules.basis("speculative_max_running_requests")
    if slots is not None:
        name = _slots_rule(rules, flags)
        per = rules[name]
        if slots // per < value:
            value = slots // per
            basis = rules.basis(name) + f" (capped by {slots} recurrent " \
                f"slots / {per} per request)"
    return num(value, basis)
