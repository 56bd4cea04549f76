"""Text lines for the engine sections of a plan report and its launch command.

Renderers never compute: every number below is read from the report.
"""

from __future__ import annotations

from collections.abc import Mapping

from .model import EngineCommand, Report
from .words import count, gib, number


def _pool_line(e: Mapping) -> list[str]:
    """Blocks, per-request demand and why concurrency differs from tokens / max_model_len."""
    keys = ("num_gpu_blocks", "block_size", "blocks_per_request", "attention_token_capacity",
            "capacity_over_len", "max_concurrency")
    vals = {k: (e.get(k) or {}).get("value") if isinstance(e.get(k), Mapping) else None
            for k in keys}
    if any(vals[k] is None for k in keys):
        return []
    reserve = [f"  {g['components']}: {count(g['blocks'], 'block')} per request = {g['rule']}"
               for g in e.get("request_blocks_by_group") or () if g.get("family") == "sliding"]
    return reserve + [f"  pool: {count(vals['num_gpu_blocks'], 'block')} x "
                      f"{count(vals['block_size'], 'token')} = "
                      f"{count(vals['attention_token_capacity'], 'token')} per attention layer "
                      f"({vals['capacity_over_len']:.2f} x max_model_len); one request pins "
                      f"{count(vals['blocks_per_request'], 'block')} across its groups -> "
                      f"concurrency {vals['max_concurrency']:.2f}x"]


def render_text(report: Report, verbose: bool = True) -> str:
    """Text lines for the engine sections and the command (empty when there are none); unless
    `verbose`, only the recommended layout's engine section."""
    out, chosen = [], report.chosen
    for lay in report.layouts:
        if lay.engine and (verbose or lay is chosen):
            out += _engine_lines(lay.engine, lay.label)
    cmd = report.engine_command
    if cmd:
        out += _command(cmd)
    return "\n".join(out) + ("\n" if out else "")


def _engine_lines(e: Mapping, layout: str) -> list[str]:
    """One layout's engine section (the engine's own numbers: an open mapping of them)."""
    out = [f"engine {e['engine']} {e['version']} ({e['version_basis']}), {layout}:"]
    out += [f"  {line}" for line in e.get("log_lines", [])]
    for key, label in (("mem_fraction_static", "mem_fraction_static"),
                       ("max_running_requests", "max_running_requests"),
                       ("mamba_cache_size", "recurrent state slots")):
        if isinstance(e.get(key), Mapping) and e[key]["value"] is not None:
            out.append(f"  {label}: {number(e[key]['value'])} ({e[key]['basis']})")
    if e.get("hybrid"):
        h = e["hybrid"]
        out.append(f"  {h['log_line']}; recurrent page padded by "
                   f"{h['recurrent_padding_percent']['value']}% (per rank: attention "
                   f"{number(h['attention_page_bytes_per_token']['value'])} B per token, "
                   f"recurrent state {number(h['recurrent_page_bytes']['value'])} B -> "
                   f"{number(h['recurrent_page_padded_bytes']['value'])} B)")
    out += _pool_line(e)
    mem = e.get("memory") or {}
    for key in ("weights_bytes", "activation_peak_bytes", "non_torch_bytes", "cudagraph_bytes"):
        if key in mem and mem[key]["value"] is not None:
            out.append(f"  {key.replace('_bytes', '').replace('_', ' ')}: "
                       f"{gib(mem[key]['value'], 2)} ({mem[key]['basis']})")
    reg = mem.get("fitted_regime")
    if reg and not reg["inside"]:
        out.append(f"  non-KV estimates: {reg['note']}")
    if e.get("pipeline_stages"):
        ps = e["pipeline_stages"]
        out.append("  pipeline stages: " + "; ".join(
            f"stage {s['stage']} layers {s['layers'][0]}-{s['layers'][1] - 1}: "
            + (f"{number(s['num_gpu_blocks'])} blocks" if "num_gpu_blocks" in s else
               f"{number(s['max_total_num_tokens'])} tokens") for s in ps["value"]) +
            f" -> stage {ps['binding_stage']} binds ({ps['basis']})")
    out += [f"  warning: {w}" for w in e.get("warnings", [])]
    if e.get("refusal"):
        out.append(f"  REFUSES TO START: {e['refusal']['reason']} [{e['refusal']['rule']}]")
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
