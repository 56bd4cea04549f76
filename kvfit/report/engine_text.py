"""Text lines for the engine sections of a plan report and its launch command.

Renderers never compute: every number below is read from the report.
"""

from __future__ import annotations

from ..model.base import ABSENT
from ..model.engine import EngineCommand, EnginePrediction, Quantity
from ..model.plan import Report
from .words import brief, count, gib, number


def _v(q):
    """The value of one of the prediction's numbers (None when it has none)."""
    v = q.value if isinstance(q, Quantity) else None
    return None if v is ABSENT else v


def _pool_line(e: EnginePrediction) -> list[str]:
    """Blocks, per-request demand and why concurrency differs from tokens / max_model_len."""
    blocks, size, per_request, tokens, over_len, conc = vals = (
        _v(e.num_gpu_blocks), _v(e.block_size), _v(e.blocks_per_request),
        _v(e.attention_token_capacity), _v(e.capacity_over_len), _v(e.max_concurrency))
    if any(v is None for v in vals):
        return []
    sliding = [(g.components, g.blocks, g.rule)
               for g in e.request_blocks_by_group or () if g.family == "sliding"]
    reserve = []
    for key in dict.fromkeys(sliding):     # groups alike (one kind split in groups) say it once
        components, blocks, rule = key
        n = sliding.count(key)
        each = f" ({n} groups, each)" if n > 1 else ""
        reserve.append(f"  {components}{each}: {count(blocks, 'block')} per request = {rule}")
    return reserve + [f"  pool: {count(blocks, 'block')} x {count(size, 'token')} = "
                      f"{count(tokens, 'token')} per attention layer "
                      f"({over_len:.2f} x max_model_len); one request pins "
                      f"{count(per_request, 'block')} across its groups -> "
                      f"concurrency {conc:.2f}x"]


def render_text(report: Report, verbose: bool = True) -> str:
    """Text lines for the engine sections and the command (empty when there are none); unless
    `verbose`, only the recommended layout's engine section."""
    out, chosen = [], report.chosen
    for lay in report.layouts:
        if lay.engine and (verbose or lay is chosen):
            out += _engine_lines(lay.engine, lay.label, verbose)
    cmd = report.engine_command
    if cmd:
        out += _command(cmd)
    return "\n".join(out) + ("\n" if out else "")


def _engine_lines(e: EnginePrediction, layout: str, verbose: bool = True) -> list[str]:
    """One layout's engine section."""
    out = [f"engine {e.engine} {e.version} ({e.version_basis}), {layout}:"]
    out += [f"  {line}" for line in e.log_lines or ()]
    for q, label in ((e.mem_fraction_static, "mem_fraction_static"),
                     (e.max_running_requests, "max_running_requests"),
                     (e.mamba_cache_size, "recurrent state slots")):
        if _v(q) is not None:
            out.append(f"  {label}: {number(q.value)} ({q.basis})")
    if e.hybrid:
        h = e.hybrid
        out.append(f"  {h.log_line}; recurrent page padded by "
                   f"{h.recurrent_padding_percent.value}% (per rank: attention "
                   f"{number(h.attention_page_bytes_per_token.value)} B per token, "
                   f"recurrent state {number(h.recurrent_page_bytes.value)} B -> "
                   f"{number(h.recurrent_page_padded_bytes.value)} B)")
    out += _pool_line(e)
    mem = e.memory
    if mem:
        for q, name in ((mem.weights_bytes, "weights"), (mem.activation_peak_bytes,
                        "activation peak"), (mem.non_torch_bytes, "non torch"),
                        (mem.cudagraph_bytes, "cudagraph")):
            if _v(q) is not None:
                basis = q.basis if verbose else brief(q.basis, "--verbose shows the whole basis")
                out.append(f"  {name}: {gib(q.value, 2)} ({basis})")
        if mem.fitted_regime and not mem.fitted_regime.inside:
            out.append(f"  non-KV estimates: {mem.fitted_regime.note}")
    if e.pipeline_stages:
        ps = e.pipeline_stages
        out.append("  pipeline stages: " + "; ".join(
            f"stage {s.stage} layers {s.layers[0]}-{s.layers[1] - 1}: "
            + (f"{number(s.num_gpu_blocks)} blocks" if s.num_gpu_blocks is not ABSENT else
               f"{number(s.max_total_num_tokens)} tokens") for s in ps.value) +
            f" -> stage {ps.binding_stage} binds ({ps.basis})")
    out += [f"  warning: {w}" for w in e.warnings or ()]
    if e.refusal:
        out.append(f"  REFUSES TO START: {e.refusal.reason} [{e.refusal.rule}]")
    return out


def _command(cmd: EngineCommand) -> list[str]:
    if not cmd.launch:
        return [f"launch ({cmd.engine}): none; " + "; ".join(cmd.notes or [])]
    out = [f"launch {cmd.layout or ''} ({cmd.engine} {cmd.version}, "
           f"{cmd.version_basis}):"]
    if cmd.hosts:
        out += [f"  host {h.host}: {h.launch}" for h in cmd.hosts]
    else:
        out.append(f"  {cmd.launch}")
    out += [f"  note: {n}" for n in cmd.notes or ()]
    return out + [f"benchmark: {cmd.bench}"]
