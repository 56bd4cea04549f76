"""Launch commands in an engine version's own spelling, from a typed description of a layout.

The spellings are data (specs/engines/<engine>.yaml `commands`: the launch template, the
`layout_flags` pieces and the `flags` map); this module only decides which pieces a layout
needs and, when it spans hosts, what each host runs.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace

from ..errors import UsageError


@dataclass(frozen=True, slots=True)
class Launch:
    """One deployment to start: the model, its layout, and the knobs the plan resolved.

    parallelism: "tp", "sglang-dpa" or "vllm-dp-ep"; tp: model-group size (TP, or the EP group
    under attention-DP); dp: replicas (or model groups); attention_dp / attention_tp: the
    attention-DP split; hosts: hosts the deployment spans; utilization: vLLM's
    --gpu-memory-utilization; mem_fraction: SGLang's --mem-fraction-static (None: omitted);
    pp / pp_partition: pipeline stages and the engine's layer partition (rule pp_partition_env,
      VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION; None: even split);
    mtp: speculative (MTP) tokens per step (0: none); index_dtype: the sparse-indexer cache
    dtype in the engine's spelling (None: the engine's default); rope_override: the config
    override JSON for a stated RoPE scaling (kvfit.planner.rope); flags: further engine flags.
    """

    model: str
    context: int
    kv_dtype: str | None = None
    revision: str | None = None
    parallelism: str = "tp"
    tp: int = 1
    pp: int = 1
    pp_partition: str | None = None
    dp: int = 1
    attention_dp: int | None = None
    attention_tp: int | None = None
    hosts: int = 1
    utilization: float | None = None
    mem_fraction: float | None = None
    mtp: int = 0
    index_dtype: str | None = None
    rope_override: str | None = None
    flags: dict = field(default_factory=dict)
    port: int = 8000


def engine_spelling(rules, kvfit_dtype: str | None) -> str:
    """The engine's --kv-cache-dtype spelling for a kvfit dtype name (auto when None).

    SGLang has no bare fp8: kvfit's fp8 becomes fp8_e4m3 there (engines.md §3)."""
    if not kvfit_dtype or kvfit_dtype == "auto":
        return "auto"
    for name in (kvfit_dtype, "fp8_e4m3" if kvfit_dtype == "fp8" else None):
        for e in rules.dtypes:
            if name and e["kvfit"] == name:
                return e["spelling"]
    known = ", ".join(e["spelling"] for e in rules.dtypes)
    raise UsageError(f"KV dtype {kvfit_dtype!r} has no {rules.engine} --kv-cache-dtype spelling.",
                     hint=f"{rules.engine} {rules.version} accepts: {known}.")


def _flag_text(rules, flags: dict) -> str:
    spell = rules.commands.get("flags", {})
    parts = []
    for key, value in sorted(flags.items()):
        if key not in spell or value is None or key == "kv_cache_dtype":
            continue
        flag = spell[key]
        if value is False:
            if flag.startswith("--enable-"):
                parts.append("--no-" + flag[2:])
        elif "{n}" in flag:
            parts.append(flag.replace("{n}", str(value)))
        elif value is True:
            parts.append(flag)
        else:
            parts.append(f"{flag} {value}")
    return "".join(f" {p}" for p in parts)


def _pieces(rules, spec: Launch, fill: dict) -> str:
    """The layout and knob flags this deployment needs, in the spec's spelling."""
    pieces = rules.commands.get("layout_flags", {})
    names = [spec.parallelism if spec.parallelism in pieces else "tp"]
    if spec.parallelism == "tp" and spec.dp > 1 and "dp" in pieces:
        names.append("dp")
    if spec.pp > 1 and "pp" in pieces:
        names.append("pp")
    names += [n for n, on in (("revision", spec.revision), ("utilization",
              spec.utilization is not None), ("mem_fraction", spec.mem_fraction is not None),
              ("mtp", spec.mtp > 0), ("index_dtype", spec.index_dtype),
              ("rope_scaling", spec.rope_override)) if on and n in pieces]
    return "".join(" " + pieces[n].format(**fill) for n in names)


