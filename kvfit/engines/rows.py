"""The side-by-side rows of explain-log: number | printed | predicted | diff | rule (+ why).

A row's `printed` is what the log says (None when it does not say); `predicted` is kvfit's
number. `unit` decides the formatting: gib (bytes shown as GiB), tokens, ratio, count.
"""

from __future__ import annotations

from .common import GIB, num

TOLERANCE_PCT = 1.0


def _row(number, printed, pred, unit: str, why: str | None = None,
         note: str | None = None) -> dict:
    """One row; `pred` is the predicted Quantity (None / ABSENT: not predicted)."""
    value = pred.value if pred else None
    if unit == "gib" and value is not None:
        value = value / GIB
    diff = None
    if printed not in (None, 0) and value is not None:
        diff = round(100 * (value - printed) / printed, 2)
    return {"number": number, "printed": printed, "predicted": value, "unit": unit,
            "diff_pct": diff, "rule": pred.basis if pred else None, "why": why,
            "note": note}


def _largest_gap(facts, mem) -> str | None:
    p = facts.printed
    pairs = [("weights", "weights_gib", mem.weights_bytes),
             ("activation peak", "activation_gib", mem.activation_peak_bytes),
             ("non-torch", "non_torch_gib", mem.non_torch_bytes),
             ("GPU total", "total_gib", mem.total_bytes)]
    gaps = [(abs(q.value / GIB - p[n]), label, q.value / GIB, p[n])
            for label, n, q in pairs if n in p and q.value is not None]
    if mem.cudagraph_bytes.charged and "cudagraph_gib" in p:
        v = mem.cudagraph_bytes.value / GIB
        gaps.append((abs(v - p["cudagraph_gib"]), "CUDA-graph estimate", v, p["cudagraph_gib"]))
    if not gaps:
        reg = mem.fitted_regime
        return "the log does not print the non-KV terms, so the gap cannot be attributed" + (
            f"; the non-KV estimates are {reg.note}" if reg and reg.outside else "")
    _, label, v, printed = max(gaps)
    return f"largest term gap: {label} (predicted {v:.2f} vs printed {printed:.2f} GiB)"


def vllm_rows(facts, e2e, fp) -> list[dict]:
    """Rows for a vLLM log (e2e, fp: EnginePredictions end to end and from the printed
    memory; fp None when the log prints no available memory)."""
    p, mem = facts.printed, e2e.memory
    rows = [_row("GPU total (torch)", p.get("total_gib"), mem.total_bytes, "gib"),
            _row("gpu_memory_utilization", p.get("gpu_memory_utilization"),
                 mem.gpu_memory_utilization, "ratio"),
            _row("weights per GPU", p.get("weights_gib"), mem.weights_bytes, "gib"),
            _row("activation peak", p.get("activation_gib"), mem.activation_peak_bytes, "gib"),
            _row("non-torch memory", p.get("non_torch_gib"), mem.non_torch_bytes, "gib"),
            _row("CUDA-graph estimate" + (" (charged)" if mem.cudagraph_bytes.charged
                                          else " (not charged)"),
                 p.get("cudagraph_gib"), mem.cudagraph_bytes, "gib")]
    avail = _row("available KV memory", p.get("available_gib"), mem.available_kv_bytes, "gib")
    if avail["diff_pct"] is not None and abs(avail["diff_pct"]) > TOLERANCE_PCT:
        avail["why"] = _largest_gap(facts, mem)
    rows.append(avail)
    if e2e.hybrid or "attention_block_size" in p:
        rows.append(_row("attention block size", p.get("attention_block_size"), e2e.block_size,
                         "tokens"))
    if e2e.padding_layers.value or "padding_layers" in p:
        rows.append(_row("padding layers", p.get("padding_layers"), e2e.padding_layers,
                         "count"))
    blocks = p.get("num_gpu_blocks")
    per_block = p["available_gib"] * GIB / blocks if blocks and "available_gib" in p else None
    rows.append(_row("bytes per block (per GPU)", None if per_block is None else round(per_block),
                     e2e.bytes_per_block, "count",
                     note="printed = available / num_gpu_blocks (available is rounded to 0.01 GiB)"
                     if per_block else None))
    for label, key, unit in (("num_gpu_blocks", "num_gpu_blocks", "count"),
                             ("GPU KV cache size", "kv_tokens", "tokens"),
                             ("maximum concurrency", "concurrency", "ratio")):
        name = {"kv_tokens": "kv_cache_tokens", "concurrency": "max_concurrency"}.get(key, key)
        rows.append(_row(label, p.get(key), getattr(e2e, name), unit))
        if fp is not None:
            rows.append(_row(f"{label}, from the printed memory", p.get(key), getattr(fp, name),
                             unit))
    _follow(rows, e2e.tp)
    return rows


