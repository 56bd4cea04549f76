"""Plan integration: add an `engine` section to each layout of a plan report, the launch
command for the recommended layout, and a short text rendering of both.

The plan's own state uses kvfit's dtype names; the engine section re-evaluates the state in
the engine's KV dtype and layout (`--kv-cache-dtype`, default auto as the engine reads it).
"""

from __future__ import annotations

from ..hardware import find_accelerator
from . import predict_inputs, print_command, resolve_version
from .command import engine_spelling
from .common import GIB, MIB, Inputs
from .spec import rules_for
from .state import engine_state


def _inputs(report: dict, st, lay: dict, ctx: int, overrides: dict) -> Inputs:
    hw = report["hardware"]
    acc = find_accelerator(hw["id"])
    total = acc.cuda_total_mib * MIB if acc.cuda_total_mib else None
    source = (report.get("weights") or {}).get("source")
    return Inputs(st.components, lay["tp"], ctx, lay["per_rank"].get("weights_bytes"),
                  hw["memory_bytes_per_gpu"], weights_basis=f"plan: {source} / TP",
                  weights_packed=source in ("checkpoint files", "safetensors index"),
                  total_bytes=total, total_basis=f"hardware spec {acc.id}: CUDA total"
                  if total else None, quant=st.quant, vocab=st.vocab, overrides=overrides,
                  max_context=st.max_context, device=acc.id)


def annotate(report: dict, meta, opts: dict, mtp: bool = False, kv_dtype: str = "auto") -> None:
    """Add layouts[i]["engine"] (and report["engine_command"]) in place.

    opts: the dict from kvfit.engines.pop_engine_args (engine, version, flags, overrides,
    print_command). meta: the plan's Metadata. kv_dtype: the plan's --kv-dtype (kvfit name);
    when it is not auto and --kv-cache-dtype is absent, it is passed in the engine's spelling.
    """
    engine = opts.get("engine") or opts.get("print_command")
    if not engine:
        return
    version, _ = resolve_version(engine, opts.get("version"))
    rules = rules_for(engine, version)
    flags = dict(opts.get("flags") or {})
    if kv_dtype and kv_dtype != "auto" and "kv_cache_dtype" not in flags:
        flags["kv_cache_dtype"] = engine_spelling(rules, kv_dtype)
    ctx = int(flags.get("max_model_len") or report["context_tokens"])
    st = engine_state(meta, rules, flags.get("kv_cache_dtype"), ctx, mtp,
                      model_dtype=flags.get("dtype"))
    if opts.get("engine") and report.get("hardware"):
        for lay in report.get("layouts", []):
            f = dict(flags)
            if lay.get("parallelism") == "sglang-dpa" and lay.get("attention_dp"):
                f.setdefault("attn_dp_size", lay["attention_dp"])
            lay["engine"] = predict_inputs(engine, version, f, _inputs(report, st, lay, ctx,
                                                                        opts.get("overrides") or {}))
    rec = report.get("recommended")
    if opts.get("print_command"):
        tp, dp = (rec["tp"], rec["dp"]) if rec else (1, 1)
        model = (report.get("model") or {}).get("source") or "MODEL"
        report["engine_command"] = print_command(opts["print_command"], opts.get("version"),
                                                 model, tp, dp, ctx, flags.get("kv_cache_dtype"),
                                                 flags)


def _pool_line(e: dict) -> list[str]:
    """Blocks, per-request demand and why concurrency differs from tokens / max_model_len."""
    keys = ("num_gpu_blocks", "block_size", "blocks_per_request", "attention_token_capacity",
            "capacity_over_len", "max_concurrency")
    vals = {k: (e.get(k) or {}).get("value") if isinstance(e.get(k), dict) else None
            for k in keys}
    if any(vals[k] is None for k in keys):
        return []
    reserve = [f"  {g['components']}: {g['blocks']} blocks per request = {g['rule']}"
               for g in e.get("request_blocks_by_group") or () if g.get("family") == "sliding"]
    return reserve + [f"  pool: {vals['num_gpu_blocks']:,} blocks x {vals['block_size']} tokens = "
            f"{vals['attention_token_capacity']:,} tokens per attention layer "
            f"({vals['capacity_over_len']:.2f} x max_model_len); one request pins "
            f"{vals['blocks_per_request']} blocks across its groups -> concurrency "
            f"{vals['max_concurrency']:.2f}x"]


def render_text(report: dict) -> str:
    """Text lines for the engine sections and the command (empty when there are none)."""
    out = []
    for lay in report.get("layouts", []):
        e = lay.get("engine")
        if not e:
            continue
        out.append(f"engine {e['engine']} {e['version']} ({e['version_basis']}), "
                   f"{lay.get('label', lay['tp'])}:")
        out += [f"  {line}" for line in e.get("log_lines", [])]
        for key, label in (("mem_fraction_static", "mem_fraction_static"),
                           ("max_running_requests", "max_running_requests"),
                           ("mamba_cache_size", "recurrent state slots")):
            if isinstance(e.get(key), dict) and e[key]["value"] is not None:
                out.append(f"  {label}: {e[key]['value']} ({e[key]['basis']})")
        if e.get("hybrid"):
            out.append(f"  {e['hybrid']['log_line']}; recurrent page padded by "
                       f"{e['hybrid']['recurrent_padding_percent']['value']}%")
        out += _pool_line(e)
        mem = e.get("memory") or {}
        for key in ("weights_bytes", "activation_peak_bytes", "non_torch_bytes", "cudagraph_bytes"):
            if key in mem and mem[key]["value"] is not None:
                out.append(f"  {key.replace('_bytes', '').replace('_', ' ')}: "
                           f"{mem[key]['value'] / GIB:.2f} GiB ({mem[key]['basis']})")
        out += [f"  warning: {w}" for w in e.get("warnings", [])]
        if e.get("refusal"):
            out.append(f"  REFUSES TO START: {e['refusal']['reason']} [{e['refusal']['rule']}]")
    cmd = report.get("engine_command")
    if cmd:
        out += [f"launch ({cmd['engine']} {cmd['version']}, {cmd['version_basis']}): {cmd['launch']}",
                f"benchmark: {cmd['bench']}"]
    return "\n".join(out) + ("\n" if out else "")
