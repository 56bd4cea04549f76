"""Layout shapes the serving engines enforce at start-up (specs/engines/*.yaml
`layout_constraints`), checked for every layout of a plan.

A block-quantized FP8 or INT8 checkpoint (weight_block_size [block_n, block_k]) shards a dimension
such as moe_intermediate_size over the ranks that split it; each rank's shard must be whole
blocks, or the engine refuses to start, refines the block scales (same bytes), or pads the
shard to whole blocks (the padded bytes are charged to the layout's weights per rank).

With --engine the chosen engine version's rules decide; without one, the default version of
every engine is checked and a layout any of them refuses is not valid (its reason names the
engine that would start it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.layout import EngineConstraint


MOE_KEYS = ("num_experts", "n_routed_experts", "num_local_experts")


def _title(engine: str) -> str:
    from ..engines import get
    return get(engine).title


# how a block-quantized weight format is named in a refusal
_KIND = {"fp8-block": "FP8", "int8-block": "INT8"}


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the engines say about one (dense TP, experts' TP) pair."""

    problems: tuple[str, ...] = ()
    extra_bytes: int = 0
    checks: tuple[EngineConstraint, ...] = ()


def _flag(rem: dict, flags: dict) -> bool:
    if "flag" not in rem:
        return True
    value = str(flags.get(rem["flag"], rem.get("flag_default", "")))
    if "flag_values" in rem and value not in rem["flag_values"]:
        return False
    return not ("flag_not" in rem and value in rem["flag_not"])


def _dense_layers(root: dict) -> bool:
    """Whether the model has dense (non-expert) MLP layers the dense rule shards."""
    experts = any(isinstance(root.get(k), int) and root.get(k) > 0 for k in MOE_KEYS)
    step = root.get("decoder_sparse_step")
    return (not experts or (root.get("first_k_dense_replace") or 0) > 0
            or bool(root.get("mlp_only_layers")) or (isinstance(step, int) and step > 1))


@dataclass(slots=True)
class Judge:
    """The checkpoint's facts and the engine rules to check layouts against."""

    engines: list                 # [(Rules, flags dict)]
    selected: bool                # True with --engine: only that engine's rules decide
    algorithm: str | None
    block: tuple[int, int] | None
    root: dict
    routed_bytes: object          # callable -> total routed-expert bytes, or None
    memo: dict = field(default_factory=dict)

    def check(self, dense_tp: int, moe_tp: int, group: int | None = None) -> Verdict:
        """The verdict for a layout whose dense layers split over `dense_tp` ranks (the
        attention TP) and experts over `moe_tp`; `group`: the attention-DP model group."""
        key = (dense_tp, moe_tp, group)
        if key not in self.memo:
            self.memo[key] = self._check(dense_tp, moe_tp, group)
        return self.memo[key]

    def _check(self, dense_tp: int, moe_tp: int, group: int | None) -> Verdict:
        if self.block is None or self.algorithm is None:
            return Verdict()
        checks = []
        for rules, flags in self.engines:
            for c in rules.constraints:
                got = self._one(c, rules, flags, dense_tp, moe_tp, group)
                if got is not None:
                    checks.append(got)
        refused = [c for c in checks if c.action == "refuse"]
        every = {(f"{_title(r.engine)} {r.version}", r.engine) for r, _ in self.engines}
        no = {c.engine for c in refused}
        started = sorted(f"{label} starts it (plan with --engine {e})"
                         for label, e in every if label not in no)
        problems = tuple(f"{c.engine} refuses to start: {c.text} ({c.source})"
                         + (f"; {', '.join(started)}" if started and not self.selected else "")
                         for c in refused)
        extra = max((c.extra_bytes for c in checks), default=0)
        return Verdict(problems, 0 if problems else extra, tuple(checks))

    def _one(self, c: dict, rules, flags: dict, dense_tp: int, moe_tp: int, group: int | None
             ) -> EngineConstraint | None:
        """The rule `c` (the engine spec's layout_constraints entry) on this layout, or None
        when it does not apply or the shard is whole blocks."""
        from ..model.layout import EngineConstraint

        if self.algorithm not in c["weights"]:
            return None
        dim = self.root.get(c["dimension"])
        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            return None
        tp = moe_tp if c["shard"] == "moe" else dense_tp
        if c["shard"] == "dense" and group and c.get("attention_dp_shard") == "group":
            tp = group                  # the engine splits dense layers over the whole group
        if c["shard"] == "dense" and not _dense_layers(self.root):
            return None
        bn, bk = self.block
        if tp <= 1 or dim % tp:
            return None                 # unsharded, or a TP the head/divides checks refuse
        shard = dim // tp
        if shard % bn == 0 and shard % bk == 0:
            return None
        label = f"{_title(rules.engine)} {rules.version}"
        what = (f"{c['dimension']} {dim:,} / TP{tp} = {shard:,} per rank is not a multiple of "
                f"the checkpoint's {bn} x {bk} {_KIND.get(self.algorithm, 'quantized')} weight "
                "block")
        base = {"engine": label, "constraint": c["id"], "dimension": c["dimension"],
                "value": dim, "tp": tp, "shard": shard, "block": (bn, bk)}
        for rem in c.get("remedies", ()):
            if not _flag(rem, flags):
                continue
            if rem["action"] == "refine":
                fine = gcd(bn, bk, shard, int(self.root.get("hidden_size") or 0))
                if fine >= rem.get("min_block", 1):
                    return EngineConstraint(**base, action="refine", source=rem["source"],
                                            extra_bytes=0,
                                            text=f"{what}; {label} refines the block scales to "
                                                 f"{fine} x {fine} and starts (Triton MoE "
                                                 "kernels)")
            if rem["action"] == "pad" and c["shard"] == "moe" and bn == bk \
                    and dim % bn == 0 and int(self.root.get("hidden_size") or 0) % bn == 0:
                padded = -(-shard // bn) * bn
                routed = self.routed_bytes()
                extra = 0 if routed is None else -(-routed * (padded - shard) // (shard * tp))
                charged = (f"{extra:,} B more expert weights per rank" if routed is not None
                           else "padded bytes not charged: the routed-expert bytes are unknown")
                return EngineConstraint(**base, action="pad", source=rem["source"],
                                        extra_bytes=extra,
                                        text=f"{what}; {label} pads each shard to {padded:,} "
                                             f"({charged})")
        return EngineConstraint(**base, action="refuse", source=c["source"], extra_bytes=0,
                                text=what)



def judge_for(cap, quant: dict | None, root: dict, routed_bytes) -> Judge:
    """The plan's judge: the chosen engine version, else every engine's default version."""
    q = quant or {}
    block = q.get("block_size")
    block = (int(block[0]), int(block[-1])) if isinstance(block, list | tuple) and block \
        and all(isinstance(b, int) and b > 0 for b in block) else None
    if block is None:               # nothing to check: a plain plan loads no engine spec
        return Judge([], cap.engine, q.get("weight_algorithm"), None, root, routed_bytes)
    if cap.engine:
        engines, selected = [(cap.rules, dict(cap.flags))], True
    else:
        from ..engines import names
        from ..engines.spec import rules_for

        engines, selected = [(rules_for(e, None), {}) for e in names()], False
    return Judge(engines, selected, q.get("weight_algorithm"), block, root, routed_bytes)
