"""An engine version refuses a quantization method it lacks; kvfit refuses it too (exit 2).

Recorded from the engines' own code (rule `quantization_methods`, specs/engines/*.yaml):
- SGLang 0.5.23 registers 29 CUDA methods (python/sglang/srt/layers/quantization/__init__.py:
  63-92, 99-104) and raises 'Unknown quantization method' for any other
  (configs/model_config.py:2151-2156); fbgemm_fp8 is not among them. 0.5.22 (:62-90) lacks it too.
- vLLM 0.33.0 registers fbgemm_fp8 but lists it in DEPRECATED_QUANTIZATION_METHODS
  (model_executor/layers/quantization/__init__.py:52-55): config/model.py:1472-1486 raises
  unless --allow-deprecated-quantization.
- SGLang renames gptq to gptq_marlin when Marlin takes it (bits 4/8, sym, group size -1/32/64/
  128, desc_act declared: layers/quantization/gptq/gptq.py:414-438, 459-481); plain gptq is
  not a CUDA method, so a GPTQ checkpoint Marlin cannot take is refused.

Pinned config: tests/fixtures/model-configs/meta-llama--Llama-3.1-405B-Instruct-FP8 (its
quantization_config declares quant_method fbgemm_fp8).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.engines.quant_methods import check
from kvfit.engines.spec import rules_for
from kvfit.errors import ConfigError

from conftest import run_cli

FBGEMM = str(Path(__file__).parent / "fixtures/model-configs/meta-llama--Llama-3.1-405B-Instruct-FP8")
BASE = ("--hardware", "h100-80", "--gpus", "8")


@pytest.mark.parametrize("engine", ["sglang", "sglang@0.5.23", "sglang@0.5.22"])
def test_sglang_refuses_fbgemm_fp8(engine):
    code, out, err = run_cli(FBGEMM, *BASE, "--engine", engine)
    assert code == 2 and out == ""
    assert "has no quantization method 'fbgemm_fp8'" in err
    assert "model_config.py:2000-2160" in err and "Traceback" not in err


def test_sglang_version_without_a_read_registry_is_not_checked():
    code, _, err = run_cli(FBGEMM, *BASE, "--engine", "sglang@0.5.21")
    assert code != 2, err


def test_vllm_033_refuses_the_deprecated_method_unless_allowed():
    code, _, err = run_cli(FBGEMM, *BASE, "--engine", "vllm@0.33.0")
    assert code == 2 and "deprecated quantization method 'fbgemm_fp8'" in err
    assert "--allow-deprecated-quantization" in err
    code, out, err = run_cli(FBGEMM, *BASE, "--engine", "vllm@0.33.0",
                             "--allow-deprecated-quantization", "--print-command", "vllm")
    assert code != 2, err
    assert "--allow-deprecated-quantization" in out.split("vllm serve", 1)[1].splitlines()[0]


def _gptq(**qc) -> tuple[dict, dict]:
    return {"method": "gptq"}, {"quantization_config": {"quant_method": "gptq", **qc}}


def test_sglang_renames_marlin_compatible_gptq():
    rules = rules_for("sglang", "0.5.23")
    check(rules, *_gptq(bits=4, sym=True, group_size=128, desc_act=False), {})   # -> gptq_marlin


@pytest.mark.parametrize("qc", [
    {"bits": 3, "sym": True, "group_size": 128, "desc_act": False},    # no Marlin type for 3 bits
    {"bits": 4, "sym": False, "group_size": 128, "desc_act": False},   # asymmetric: no TYPE_MAP row
    {"bits": 4, "sym": True, "group_size": 256, "desc_act": False},    # group size Marlin lacks
    {"bits": 4, "sym": True, "group_size": 128},                        # desc_act not declared
    {"bits": 4, "sym": 1, "group_size": 128, "desc_act": False},       # sym 1 is not True
])
def test_sglang_refuses_gptq_marlin_cannot_take(qc):
    with pytest.raises(ConfigError, match="no quantization method 'gptq'"):
        check(rules_for("sglang", "0.5.23"), *_gptq(**qc), {})


def test_every_pinned_quant_method_starts_except_the_missing_ones():
    # The methods the pinned configs declare: fp8, compressed-tensors, modelopt, mxfp4 are
    # registered in both engines' read versions; fbgemm_fp8 is not in SGLang 0.5.23 (and
    # deprecated in vLLM 0.33), and bitsandbytes is not in vLLM 0.33's QuantizationMethods
    # (model_executor/layers/quantization/__init__.py:15-49; no bitsandbytes.py in the wheel)
    # while SGLang 0.5.23 registers it (:77).
    root = Path(__file__).parent / "fixtures/model-configs"
    missing = {("vllm", "fbgemm_fp8"), ("sglang", "fbgemm_fp8"), ("vllm", "bitsandbytes")}
    seen, refused = set(), set()
    for cfg in root.glob("*/config.json"):
        c = json.loads(cfg.read_text())
        qc = c.get("quantization_config") or (c.get("text_config") or {}).get(
            "quantization_config")
        if not (qc and qc.get("quant_method")):
            continue
        seen.add(qc["quant_method"])
        for engine, version in (("vllm", "0.33.0"), ("sglang", "0.5.23")):
            try:
                check(rules_for(engine, version), {"method": qc["quant_method"]}, c, {})
            except ConfigError:
                refused.add((engine, qc["quant_method"]))
    assert {"fp8", "compressed-tensors", "modelopt", "mxfp4", "bitsandbytes", "fbgemm_fp8"} <= seen
    assert refused == missing
