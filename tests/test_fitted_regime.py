"""#11 rule 8: every fitted non-KV constant is versioned with the logs it was fitted on.

Each constant's `regime` (engine versions, kvfit hardware ids, TP sizes) must equal what the
provenance YAMLs of its `fitted_on` logs state, and a prediction outside that regime says so.
"""

from __future__ import annotations

import pytest
from engine_log_cases import load_cases

from kvfit.engines.budget import regime_check
from kvfit.engines.common import Inputs
from kvfit.engines.spec import load_spec, rules_for

CASES = {c.slug: c for c in load_cases()}
ROWS = [(e, name) for e in ("vllm", "sglang") for name in load_spec(e)["estimates"]]


@pytest.mark.parametrize(("engine", "name"), ROWS)
def test_regime_equals_the_fitted_logs(engine, name):
    c = load_spec(engine)["estimates"][name]
    logs = [CASES[s] for s in c["fitted_on"] if s in CASES]
    reg = c["regime"]
    if not logs:        # fitted on a hardware spec (torch_total_offset_mib): no engine run
        assert reg["engines"] == [] and reg["tp"] == [] and reg["hardware"]
        return
    assert reg == {"engines": sorted({f"{x.engine} {x.version}" for x in logs}),
                   "hardware": sorted({x.hardware for x in logs}),
                   "tp": sorted({x.tp for x in logs})}


def test_prediction_outside_the_regime_says_where():
    rules = rules_for("vllm", "0.19.0")
    names = ["activation_base_gib", "non_torch_tp_gib"]
    # the TP>1 non-torch constant was fitted on two TP=2 H100 logs of vLLM 0.19.0
    inside = regime_check(rules, Inputs([], 2, 8192, 1, 1, device="h100-80"), names)
    assert inside["inside"] and inside["outside"] == []
    out = regime_check(rules, Inputs([], 8, 8192, 1, 1, device="a100-80"), names)
    assert not out["inside"]
    assert out["outside"] == ["GPU a100-80 (fitted on h100-80)", "TP 8 (fitted at TP 1/2)"]
