"""One layout's per-rank memory split into the parts a chart stacks, from the plan's numbers.

Static bound (no engine), on the device memory of the plan's basis:
  weights   weights per rank
  state     resident sequences per group x state per sequence per rank
  reserve   memory outside the utilization budget + --runtime-reserve-gib + engine padding
  free      the budget left over (less than one more sequence's state)
With an engine that answered, the engine's own memory terms replace them
(kvfit.engines.base.Engine.memory_parts):
  vLLM      total = CUDA total; weights; engine overheads = activation peak + non-torch
            (CUDA context, NCCL) + CUDA graphs (when charged); state = the KV pool (available
            KV memory); reserve = total - requested (1 - utilization). vLLM sizes the pool as
            requested - weights - overheads (gpu_worker.py:753-757), so free is ~0
  SGLang    total = the device memory; weights; state = the token pool; engine overheads =
            SGLang's static reserve (free before load x (1 - mem_fraction_static)) + what the
            CUDA context and driver hold (memory - free before load)
  free is what is left in both. No part is below zero: a negative KV pool (the weights and
  overheads exceed what the engine may use, so it refuses to start) is drawn as none, and
  total_bytes grows to the parts' sum. Every part sums to `total_bytes`.
A layout without weights (unknown) or an invalid one has no bars (None).
"""

from __future__ import annotations

from ..model.sweep import MemoryBars

PARTS = ("weights", "state", "reserve", "engine_overheads", "free")


def _bars(total: int, basis: str, **parts: int) -> MemoryBars:
    out = {k: max(0, int(parts.get(k) or 0)) for k in PARTS}
    out["free"] = max(0, total - sum(out[k] for k in PARTS if k != "free"))
    return MemoryBars(total_bytes=int(max(total, sum(out.values()))),
                      **{f"{k}_bytes": out[k] for k in PARTS}, basis=basis)


def _engine(lay, hw) -> MemoryBars | None:
    """The engine's own memory terms: its module reads its own prediction (kvfit.engines)."""
    from ..engines import get
    e = lay.engine
    parts = get(e.engine).memory_parts(e, hw)
    if parts is None:
        return None
    return _bars(parts.pop("total"), parts.pop("basis"), **parts)


def memory_bars(lay, hw) -> MemoryBars | None:
    """The stacked per-rank parts of one Layout (bytes) on its Hardware, or None when they are
    unknown."""
    p = lay.per_rank
    if not lay.valid or not p or p.weights_bytes is None or not hw:
        return None
    if lay.engine:
        return _engine(lay, hw)
    total = hw.memory_bytes_per_gpu
    state = (lay.sequences_per_group or 0) * p.state_bytes_per_sequence
    reserve = total - p.budget_bytes + p.reserve_bytes + (p.padding_bytes or 0)
    return _bars(total, "static bound (device memory on the plan's basis)",
                 weights=p.weights_bytes, state=state, reserve=reserve)
