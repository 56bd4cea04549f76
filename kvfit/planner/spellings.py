"""Engine spellings -> one request field per knob, and which engine answers.

`--utilization` = vLLM `--gpu-memory-utilization`; `--kv-dtype` = `--kv-cache-dtype`;
`--context` = `--max-model-len` = `--context-length`; `--tp` = `--tensor-parallel-size` =
`--tp-size`; DP, attention-DP and EP likewise. Two spellings of one knob with different values
exit 2 naming both. An engine-only flag (`--max-num-seqs`, `--mem-fraction-static`, ...) without
`--engine` selects that engine at its default version, and the report says so; flags of both
engines, or a flag of the other engine than `--engine` names, exit 2. `--print-command X`
without `--engine` selects X, so the command and the capacity come from one model.
"""

from __future__ import annotations

import json

from ..engines.cli_args import _FLAGS, ALIASES, layout_aliases
from ..errors import UsageError
from .context import parse_context

_ENGINE_OF = {f[0][2:].replace("-", "_"): f[2] for f in _FLAGS}
_ALIAS = {a[0][2:].replace("-", "_"): a for a in ALIASES}


def _title(engine: str) -> str:
    from ..engines import get
    return get(engine).title


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _same_kv(a: str, b: str) -> bool:
    fp8 = {"fp8", "fp8_e4m3"}
    return a == b or {a, b} <= fp8


def kv_name(spelling: str, engine: str | None) -> tuple[str, str, bool]:
    """(kvfit dtype name, engine that owns the spelling, True for a packed-layout spelling)
    for an engine --kv-cache-dtype."""
    from ..engines import names
    from ..engines.spec import rules_for

    for eng in ([engine] if engine else names()):
        rules = rules_for(eng, None)
        for e in rules.dtypes:
            if e["spelling"] == spelling:
                layout = e["kvfit"] == "layout"
                return ("fp8" if layout else e["kvfit"]), eng, layout
    raise UsageError(f"--kv-cache-dtype {spelling!r} is not an engine KV-cache dtype spelling"
                     + (f" of {_title(engine)}." if engine else "."),
                     hint="Use --kv-dtype with a kvfit name (auto, bf16, fp8, ...) or an "
                          "engine's spelling (vLLM: bfloat16, fp8, fp8_ds_mla; SGLang: "
                          "fp8_e4m3, ...).")


class _Knobs:
    """Collects (spelling, value) per knob and refuses two different values."""

    def __init__(self, ns: dict):
        self.ns, self.given = ns, {}

    def put(self, knob: str, spelling: str, value, same=lambda a, b: a == b):
        if knob in self.given and not same(self.given[knob][1], value):
            first, v = self.given[knob]
            v, value = (json.dumps(x) if isinstance(x, dict) else x for x in (v, value))
            raise UsageError(f"{first} {v} and {spelling} {value} set the same knob to different "
                             "values.", hint="Give one of them (they are spellings of one "
                             "setting).")
        self.given.setdefault(knob, (spelling, value))


