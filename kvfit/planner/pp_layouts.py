"""TP x PP x DP layouts: every pipeline stage judged on its own budget; the fullest binds.

A replica of TP=t x PP=p spans t x p GPUs. Stage s keeps its decoder layers' weights (its
share, kvfit.engines.pp_split) split over its t ranks, except the replicated rows of its layers,
which each of its ranks holds whole, and its layers' state per sequence; the
replica admits the sequences its tightest stage admits (vLLM keeps the smallest block count
of all workers, vllm/v1/core/kv_cache_planning.py:1580-1595).
"""

from __future__ import annotations

from dataclasses import replace

from ..checkpoint.weights import rank_share
from ..errors import UsageError
from ..model.base import ABSENT
from ..model.plan import Layout
from .layouts import Budget, judged
from .systems import placement


def check_request(req, topo) -> int:
    """The request's PP size (1 without --pp), validated against the topology."""
    pp = 1 if req.pp is None else req.pp
    if req.pp_layer_partition is not None and pp == 1:
        raise UsageError("--pp-layer-partition needs --pp N (N > 1).")
    if isinstance(pp, bool) or not isinstance(pp, int) or not 1 <= pp <= 4096:
        raise UsageError(f"--pp {pp!r} must be a whole number from 1 to 4096.")
    if pp > 1 and req.parallelism != "tp":
        raise UsageError(f"--pp {pp} with --parallelism {req.parallelism}: kvfit models pipeline "
                         "parallelism for plain TP x PP x DP layouts only.")
    if pp > 1 and topo.gpus % pp:
        raise UsageError(f"--pp {pp} must divide the {topo.gpus} GPUs (TP x PP x DP).")
    if pp > 1 and req.engine:
        from ..engines import get
        get(req.engine).check_pipeline(pp, bool(req.mtp))
    return pp


def _stage_row(st, tp: int, budget: Budget, extra: int):
    from ..model.layout import PipelineStage

    # the stage's sharded part / TP, its layers' replicated rows whole (rank_share)
    w = None if st.weights_bytes is None else \
        rank_share(st.weights_bytes, st.replicated_bytes, tp) + extra
    state = sum(c.per_rank(tp) for c in st.components)
    left = None if w is None else budget.budget_bytes - budget.reserve_bytes - w
    seqs = None if left is None else (max(0, left) // state if state else 0)
    return PipelineStage(stage=st.index, layers=(st.start, st.end), weights_bytes=w,
                         state_bytes_per_sequence=state, left_bytes=left, sequences=seqs,
                         components=tuple(c.name for c in st.components),
                         replicated_bytes=st.replicated_bytes or ABSENT)


def binding(rows):
    """The stage that admits the fewest sequences (least room left on ties)."""
    if rows[0].sequences is None:
        return max(rows, key=lambda r: r.state_bytes_per_sequence)
    return min(rows, key=lambda r: (r.sequences, r.left_bytes))


def pp_layout(tp: int, pp: int, topo, m, comps, budget: Budget, required: int,
              invalid: list[str], extra: int = 0, partition: str | None = None,
              more: dict | None = None, per_user: int | None = None) -> Layout:
    """One TP=tp x PP=pp x DP layout, judged by its binding stage (`more`, `per_user`: as
    kvfit.planner.layouts.judged takes them)."""
    from ..engines.pp_split import SPLIT_RULE, stages  # --pp only: a plain plan never splits stages
    from ..model.layout import Pipeline

    group = tp * pp
    dp = topo.gpus // group
    rules = m.capacity.rules if m.capacity.engine else None
    rule = rules.values.get("pp_split") if rules is not None else None     # engine spec rules
    split = stages(comps, m.n_layers, pp, m.weights, m.edge, partition,
                   rule["value"] if rule else "spread_before_last")
    from ..engines import REFERENCE, get

    eng = m.capacity.eng if m.capacity.engine else get(REFERENCE)   # the static bound: vLLM's
    env = None
    if partition is not None:       # the engine's variable for a user's layer partition
        env = (rules if rules is not None else eng.rules()).values.get("pp_partition_env")
        env = env["value"] if env else "its layer-partition variable"
    rows = tuple(_stage_row(st, tp, budget, extra) for st in split)
    bind = binding(rows)
    pipeline = Pipeline(
        stages=rows, binding_stage=bind.stage,
        split_rule=(f"engine rule {rule['source']}" if rule else SPLIT_RULE)
        if partition is None else f"user: --pp-layer-partition {partition} ({eng.title} {env})",
        weights_basis=m.edge.basis + (eng.pp_weights_note if m.names.get("mtp") else "")
        + ("; the replicated rows (weights.replicated_detail) on the stage of their layer, "
           "whole on each of its ranks" if m.weights.replicated else ""),
        note="per_rank is the binding stage's: the replica admits what its fullest stage "
             f"admits ({eng.pp_binding_note})")
    head = {"id": f"tp{tp}pp{pp}", "parallelism": "tp", "label": f"TP={tp} x PP={pp} x DP={dp}",
            "tp": tp, "pp": pp, "dp": dp, "group_gpus": group, **placement(group, topo),
            "pipeline": pipeline}
    out = judged(head, bind.weights_bytes, bind.state_bytes_per_sequence, budget, invalid,
                 required, dp, more=more, per_user=per_user)
    if out.valid and out.reason and pp > 1 and out.max_sequences is not None:
        out = replace(out, reason=out.reason + f" (stage {bind.stage} of {pp} binds)")
    return out


def dcp_size(req) -> int:
    """vLLM's --decode-context-parallel-size of the request (1 without it), validated."""
    dcp = (req.engine_flags or {}).get("decode_context_parallel_size")
    if dcp is None:
        return 1
    if isinstance(dcp, bool) or not isinstance(dcp, int) or dcp < 1:
        raise UsageError(f"--decode-context-parallel-size {dcp!r} must be a whole number >= 1.")
    return dcp


def dcp_problems(req, tp: int, comps) -> list[str]:
    """Why vLLM refuses this DCP size at TP=`tp` (empty when it starts): DCP reuses the TP
    ranks, so it divides TP (vllm/config/parallel.py:594-600); with GQA/MQA it needs TP above
    the KV heads and at most TP // KV heads ranks (vllm/config/model.py:1578-1598)."""
    dcp = dcp_size(req)
    if dcp == 1:
        return []
    out = []
    if tp % dcp:
        out.append(f"TP={tp} is not divisible by --decode-context-parallel-size {dcp} (vLLM "
                   "config/parallel.py:594-600: DCP reuses the TP ranks)")
    heads = [c.heads for c in comps if c.kind == "full" and c.heads]
    if heads and not any(c.kind == "latent" for c in comps):
        h = max(heads)
        if tp <= h or dcp > tp // h:
            out.append(f"--decode-context-parallel-size {dcp} with {h} KV heads needs TP > {h} "
                       f"and DCP <= TP // {h} (vLLM config/model.py:1578-1598)")
    return out


def dcp_components(comps, dcp: int) -> list:
    """The state one rank keeps under DCP: every full-attention and latent layer's tokens are
    split over the DCP ranks (ceil(len / dcp) per rank, vllm/v1/kv_cache_interface.py:643-648);
    other state is unchanged."""
    if dcp == 1:
        return comps
    out = []
    for c in comps:
        if c.kind in ("full", "latent"):
            entries = -(-c.entries_per_layer // dcp)
            c = replace(c, entries_per_layer=entries,
                        bytes_per_sequence=c.layers * entries * c.bytes_per_entry)
        out.append(c)
    return out
