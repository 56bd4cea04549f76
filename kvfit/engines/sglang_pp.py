"""SGLang under pipeline parallelism (--pp-size): one pool per stage, the smallest binds.

Every PP rank builds its own KVCacheConfigurator on its own layers (the split of
sglang/srt/distributed/utils.py:110-150, rule pp_split) and its own loaded weights, sizes its
pool from its own free memory, and then takes the minimum max_total_num_tokens over the ranks
(mem_cache/kv_cache_configurator.py:3107-3115), so the stage that holds the fewest tokens
binds. The default mem_fraction_static is the pipeline's: tp x pp / 8 x 1,024 MiB of parallel
slack and no prefill CUDA graph (arg_groups/memory_hook.py:312, cuda_graph_hook.py:150-162).
A hybrid's Mamba slot is priced at the largest stage's share of the Mamba layers on every
rank (kv_cache_configurator.py:3229-3260); a stage with no attention layers does not bound
the tokens (model_executor/pool_configurator.py:236-249).

Worked example (Llama-3.1-8B, H100 80GB, TP 1 x PP 2, SGLang 0.5.23): reserve 512 + 1.5 x
8,192 + 1 x 2 / 8 x 1,024 + 2 x 256 = 13,568 MiB -> round((81,559 - 13,568) / 81,559, 3) =
0.834, as SGLang's own resolution records (tests/engine_probe/sglang-0.5.23-pp.jsonl); 16 of
the 32 layers per stage, 16 x 8 x (128 + 128) x 2 B = 65,536 B per token on each.
"""

from __future__ import annotations

from dataclasses import replace

from ..model.base import ABSENT
from ..model.engine import EnginePrediction, EngineStage, EngineStages, Quantity
from .common import flag
from .pages import layer_pages

_MIN = "engine rule sglang/srt/mem_cache/kv_cache_configurator.py:3107-3115 (max_total_num_tokens " \
       "is the minimum over the PP ranks)"


def _slot(inp, attn_tp: int) -> int:
    """The largest stage's Mamba state bytes per slot (one rank)."""
    return max((sum(p.layers * p.state_bytes for p in layer_pages(st.components, attn_tp)
                    if p.family == "recurrent") for st in inp.stages), default=0)


def predict_stages(predict, rules, flags: dict, inp, mfs: Quantity) -> EnginePrediction:
    """The binding stage's prediction, with every stage's figures in `pipeline_stages`;
    predict is SGLang's per-stage prediction, mfs the pipeline's mem_fraction_static."""
    attn_dp = int(flag(flags, "attn_dp_size", 1))
    slot = _slot(inp, max(1, inp.tp // attn_dp)) or None
    rows = []
    flags = flags | {"disable_overlap_schedule": True}     # arg_groups/overrides.py:1623-1628
    for i, st in enumerate(inp.stages):
        sinp = replace(inp, components=list(st.components), stages=None,
                       weights_bytes_per_rank=st.weights_bytes_per_rank)
        rows.append((i, st, predict(rules, flags, sinp, mfs=mfs, slot=slot)))

    def tokens(row):
        e = row[2]
        if e.cells.full_bytes_per_token.value == 0 and e.cells.swa_bytes_per_token.value == 0:
            return None                  # no attention layers here: another stage bounds
        return e.max_total_num_tokens.value

    refused = [r for r in rows if r[2].refusal]
    known = [r for r in rows if tokens(r) is not None]
    bind = refused[0] if refused else (min(known, key=tokens) if known else rows[-1])
    table = tuple(EngineStage(stage=i, layers=tuple(st.layers), weights_bytes=e.weights_bytes.value,
                              rest_bytes=e.rest_bytes.value,
                              full_bytes_per_token=e.cells.full_bytes_per_token.value,
                              max_total_num_tokens=e.max_total_num_tokens.value,
                              refusal=e.refusal.reason if e.refusal else ABSENT)
                  for i, st, e in rows)
    split = rules.basis("pp_split") if "pp_split" in rules.values else ABSENT
    return replace(bind[2], pipeline_stages=EngineStages(
        value=table, basis=_MIN, binding_stage=bind[0], pp=len(rows), split=split))
