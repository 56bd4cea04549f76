"""What would fit: the nearest changes that meet a target the plan does not meet.

Each suggestion is computed by the plan's own capacity model — the same layouts, budget and
(with --engine) engine prediction — by re-asking the question with one change:

  1. fp8 KV cache            (re-plan with --kv-dtype fp8; only when the cache is wider)
     SGLang without the radix cache (hybrid models: 1 recurrent-state slot per request, not 5)
  2. a shorter context       (--max-context on the same GPUs: the longest that holds the target)
  3. fewer users / branches  (what the best layout holds, divided per user)
  4. attention-DP + EP       (re-plan with the engine's attention-DP profile; MoE with known
                              expert ownership only)
     pipeline stages         (re-plan with --pp 2, 4 or 8 on the same GPUs, plain TP only)
  5. a quantized sibling     (catalog checkpoints named <this model>-FP8/-NVFP4/...)
  6. more GPUs or nodes      (--min-gpus on --hardware; more complete systems on --system)

Settings come before layout, layout before checkpoint, checkpoint before hardware: the
smallest change first. Only changes that meet the target are listed (2 and 3 by construction).
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import KvfitError
from ..report.suggest_reasons import FewerPerUser, FewerUsers, LayoutHolds, LongestContext

QUANT_MARKS = ("fp8", "nvfp4", "fp4", "mxfp4", "awq", "gptq", "int4", "int8", "w4a16", "w8a8")


def _quiet(req, **changes):
    return replace(req, suggest=False, print_command=None, check_engine=None, **changes)


def _replanner(plan):
    """replan(asked, meta=None, **changes): a whole plan (by `plan`, kvfit.planner.build.plan,
    handed in by its caller) of the question as the user asked it, with `changes` (the
    utilization stays unstated when the user did not state it: SGLang then keeps its own
    fraction), or None when it is refused; `meta`: the checkpoint the plan already read, when
    the changes keep the model."""
    def replan(asked, meta=None, **changes) -> dict | None:
        try:
            return plan(_quiet(asked, **changes), meta=meta)
        except KvfitError:
            return None
    return replan


def _entry(change: str, flags: str, text, lay=None, **extra) -> dict:
    """One suggestion; `text`: its description (a kvfit.report.suggest_reasons fact or a string);
    `lay`: the re-planned recommended layout (a Layout), if any."""
    out = {"change": change, "flags": flags, "description": str(text)}
    if lay is not None:
        out |= {"layout": lay.label, "max_sequences": lay.max_sequences}
    return out | extra


def _fp8(req, asked, m, report, replan):
    """fp8 KV at the same settings; when that alone is not enough, fp8 KV at the longest
    context that then holds the target (it is longer than without fp8)."""
    from fractions import Fraction
    if Fraction(report.dtypes.kv.bytes_per_value) <= 1:
        return None
    flags = {k: v for k, v in req.engine_flags.items() if k != "kv_cache_dtype"}
    r = replan(asked, m.meta, kv_dtype="fp8", engine_flags=flags)
    if r and r.fits is True:
        lay = r.chosen
        return _entry("kv_dtype", "--kv-dtype fp8", LayoutHolds(
            "an fp8 KV cache", lay.label, lay.max_sequences), lay, value="fp8")
    if report.inverse:
        return None
    r = replan(asked, m.meta, kv_dtype="fp8", engine_flags=flags, max_context=True)
    top = r and r.inverse.max_context_tokens
    if not top:
        return None
    return _entry("kv_dtype", f"--kv-dtype fp8 --context {top}", LongestContext(
        top, r.inverse.required_sequences, fp8=True), r.chosen, value="fp8", context=top)


def _radix(req, asked, m, report, replan):
    """An engine that keeps several recurrent-state slots per running request while its prefix
    cache is on and one without it (SGLang's radix cache: Engine.prefix_cache_off): for a
    hybrid model whose running cap the recurrent pool sets, turning the cache off can meet the
    target (and gives up prefix reuse)."""
    off = m.capacity.eng.prefix_cache_off if m.capacity.engine else None
    if off is None or req.engine_flags.get(off[0]) or not any(
            c.kind == "constant" for c in m.comps):
        return None
    flag, spelling, noun = off
    r = replan(asked, m.meta, engine_flags=req.engine_flags | {flag: True})
    if not r or r.fits is not True:
        return None
    lay = r.chosen
    rules = m.capacity.rules
    per, alone = rules["mamba_slots_per_request"], rules["mamba_slots_no_radix"]
    return _entry(flag, spelling, f"{m.capacity.eng.title} without its {noun}: {alone} "
                  f"recurrent-state slot(s) per running request instead "
                  f"of {per} ({rules.basis('mamba_slots_no_radix')}), so {lay.label} holds "
                  f"{lay.max_sequences} sequences; shared prefixes are no longer reused", lay,
                  value=True)


def _context(req, asked, m, report, replan):
    from . import inverse
    if report.inverse and report.inverse.question == "max_context":
        top, need, lay = (report.inverse.max_context_tokens, report.inverse.required_sequences,
                          report.chosen)
    else:
        try:
            r = inverse.max_context(replace(req, max_context=True), m, [])
        except KvfitError:
            return None
        top, need, lay = (r.inverse.max_context_tokens, r.inverse.required_sequences,
                          r.chosen)
    if top is None or top >= report.context_tokens:
        return None
    return _entry("context", f"--context {top}", LongestContext(top, need), lay,
                  value=top)


def _users(req, asked, m, report, replan):
    lay, t = report.chosen, report.target
    if lay is None or not lay.max_sequences:
        return []
    out = []
    users = lay.max_sequences // t.active_sequences_per_user
    if 0 < users < t.concurrent_users:
        out.append(_entry("concurrent_users", f"--concurrent-users {users}", FewerUsers(
            users, t.active_sequences_per_user, lay.label, lay.max_sequences), lay, value=users))
    per = lay.max_sequences // t.concurrent_users
    if t.active_sequences_per_user > 1 and 0 < per < t.active_sequences_per_user:
        out.append(_entry("active_sequences_per_user", f"--active-sequences-per-user {per}",
                          FewerPerUser(per, t.concurrent_users), lay, value=per))
    return out


def _dpa(req, asked, m, report, replan):
    if req.parallelism != "tp" or not any(c.kind == "latent" or c.heads is None
                                          for c in m.comps):
        return None
    from ..engines import STATIC_DPA

    if m.capacity.engine and m.capacity.eng.dpa is None:
        return None             # the answering engine has no attention-DP mode kvfit models
    profile = m.capacity.eng.dpa.name if m.capacity.engine else STATIC_DPA
    # attention-DP reads a Hub checkpoint's weight headers (expert ownership), which a TP
    # plan's read leaves out; a local folder is read the same way for either
    same = m.meta if m.meta.origin == "local" or m.meta.tensor_bytes is not None else None
    r = replan(asked, same, parallelism=profile)
    if not r or r.fits is not True:
        return None
    lay = r.chosen
    return _entry("parallelism", f"--parallelism {profile}", LayoutHolds(
        "attention-DP with expert parallelism", lay.label, lay.max_sequences,
        "each attention group keeps its own sequences' state"), lay, value=profile)


def _pp(req, asked, m, report, replan):
    """Pipeline stages instead of a wider TP group: the smallest PP size (2, 4, 8) that meets
    the target on the same GPUs (it splits layers, so KV heads stay unreplicated)."""
    gpus = (report.hardware.gpus if report.hardware else None) or 1
    if (req.pp or 1) > 1 or req.parallelism != "tp" or gpus < 2 or (
            m.capacity.engine and not m.capacity.eng.suggests_pp):
        return None
    for pp in (2, 4, 8):
        if gpus % pp:
            continue
        r = replan(asked, m.meta, pp=pp, tp=None if asked.tp is None else max(1, asked.tp // pp))
        if r and r.fits is True:
            lay = r.chosen
            return _entry("pp", f"--pp {pp}", LayoutHolds(
                f"{pp} pipeline stages", lay.label, lay.max_sequences,
                "each stage keeps only its layers' weights and KV"), lay, value=pp)
    return None


def siblings(source: str) -> list[str]:
    """Catalog checkpoints that are quantized versions of `source` (same name + a quant tag);
    only the entries whose folder holds "<name>-" are read."""
    from ..hub.catalog import repo_ids_containing
    name = source.rsplit("/", 1)[-1].lower()
    out = []
    for rid in repo_ids_containing(name + "-"):
        other = rid.rsplit("/", 1)[-1].lower()
        rest = other[len(name) + 1:] if other.startswith(name + "-") else ""
        if rest and any(mark in rest.split("-") for mark in QUANT_MARKS):
            out.append(rid)
    return sorted(out)


def _sibling(req, asked, m, report, replan):
    src = report.model.source
    for rid in siblings(src)[:4]:
        r = replan(asked, model=rid, revision=None, offline=True, weight_gib=None)
        if r and r.fits is True:
            lay = r.chosen
            return _entry("model", rid, f"the quantized checkpoint {rid}: {lay.label} holds "
                          f"{lay.max_sequences} sequences", lay, value=rid)
    return None


def _more(req, asked, m, report, replan):
    from . import inverse, search
    from .placements import target
    hw = report.hardware
    if req.hardware is not None:
        ceiling = min(1024, max(16, hw.gpus * 16))
        try:
            r = inverse.min_gpus(replace(req, gpus=ceiling, min_gpus=True, max_context=False),
                                 m, [])
        except KvfitError:
            return None
        n = r.inverse.min_gpus
        if n is None or n <= hw.gpus:
            return None
        return _entry("gpus", f"--gpus {n}", f"{n} x {hw.id}", r.chosen, value=n)
    if req.system is not None:
        from ..hardware.presets import find_system
        system = find_system(req.system)
        req2 = replace(req, system=None, nodes=None)
        c = search.candidate(req2, m, system, target(req).required_sequences,
                             max(8, 4 * hw.nodes))
        if c.status != "fits" or c.nodes <= hw.nodes:
            return None
        lay = c.best_any_fabric
        return {"change": "nodes", "flags": f"--nodes {c.nodes}", "description":
                f"{c.nodes} x {system.id} ({c.gpus} GPUs)", "layout": lay.label,
                "max_sequences": lay.max_sequences, "value": c.nodes}
    return None


def suggestions(req, m, report, plan, asked=None) -> tuple:
    """The changes that would meet the target, smallest first (see the module docstring).

    req: the plan's request with its utilization resolved (for questions asked of `m`);
    plan: the planner (kvfit.planner.build.plan), which re-plans each change;
    asked: the request as the user gave it (default req), which every re-plan starts from."""
    if report.search or m.weights.bytes is None:
        return ()
    asked = req if asked is None else asked
    if m.meta.origin == "hub" and m.meta.revision:     # re-plans read the same commit, from
        pin = {"revision": m.meta.revision}             # the cache: no Hub request each
        req, asked = replace(req, **pin), replace(asked, **pin)
    out, replan = [], _replanner(plan)
    for step in (_fp8, _radix, _context, _users, _dpa, _pp, _sibling, _more):
        got = step(req, asked, m, report, replan)
        out += got if isinstance(got, list) else ([got] if got else [])
    from ..model.plan import Suggestion
    from .assemble import build
    return tuple(build(Suggestion, s) for s in out)
