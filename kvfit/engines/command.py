"""`--print-command`: the launch command for a layout, in the engine version's spelling."""

from __future__ import annotations

import shlex

from ..errors import UsageError
from .spec import rules_for


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


def print_command(engine: str, version: str | None, model: str, tp: int, dp: int,
                  context: int, kv_dtype: str | None = None, flags: dict | None = None,
                  port: int = 8000) -> dict:
    """{"launch": ..., "bench": ..., "version": ..., "version_basis": ...} for one layout.

    version None: the installed version, else the spec's newest range. kv_dtype: a kvfit
    dtype name (bf16, fp8, ...) translated to the engine's spelling, or an engine spelling.
    """
    from . import resolve_version

    chosen, how = resolve_version(engine, version)
    rules = rules_for(engine, chosen)
    spellings = {e["spelling"] for e in rules.dtypes}
    kv = kv_dtype if kv_dtype in spellings else engine_spelling(rules, kv_dtype)
    extra = dict(flags or {})
    if engine == "sglang" and dp > 1 and "attn_dp_size" not in extra:
        extra["dp_size"] = dp
    fill = {"model": shlex.quote(model), "tp": tp, "dp": dp, "context": context,
            "kv_dtype": kv, "port": port, "flags": _flag_text(rules, extra),
            "concurrency": "{concurrency}", "input_tokens": max(1, context - 256),
            "output_tokens": 256, "num_prompts": "{num_prompts}"}
    cmds = rules.commands
    return {"engine": engine, "version": rules.version, "version_basis": how,
            "launch": cmds["launch"].format(**fill), "bench": cmds["bench"].format(**fill),
            "source": cmds.get("source")}