def _hosts(rules, spec: Launch, fill: dict, one: str) -> tuple[list[dict], list[str]]:
    """What each host runs when the deployment spans several hosts."""
    cmds, pieces = rules.commands, rules.commands.get("layout_flags", {})
    per_host = spec.tp * spec.pp * spec.dp // spec.hosts
    wide = spec.tp * spec.pp > per_host
    node = pieces.get("nodes")
    if cmds.get("multinode") == "global" or wide:
        if node is None:
            return [], [f"{rules.engine} {rules.version}: kvfit has no multi-node spelling for "
                        f"a deployment over {spec.hosts} hosts"]
        hosts = [{"host": r, "launch": one + " " + node.format(**(fill | {"node_rank": r}))
                  + (" " + pieces["headless"] if r and "headless" in pieces else "")}
                 for r in range(spec.hosts)]
        return hosts, [f"one deployment over {spec.hosts} hosts ({per_host} GPUs each): run "
                       "each host's command, HEAD_IP being host 0's address"]
    local = max(1, spec.dp // spec.hosts)
    cmd = cmds["launch"].format(**(fill | {"dp": local, "layout": _pieces(
        rules, replace(spec, dp=local), fill | {"dp": local})}))
    return ([{"host": r, "launch": cmd} for r in range(spec.hosts)],
            [f"{_replicas(spec.dp)} over {spec.hosts} hosts: each host runs its own server "
             f"with {_replicas(local)}; put a router in front"])


def _replicas(n: int) -> str:
    """'1 replica', '16 replicas' (a command's note, written here below kvfit.report)."""
    return f"{n:,} replica" + ("" if n == 1 else "s")


def launch(engine: str, version: str | None, spec: Launch) -> dict:
    """{"launch", "hosts", "bench", "version", "version_basis", "source", "notes"}.

    hosts: one {"host", "launch"} per host when the deployment spans several (the engine
    spec's `multinode` rule says whether it is one deployment with multi-node flags, or one
    server per host for replicas that fit a host)."""
    from .registry import resolve_rules

    rules, how = resolve_rules(engine, version)
    spellings = {e["spelling"] for e in rules.dtypes}
    kv = spec.kv_dtype if spec.kv_dtype in spellings else engine_spelling(rules, spec.kv_dtype)
    fill = {"model": shlex.quote(spec.model), "tp": spec.tp, "pp": spec.pp, "dp": spec.dp,
            "context": spec.context, "kv_dtype": kv, "port": spec.port,
            "attention_dp": spec.attention_dp, "attention_tp": spec.attention_tp, "ep": spec.tp,
            "revision": spec.revision, "utilization": f"{spec.utilization:g}" if
            spec.utilization is not None else None, "mem_fraction": spec.mem_fraction,
            "mtp": spec.mtp, "mtp_draft": spec.mtp + 1, "index_dtype": spec.index_dtype,
            "rope_override": shlex.quote(spec.rope_override or ""),
            "concurrency": "{concurrency}", "input_tokens": max(1, spec.context - 256),
            "output_tokens": 256, "num_prompts": "{num_prompts}", "nnodes": spec.hosts,
            "node_rank": 0, "head": "HEAD_IP"}
    fill["layout"] = _pieces(rules, spec, fill)
    fill["flags"] = _flag_text(rules, spec.flags)
    cmds = rules.commands
    one = cmds["launch"].format(**fill)
    env = rules.values.get("pp_partition_env")
    if spec.pp > 1 and spec.pp_partition and env:      # the engine's layer-partition variable
        one = f"{env['value']}={shlex.quote(spec.pp_partition)} {one}"
    if spec.pp > 1 and "pp" not in cmds.get("layout_flags", {}):
        notes_pp = [f"{rules.engine} {rules.version}: kvfit has no pipeline-parallel spelling"]
    else:
        notes_pp = []
    hosts, notes = _hosts(rules, spec, fill, one) if spec.hosts > 1 else ([], [])
    notes += notes_pp
    note = cmds.get("layout_notes", {}).get(spec.parallelism)
    if note:
        notes.append(note.format(**fill))
    if spec.rope_override and "rope_scaling" not in cmds.get("layout_flags", {}):
        notes.append(f"{rules.engine} {rules.version}: kvfit has no checked spelling for the "
                     f"stated RoPE scaling; pass {spec.rope_override} as this version's config "
                     "override")
    return {"engine": engine, "version": rules.version, "version_basis": how, "launch": one,
            "hosts": hosts, "notes": notes, "bench": cmds["bench"].format(**fill),
            "source": cmds.get("source")}


def print_command(engine: str, version: str | None, model: str, tp: int, dp: int,
                  context: int, kv_dtype: str | None = None, flags: dict | None = None,
                  port: int = 8000) -> dict:
    """The launch command of a plain TP x DP deployment on one host (kvfit calibrate).

    version None: the installed version, else the spec's newest range. kv_dtype: a kvfit
    dtype name (bf16, fp8, ...) or an engine spelling."""
    extra = dict(flags or {})
    util = extra.pop("gpu_memory_utilization", None)
    mfs = extra.pop("mem_fraction_static", None)
    return launch(engine, version, Launch(model, context, kv_dtype, tp=tp, dp=dp,
                                          utilization=util, mem_fraction=mfs, flags=extra,
                                          port=port))
