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
    want = {"engines": sorted({f"{x.engine} {x.version}" for x in logs}),
            "hardware": sorted({x.hardware for x in logs}),
            "tp": sorted({x.tp for x in logs})}
    if "settings" in reg:   # each setting as the fitted logs ran it (flag, else printed default)
        want["settings"] = {k: sorted({_setting(x, k) for x in logs}) for k in reg["settings"]}
    assert reg == want


def _setting(case, key: str) -> int:
    value = (case.meta.get("flags") or {}).get(key, (case.meta.get("defaults_printed") or {})
                                               .get(key))
    assert isinstance(value, int), f"{case.slug}: {key} not stated in its provenance YAML"
    return value


def test_prediction_outside_the_regime_says_where():
    rules = rules_for("vllm", "0.19.0")
    names = ["activation_base_gib", "non_torch_tp_gib"]
    # the TP>1 non-torch constant was fitted on two TP=2 H100 logs of vLLM 0.19.0
    inside = regime_check(rules, Inputs([], 2, 8192, 1, 1, device="h100-80"), names)
    assert inside.inside and inside.outside == ()
    out = regime_check(rules, Inputs([], 8, 8192, 1, 1, device="a100-80"), names)
    assert not out.inside
    assert out.outside == ("GPU a100-80 (fitted on h100-80)", "TP 8 (fitted at TP 1/2)")


def test_settings_outside_the_fitted_ones_are_named():
    rules = rules_for("vllm", "0.19.0")
    names = ["activation_base_gib"]
    # the activation residual's fit ran max_num_seqs 1024 and max_num_batched_tokens 8192 in every log
    inside = regime_check(rules, Inputs([], 1, 8192, 1, 1, device="h100-80"), names,
                          {"max_num_seqs": 1024, "max_num_batched_tokens": 8192})
    assert inside.inside
    out = regime_check(rules, Inputs([], 1, 8192, 1, 1, device="h100-80"), names,
                       {"max_num_seqs": 1, "max_num_batched_tokens": 8192})
    assert out.outside == ("max_num_seqs 1 (fitted at 1024)",)


def test_the_rtx5090_log_is_flagged_outside_the_fitted_settings():
    # the held-out RTX 5090 log runs --max-num-seqs 1, outside the settings the activation
    # residual was fitted at (the phases themselves are derived from the engine's code), and
    # explain-log says so where it cannot attribute the gap
    from kvfit.engines.explain import explain

    c = CASES["vllm-0.24.0-qwen3.6-35b-a3b-nvfp4-rtx5090"]
    res = explain(c.text, model_dir=str(c.model_dir), engine_version=c.version, tp=c.tp,
                  hardware=c.hardware, flags=c.thread_flags)
    reg = res["prediction"]["memory"]["fitted_regime"]
    assert "max_num_seqs 1 (fitted at 1024)" in reg["outside"]
    avail = next(r for r in res["rows"] if r["number"] == "available KV memory")
    assert "max_num_seqs 1 (fitted at 1024)" in avail["why"]