def resolve(ns: dict) -> dict:
    """Pop engine options and alias spellings from parsed flags `ns`; return request values.

    ns keeps only kvfit's own flags afterwards; the result holds the knobs the aliases set and
    engine, engine_version, engine_flags, engine_overrides, print_command, engine_selected_by.
    """
    from ..engines import pop_engine_args

    aliases = {d: ns.pop(d) for d in list(ns) if d in _ALIAS}
    used = [d for d in _ENGINE_OF if d in ns]
    opts = pop_engine_args(ns)
    out: dict = {}
    engine = _choose_engine(opts, used, aliases, out)
    k = _Knobs(ns)
    for knob, flag in (("utilization", "--utilization"), ("kv_dtype", "--kv-dtype"),
                       ("context", "--context"), ("tp", "--tp"), ("pp", "--pp"), ("parallelism",
                                                                  "--parallelism")):
        if knob in ns:
            value = ns[knob]
            if knob == "context":
                value = parse_context(value)
            if knob == "tp" and value == "auto":
                continue
            if knob == "tp":
                from ..planner.request import normalize_tp
                value = normalize_tp({"tp": value})["tp"]
            k.put(knob, flag, value)
    flags = dict(opts["flags"])
    if "gpu_memory_utilization" in aliases:
        k.put("utilization", "--gpu-memory-utilization", aliases["gpu_memory_utilization"])
    if "kv_cache_dtype" in aliases:
        spelling = aliases["kv_cache_dtype"]
        name, owner, packed = kv_name(spelling, engine)
        if packed and engine is None:   # a packed row exists only in that engine's layout
            engine = _select(out, owner, f"--kv-cache-dtype {spelling} (a {_title(owner)} "
                             "storage layout)")
        k.put("kv_dtype", "--kv-cache-dtype", name, _same_kv)
        flags["kv_cache_dtype"] = spelling
    for dest in ("max_model_len", "context_length"):
        if dest in aliases:
            k.put("context", _flag(dest), int(aliases[dest]))
    layout_aliases(aliases, k.put)
    _rope(ns, aliases, k, out)
    for knob, (_, value) in k.given.items():
        if knob not in ns:          # kvfit's own flag already carries its value (as typed)
            out[knob] = value
    if flags.get("num_speculative_tokens") and not ns.get("mtp"):
        out["mtp"] = True     # the checkpoint's MTP draft: the one speculative method planned
    out |= {"engine": engine, "engine_version": opts["version"], "engine_flags": flags,
            "engine_overrides": opts["overrides"], "print_command": opts["print_command"]}
    return out


def _rope(ns: dict, aliases: dict, k: _Knobs, out: dict) -> None:
    """--rope-scaling = vLLM --hf-overrides rope_scaling = SGLang --json-model-override-args."""
    if "rope_scaling" in ns:
        from .rope import parse_rope
        k.put("rope_scaling", "--rope-scaling", parse_rope(ns.pop("rope_scaling")))
    for dest in ("hf_overrides", "json_model_override_args"):
        if dest in aliases:
            from .rope import from_overrides
            k.put("rope_scaling", _flag(dest), from_overrides(aliases[dest], _flag(dest)))
    if "rope_scaling" in k.given:
        spelling, out["rope_scaling"] = k.given["rope_scaling"]
        out["rope_scaling_source"] = f"user: {spelling}"


def _select(out: dict, engine: str, why: str) -> str:
    out["engine_selected_by"] = why
    return engine


def _choose_engine(opts: dict, used: list[str], aliases: dict, out: dict) -> str | None:
    """The engine that answers: --engine, else the one an engine-only flag or --print-command
    names; conflicting choices exit 2."""
    from ..engines import engine_choices

    engine, cmd = opts["engine"], opts["print_command"]
    families = {}
    for dest in used:
        families.setdefault(_ENGINE_OF[dest], []).append(_flag(dest))
    both = families.pop("both", [])
    if engine and cmd and cmd != engine:
        raise UsageError(f"--print-command {cmd} with --engine {engine}: the command must come "
                         "from the engine that answers.", hint=f"Use --print-command {engine}, "
                         f"or --engine {cmd}.")
    for fam, names in families.items():
        if engine and fam != engine:
            raise UsageError(f"{', '.join(names)}: {_title(fam)} flag(s), but --engine {engine} "
                             "was given.", hint=f"Drop them, or use --engine {fam}.")
    if engine:
        return engine
    if cmd:
        other = [f for fam, names in families.items() if fam != cmd for f in names]
        if other:
            raise UsageError(f"{', '.join(other)}: not {_title(cmd)} flag(s), but "
                             f"--print-command {cmd} was given.")
        return _select(out, cmd, f"--print-command {cmd}")
    if len(families) > 1:
        listed = "; ".join(f"{_title(f)}: {', '.join(n)}" for f, n in families.items())
        raise UsageError(f"flags of two engines were given ({listed}).",
                         hint=f"Pass {engine_choices()} and only its flags.")
    if families:
        fam, names = next(iter(families.items()))
        return _select(out, fam, f"{names[0]} (a {_title(fam)} flag; no --engine given)")
    if both:
        raise UsageError(f"{', '.join(both)} is an engine flag, and no engine was named.",
                         hint=f"Add {engine_choices()}.")
    return None
