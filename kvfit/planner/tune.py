"""`--tune`: the engine settings that hold the target with the most headroom.

The engine names what it lets a user set and which values to try, in its own order
(kvfit.engines.base.Engine.tunable_settings); this module tries every combination of them on
the plan's topology, each judged by the plan's own capacity model (the engine's prediction of
every layout, kvfit.planner.capacity), and keeps the one whose best layout holds the most
resident sequences; a tie goes to fewer changes from the engine's defaults, then to the
engine's order. Beside it, each setting's cost: the resident sequences with that one setting
back at the engine's default. Trade-offs that are not memory (a smaller prefill chunk is slower,
no prefix cache loses hits) are named as warnings, never priced.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from ..errors import UsageError
from ..model.plan import Report
from ..model.tune import Tune, TuneSetting
from ..report import reasons
from . import placements

MAX_COMBINATIONS = 512      # more and the settings are searched two at a time, in rounds


def check(req) -> None:
    """--tune needs an engine and a plain plan on one topology (one clear paragraph else)."""
    from ..engines import engine_choices

    if req.tune_max_utilization is not None and not req.tune:
        raise UsageError("--tune-max-utilization caps the memory fraction --tune may choose; "
                         "it needs --tune.")
    if not req.tune:
        return
    if not req.engine:
        raise UsageError("--tune searches an engine's own settings (batched tokens, running "
                         "requests, block or page size, prefix caching, speculative tokens, the "
                         "memory fraction), so it needs the engine whose allocator answers: add "
                         f"{engine_choices()} (optionally @VERSION), e.g. `kvfit MODEL --hardware "
                         "h100-80 --gpus 8 --context 32k --engine vllm --tune`.")
    if req.hardware is None and req.system is None and not req.systems:
        raise UsageError("--tune needs the GPUs to tune for: add --hardware and --gpus (or "
                         "--system).")
    for flag, on in (("--systems", req.systems), ("--min-gpus", req.min_gpus),
                     ("--max-context", req.max_context)):
        if on:
            raise UsageError(f"--tune cannot be combined with {flag}: it tunes the engine for "
                             "one topology and one context.",
                             hint="Answer that question first, then --tune its answer.")


def check_single(tune: bool) -> None:
    """--tune answers one plan: refused beside --sweep or --plot (kvfit.sweep included)."""
    if tune:
        raise UsageError("--tune cannot be combined with --sweep or --plot: it tunes the "
                         "engine for one plan.", hint="Tune the cell you want to serve.")


def _inputs(req, m, topo, comps):
    """The prediction inputs at TP 1 on this topology's GPU, with the memory the plan's budget
    starts from (the engine's defaults read them)."""
    from ..engines.common import MIB, Inputs

    cap, acc = m.capacity, topo.accelerator
    mem = placements.budget(req, acc)[0].memory_bytes
    return Inputs(list(comps), 1, m.ctx, m.weights.bytes, mem,
                  total_bytes=acc.cuda_total_mib * MIB if acc.cuda_total_mib else None,
                  quant=cap.quant, vocab=cap.vocab, max_context=cap.max_context, device=acc.id,
                  capability=acc.compute_capability, kv_bytes=cap.kv_bytes,
                  index_dtype=cap.index_dtype, kv_name=cap.kv_name, head_size=cap.head_size,
                  config=cap.config, architectures=cap.architectures,
                  model_config=cap.model_config)


def _speculative(req, m) -> int:
    """The speculative tokens to search from: the user's (--mtp / --num-speculative-tokens)
    when the checkpoint has draft layers whose state the plan counts, else 0 (none offered)."""
    from ..state.evaluate import evaluate_components
    from .launch import mtp_tokens

    asked = mtp_tokens(req, m.fields)
    if not asked:
        return 0
    without = evaluate_components(m.arch, m.fields, m.sets, m.ctx, m.names | {"mtp": 0},
                                  m.cache_layout)
    has_draft = sum(c.per_rank(1) for c in without) != sum(c.per_rank(1) for c in m.comps)
    return asked if has_draft else 0


def _stated(req, asked) -> frozenset:
    """The engine flags the user gave (held); kvfit's own speculative count is searched."""
    keys = set(req.engine_flags)
    if asked.utilization is not None:
        keys.add("utilization")
    return frozenset(keys - {"num_speculative_tokens"})


class _Search:
    """Evaluations of one plan's settings, each combination once."""

    def __init__(self, req, m, topo, settings, required: int):
        self.req, self.m, self.topo, self.settings = req, m, topo, settings
        self.required, self.comps = required, m.at(m.ctx)
        self.done: dict[tuple, tuple] = {}

    def flags(self, choice: tuple) -> tuple[dict, float | None]:
        """(engine flags, plan utilization) of one combination."""
        cap = self.m.capacity
        flags, util = dict(cap.flags), cap.utilization
        for s, value in zip(self.settings, choice, strict=True):
            key = s.key
            if key == "utilization":
                key = cap.eng.utilization_flag
                if key is None:
                    util = value
                    continue
            if value is None:
                flags.pop(key, None)
            else:
                flags[key] = value
        return flags, util

    def run(self, choice: tuple) -> tuple:
        """(most resident sequences or None, layouts, outcome, hardware) of a combination."""
        if choice not in self.done:
            flags, util = self.flags(choice)
            m = replace(self.m, capacity=replace(self.m.capacity, flags=flags, utilization=util))
            layouts, out, hw = placements.run_topology(self.req, m, self.topo, self.comps,
                                                       self.required)
            best = out.recommended.max_sequences if out.recommended else None
            self.done[choice] = (best, layouts, out, hw, m)
        return self.done[choice]

    def default_of(self, i: int, choice: tuple) -> tuple:
        """`choice` with setting i at the engine's default."""
        s = self.settings[i]
        value = None if None in s.candidates else s.default
        return choice[:i] + (value,) + choice[i + 1:]

    def score(self, choice: tuple) -> tuple:
        """Most sequences, then fewest changes from the defaults, then the engine's order."""
        best = self.run(choice)[0]
        changes = sum(1 for i, v in enumerate(choice) if v != self.default_of(i, choice)[i])
        order = tuple(s.candidates.index(v) if v in s.candidates else 0
                      for s, v in zip(self.settings, choice, strict=True))
        return (-1 if best is None else best, -changes, tuple(-o for o in order))

    def best(self) -> tuple:
        """The best combination: every one when there are few, else two settings at a time
        (every pair's values together, so coupled settings move together) from the defaults,
        in rounds, until no such change improves it."""
        lists = [s.candidates for s in self.settings]
        total = 1
        for values in lists:
            total *= len(values)
        if total <= MAX_COMBINATIONS:
            return max(itertools.product(*lists), key=self.score)
        choice = tuple(self.default_of(i, tuple(v[0] for v in lists))[i]
                       for i in range(len(lists)))
        pairs = list(itertools.combinations(range(len(lists)), 2)) or [(0, 0)]
        while True:
            before = choice
            for i, j in pairs:
                moves = []
                for a, b in itertools.product(lists[i], lists[j]):
                    c = list(choice)
                    c[i], c[j] = a, b
                    moves.append(tuple(c))
                choice = max(moves, key=self.score)
            if choice == before:
                return choice


def _refused(search, choice: tuple, lay_id: str | None) -> str | None:
    """Why the engine refuses the tuned layout under `choice`, or None."""
    _, layouts, _, _, _ = search.run(choice)
    lay = next((x for x in layouts if x.id == lay_id), None)
    refusal = lay.engine.refusal if lay and lay.engine else None
    return refusal.reason if refusal else None


def _row(search, i: int, choice: tuple, best: int | None, lay_id: str | None) -> dict:
    """One setting: its default and recommended value, and the resident sequences of each."""
    s = search.settings[i]
    value, why = choice[i], None
    if s.context:               # a longer max_model_len keeps the pool; it may be refused
        if s.default and s.default > value:
            why = _refused(search, choice[:i] + (s.default,) + choice[i + 1:], lay_id)
        at_default, values = (0 if why else best), [{"value": value, "max_sequences": best}]
        changed = s.default != value
    else:
        at_default = search.run(search.default_of(i, choice))[0]
        values = [{"value": s.default if v is None else v,
                   "max_sequences": search.run(choice[:i] + (v,) + choice[i + 1:])[0]}
                  for v in s.candidates]
        changed = value is not None and value != s.default
    row = {"flag": s.spelling, "name": s.label, "default": s.default,
           "default_text": s.default_text, "recommended": s.default if value is None else value,
           "recommended_text": s.default_text if value is None else
           dict(s.texts).get(value, reasons.setting_text(value)),
           "changed": changed, "max_sequences_at_default": at_default, "max_sequences": best,
           "rule": s.rule, "values": values}
    if why:
        row["default_refusal"] = why
    if changed and s.tradeoff:
        row["tradeoff"] = s.tradeoff
    return row


def run(req, m, report: Report, asked) -> Tune:
    """The report's `tune` section for a plan on one topology (report: the plan's answer;
    asked: the request as the user gave it, before the plan resolved its utilization)."""
    from ..engines.base import TuneFacts
    from .assemble import build
    from .launch import launch_command
    from .layouts import layout_of

    topo = placements.topology(req)
    if topo is None or not report.layouts:
        raise UsageError("--tune needs the GPUs to tune for: add --hardware and --gpus (or "
                         "--system).")
    cap = m.capacity
    required = report.target.required_sequences
    facts = TuneFacts(_inputs(req, m, topo, m.at(m.ctx)), _speculative(req, m),
                      req.tune_max_utilization, _stated(req, asked),
                      tuple(sorted({x.tp for x in report.layouts})))
    settings = cap.eng.tunable_settings(cap.rules, facts)
    search = _Search(req, m, topo, settings, required)
    choice = search.best()
    best, layouts, out, hw, tuned = search.run(choice)
    defaults = tuple(search.default_of(i, choice)[i] for i in range(len(settings)))
    if any(s.context for s in settings):   # the defaults' figure at the target's context
        defaults = tuple(v if not s.context else choice[i]
                         for i, (s, v) in enumerate(zip(settings, defaults, strict=True)))
    at_defaults = search.run(defaults)[0]
    rec = out.recommended
    rows = [build(TuneSetting, _row(search, i, choice, best, rec.id if rec else None))
            for i in range(len(settings))]
    flags, _ = search.flags(choice)
    launch_flags = {k: v for k, v in flags.items()
                    if k not in {s.key for s in settings if s.context}}
    treq = replace(req, print_command=cap.name, engine_flags=launch_flags)
    tuned = replace(tuned, capacity=replace(tuned.capacity, flags=launch_flags))
    used = flags.get(cap.eng.utilization_flag) if cap.eng.utilization_flag else None
    hw = replace(hw, utilization=used if used is not None else report.hardware.utilization)
    command = launch_command(treq, tuned, replace(report, layouts=tuple(layouts),
                                                  recommended=rec, hardware=hw,
                                                  chosen=layout_of(layouts, rec)))
    holds = best is not None and best >= required
    warnings = [reasons.tune_tradeoff(r.name, r.recommended_text, r.flag, r.default_text,
                                      r.tradeoff) for r in rows if r.tradeoff]
    summary = reasons.tune_summary(best, at_defaults, required, rec.label if rec else None)
    return build(Tune, {"engine": cap.name, "version": cap.version, "required_sequences": required,
            "holds": holds if best is not None else None, "max_sequences": best,
            "default_max_sequences": at_defaults,
            "layout": rec.label if rec else None, "layout_id": rec.id if rec else None,
            "summary": summary, "combinations": len(search.done), "settings": rows,
            "command": command, "warnings": warnings})