def _follow(rows: list[dict], tp: int) -> None:
    """Explain end-to-end gaps that the rules reproduce from the printed memory."""
    by = {r["number"]: r for r in rows}
    fp = by.get("GPU KV cache size, from the printed memory")
    if fp and tp > 1 and fp["diff_pct"] is not None and fp["diff_pct"] > TOLERANCE_PCT:
        fp["why"] = ("the log prints one rank's memory; vLLM sizes every rank to the smallest "
                     "rank's blocks (kv_cache_planning.py:1580-1595), so the pool is smaller")
    avail = by.get("available KV memory", {}).get("diff_pct")
    for label in ("num_gpu_blocks", "GPU KV cache size", "maximum concurrency"):
        e2e, fp = by.get(label), by.get(f"{label}, from the printed memory")
        if not e2e or e2e["diff_pct"] is None or abs(e2e["diff_pct"]) <= TOLERANCE_PCT:
            continue
        if fp and fp["diff_pct"] is not None and abs(fp["diff_pct"]) <= TOLERANCE_PCT:
            e2e["why"] = f"follows the available-memory gap ({avail:+.2f}%); from the printed " \
                         "memory the rules agree" if avail is not None else None


def sglang_rows(facts, e2e) -> list[dict]:
    """Rows for an SGLang log (e2e: its EnginePrediction)."""
    p, flags = facts.printed, facts.flags
    pool = (p.get("k_gib", 0) + p.get("v_gib", 0)) or p.get("kv_gib")
    swa_pool = "swa_tokens" in p and p.get("pool_tokens") == p["swa_tokens"]
    page = e2e.page_size.value
    cells = e2e.cells
    cell = (cells.swa_bytes_per_token if swa_pool else cells.full_bytes_per_token).value
    printed_cell = round(pool * GIB / (p["pool_tokens"] + page)) if pool and "pool_tokens" in p \
        else None
    free = (p["avail_after_load_gib"] + p["weights_gib"]
            if "avail_after_load_gib" in p and "weights_gib" in p else None)   # a line cut short
    full = p.get("full_tokens") or p.get("max_total_num_tokens") or (
        None if swa_pool else p.get("pool_tokens"))
    rows = [_row("mem_fraction_static", flags.get("mem_fraction_static"), e2e.mem_fraction_static,
                 "ratio"),
            _row("free memory before loading", free, e2e.free_before_load_bytes, "gib"),
            _row("weights per GPU", p.get("weights_gib"), e2e.weights_bytes, "gib"),
            _row(("SWA" if swa_pool else "KV") + " pool bytes (K+V, per GPU)", pool,
                 e2e.pool_bytes, "gib"),
            _row(("SWA" if swa_pool else "KV") + " bytes per token (per GPU)", printed_cell,
                 num(cell, "engine rule sglang/srt/model_executor/pool_configurator.py:340-535 "
                     "(cell size)"), "count",
                 note="printed = pool bytes / (#tokens + one padding page)" if printed_cell else None),
            _row("max_total_num_tokens", full, e2e.max_total_num_tokens, "tokens")]
    rows += _from_pool(p, e2e, pool, cell, swa_pool, full)
    if "swa_tokens" in p or e2e.swa_tokens:
        rows.append(_row("SWA pool tokens", p.get("swa_tokens"), e2e.swa_tokens, "tokens"))
    rows.append(_row("max_running_requests", p.get("max_running_requests"),
                     e2e.max_running_requests, "count"))
    if e2e.mamba_cache_size or "mamba_cache_size" in p:
        rows.append(_row("recurrent state slots", p.get("mamba_cache_size"),
                         e2e.mamba_cache_size, "count"))
    return rows


def _from_pool(p: dict, e2e, pool, cell: int, swa_pool: bool, full) -> list[dict]:
    """Token counts rebuilt from the printed pool bytes with kvfit's cell (rules check)."""
    if not pool or not cell:
        return []
    pad, ratio, page = e2e.padding_tokens, e2e.swa_full_tokens_ratio, e2e.page_size.value
    tokens = round(pool * GIB / cell) - pad
    rule = ("engine rule sglang/srt/mem_cache/memory_pool.py:2219-2281 (pool = (tokens + one "
            "page) x cell; printed GB are rounded to 0.01)")
    label = "SWA pool tokens" if swa_pool else "max_total_num_tokens"
    rows = [_row(f"{label}, from the printed pool", p.get("pool_tokens"), num(tokens, rule),
                 "tokens")]
    if swa_pool and full:
        swa = int(full * ratio) // page * page
        rows.append(_row("SWA pool tokens, from the printed full tokens", p.get("swa_tokens"),
                         num(swa, f"engine rule sglang/srt/model_executor/pool_configurator.py:"
                             f"879-893 (full tokens x {ratio}, page-aligned)"), "tokens"))
    return rows


def rows_for(facts, e2e, from_printed) -> list[dict]:
    """The comparison rows for a parsed log and its predictions."""
    if facts.engine == "vllm":
        return vllm_rows(facts, e2e, from_printed)
    return sglang_rows(facts, e2e)
