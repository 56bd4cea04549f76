"""vLLM under pipeline parallelism: one KV pool per stage, the smallest block count binds.

vLLM groups the whole model's layers once (get_global_kv_cache_groups), projects the groups
onto each worker's own layers (_project_kv_cache_groups_to_worker,
vllm/v1/core/kv_cache_planning.py:1413-1458), sizes each worker's pool from its own profiled
memory (:1561-1577: available // that worker's bytes per block) and then gives every worker
the smallest block count (:1580-1595). A worker's bytes per block is its largest projected
group (:574-593); hybrid groups take every num_groups-th layer of a type (:542-554), so a
stage holding n layers of a type spread over k groups has ceil(n / k) in its fullest group.
Each stage's memory is profiled on its own weights; only the last stage runs the sampler
(vllm/v1/worker/gpu_model_runner.py:6139) and holds the draft model (:594-598).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..model.engine import EngineMemory, EngineStage, EngineStages
from .pages import layer_pages, page_bytes

_MIN = "engine rule vllm/v1/core/kv_cache_planning.py:1580-1595 (every worker gets the " \
       "smallest worker's block count)"


def stage_bytes_per_block(grouping, pages) -> int:
    """Bytes per block of one stage's projection of the global groups."""
    if grouping.kind != "hybrid":
        block = grouping.groups[0].block_tokens
        return sum(p.layers * page_bytes(p, block) for p in pages)
    buckets: dict[tuple, int] = {}
    for g in grouping.groups:
        buckets[(g.family, g.name)] = buckets.get((g.family, g.name), 0) + 1
    fullest = 0
    for (family, name), k in buckets.items():
        members = set(name.split("+"))
        n = sum(p.layers for p in pages if p.family == family
                and set(p.name.split("+")) <= members)
        fullest = max(fullest, math.ceil(n / k))
    return fullest * grouping.groups[0].page_bytes


def stage_pools(memory, rules, flags: dict, inp, grouping, seqs: int, mnbt: int
                ) -> tuple[EngineMemory, int, EngineStages]:
    """(the binding stage's memory, its bytes per block, every stage's pool and the binding
    stage).

    memory: kvfit.engines.vllm.memory (passed in to keep the import one-way)."""
    rows = []
    for i, st in enumerate(inp.stages):
        sinp = replace(inp, components=list(st.components), stages=None,
                       weights_bytes_per_rank=st.weights_bytes_per_rank, sampler=st.last,
                       pp_first=i == 0)
        mem = memory(rules, flags, sinp, seqs, mnbt)
        bpb = stage_bytes_per_block(grouping, layer_pages(sinp.components, inp.tp))
        avail = mem.available_kv_bytes.value
        blocks = None if avail is None or not bpb else max(0, avail) // bpb
        rows.append((mem, EngineStage(
            stage=i, layers=tuple(st.layers), weights_bytes=mem.weights_bytes.value,
            activation_peak_bytes=mem.activation_peak_bytes.value, available_kv_bytes=avail,
            bytes_per_block=bpb, num_gpu_blocks=blocks)))
    known = [r for r in rows if r[1].num_gpu_blocks is not None]
    mem, bind = min(known, key=lambda r: r[1].num_gpu_blocks) if known else rows[-1]
    return mem, bind.bytes_per_block, EngineStages(value=tuple(r[1] for r in rows),
                                                   binding_stage=bind.stage, basis=_MIN)
