"""`--print-command`: the launch command of exactly the layout the plan recommends.

Everything comes from the plan: the recommended layout (TP, DP, attention-DP, EP), the
memory setting the engine states (kvfit.engines.base.Engine.launch_memory: vLLM's resolved
utilization; SGLang's memory fraction when the user stated --utilization or
--mem-fraction-static), the KV-cache dtype the engine was given,
the planned context, the checkpoint revision, MTP with --mtp, and a stated RoPE scaling as the
engine's config override (vLLM --hf-overrides, SGLang --json-model-override-args; see
kvfit.planner.rope for why max_position_embeddings goes with it).
"""

from __future__ import annotations

from ..engines.command import Launch
from ..model.engine import EngineCommand
from ..model.plan import Report
from .assemble import build


def mtp_tokens(req, fields: dict) -> int:
    """Speculative tokens per step under --mtp: the user's --num-speculative-tokens, else the
    checkpoint's declared MTP depth (nextn), else 1. The engine prediction and the launch
    command both use this one number."""
    if not req.mtp:
        return 0
    given = req.engine_flags.get("num_speculative_tokens")
    if given:
        return int(given)
    nextn = fields.get("nextn")
    value = getattr(nextn, "value", None)
    return int(value) if isinstance(value, int) and value > 0 else 1


def _index_dtype(req, m, eng) -> str | None:
    """The engine's indexer cache dtype when the user chose --index-dtype for a sparse-indexer
    model (vLLM's indexer_kv_dtype), else None."""
    name = dict(m.cache_dtypes).get("index")      # as the plan resolved it (fp4 included)
    if req.index_dtype == "auto" or name is None:
        return None
    return eng.index_spelling(name)


def _hosts(hw) -> int:
    if not hw.system:
        return 1
    from ..hardware.presets import find_system
    return hw.nodes * find_system(hw.system).hosts


def launch_command(req, m, report: Report) -> EngineCommand:
    """The report's `engine_command` for its recommended layout (with `launch` None and a
    note when there is no recommended layout)."""
    lay = report.chosen
    engine = req.print_command
    cap = m.capacity
    if lay is None:
        return EngineCommand(engine=engine, version=cap.version, version_basis=cap.version_basis,
                             launch=None, hosts=(), bench=None, source=None,
                             notes=("no recommended layout to launch (see the verdict: no "
                                    "layout is valid, or the weights are unknown)",))
    from ..engines import get

    eng = get(engine)
    flags = dict(cap.flags)
    kv = flags.pop("kv_cache_dtype", None) or eng.kv_spelling(cap.rules, None)
    util, mfs = eng.launch_memory(flags, cap.utilization is not None,
                                  report.hardware.utilization,
                                  lay.engine)
    if flags.get("dtype") in (None, "auto"):
        flags.pop("dtype", None)
    # a local checkpoint is served from the path the user gave, not its folder name
    model = req.model if report.model.origin == "local" and req.model else report.model.source
    spec = Launch(model=model, context=report.context_tokens,
                  kv_dtype=kv, revision=report.model.revision or req.revision,
                  parallelism=lay.parallelism, tp=lay.tp, pp=lay.pp or 1,
                  pp_partition=req.pp_layer_partition, dp=lay.dp,
                  attention_dp=lay.attention_dp or None, attention_tp=lay.attention_tp or None,
                  hosts=_hosts(report.hardware), utilization=util, mem_fraction=mfs,
                  mtp=mtp_tokens(req, m.fields), index_dtype=_index_dtype(req, m, eng),
                  rope_override=m.rope.override() if m.rope is not None else None, flags=flags)
    return build(EngineCommand, eng.launch(req.engine_version, spec)
                 | {"layout": lay.label, "layout_id": lay.id})
