"""`kvfit plan --quantization METHOD` (the engines' own flag): the engine quantizes an
unquantized checkpoint while loading it, so the plan's weights are the weights as loaded, the
launch command passes the flag, and a method the engine version lacks or refuses exits 2.

What the engines do (kvfit/engines/load_quant.py):
- vLLM up to 0.32: `--quantization fp8` on a bf16 checkpoint stores every LinearBase weight as
  float8_e4m3fn with a float32 scale (fp8.py Fp8LinearMethod.process_weights_after_loading);
  embeddings and the LM head stay bf16. The public v0.19.0 log
  tests/fixtures/engine_logs/vllm-0.19.0-llama-3.1-8b-instruct-qfp8 loads 8.49 GiB this way.
- vLLM 0.33.0 refuses `fp8` on an unquantized checkpoint (fp8.py:106-112) and quantizes with
  `fp8_per_tensor` (online/fp8.py:188) instead.
- vLLM refuses a --quantization that differs from the checkpoint's declared method
  (config/model.py:1456-1462 in 0.33.0).

Pinned configs: tests/fixtures/model-configs/meta-llama--Llama-3.1-8B (bf16, no quantization)
and nvidia--Llama-3.1-70B-Instruct-FP8 (declares modelopt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, run_json

CONFIGS = Path(__file__).parent / "fixtures/model-configs"
LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B")
MODELOPT = str(CONFIGS / "nvidia--Llama-3.1-70B-Instruct-FP8")
BASE = ("--hardware", "h100-80", "--context", "8k")

# Llama-3.1-8B by hand (config.json: hidden 4096, 32 layers, 32 heads x 128, 8 KV heads,
# intermediate 14336, vocab 128256, untied):
#   embed_tokens and lm_head stay bf16: 2 x 128,256 x 4,096 x 2 B         = 2,101,346,304 B
#   norms, bf16: (2 x 32 + 1) x 4,096 x 2 B                               =       532,480 B
#   linear weights, fp8 (1 B), per layer q 4,096 x 4,096 + k, v 1,024 x 4,096 each + o
#   4,096 x 4,096 + gate, up, down 14,336 x 4,096 each = 218,103,808 -> x 32 = 6,979,321,856 B
#   scales, float32, one per output row at most (specs/quant/weight_storage.yaml fp8): per
#   layer 4,096 + 1,024 + 1,024 + 4,096 + 2 x 14,336 + 4,096 = 43,008 -> x 32 x 4 B = 5,505,024 B
FP8_BYTES = 2_101_346_304 + 532_480 + 6_979_321_856 + 5_505_024
assert FP8_BYTES == 9_086_705_664


def test_fp8_on_a_bf16_checkpoint_plans_the_weights_as_loaded():
    code, rep = run_json(LLAMA, *BASE, "--engine", "vllm@0.19.0", "--quantization", "fp8")
    assert code == 0
    assert rep["weights"]["bytes"] == FP8_BYTES
    assert rep["weights"]["detail"].startswith("--quantization fp8: vLLM stores every linear "
                                               "weight as fp8")
    # the v0.19.0 log loads 8.49 GiB (its figure adds the RoPE cos/sin cache, 32 MiB)
    assert abs(FP8_BYTES / 2**30 - 8.49) / 8.49 < 0.005
    code, plain = run_json(LLAMA, *BASE, "--engine", "vllm@0.19.0")
    assert code == 0 and plain["weights"]["bytes"] > FP8_BYTES    # the bf16 files' bytes


def test_the_launch_command_carries_the_flag():
    code, out, err = run_cli(LLAMA, *BASE, "--engine", "vllm@0.19.0", "--quantization", "fp8",
                             "--print-command", "vllm")
    assert code == 0, err
    launch = out.split("vllm serve", 1)[1].splitlines()[0]
    assert "--quantization fp8" in launch
    code, out, err = run_cli(LLAMA, *BASE, "--engine", "sglang", "--quantization", "fp8",
                             "--print-command", "sglang")
    assert code == 0, err
    assert "--quantization fp8" in out.split("sglang.launch_server", 1)[1].splitlines()[0]


def test_vllm_033_takes_fp8_per_tensor_and_refuses_fp8():
    code, rep = run_json(LLAMA, *BASE, "--engine", "vllm@0.33.0", "--quantization",
                         "fp8_per_tensor")
    assert code == 0 and rep["weights"]["bytes"] == FP8_BYTES
    code, out, err = run_cli(LLAMA, *BASE, "--engine", "vllm@0.33.0", "--quantization", "fp8")
    assert code == 2 and out == "" and "fp8.py:106-112" in err
    assert "--quantization fp8_per_tensor" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "says"), [
    (("--engine", "vllm@0.33.0", "--quantization", "bitsandbytes"),
     "vLLM 0.33.0 has no --quantization method 'bitsandbytes'"),
    (("--engine", "sglang@0.5.23", "--quantization", "fbgemm_fp8"),
     "SGLang 0.5.23 has no --quantization method 'fbgemm_fp8'"),
    (("--engine", "vllm@0.19.0", "--quantization", "fp8_per_tensor"),
     "is known from vLLM 0.33.0 on"),
    (("--engine", "sglang@0.5.23", "--quantization", "awq"),
     "kvfit does not model the weights SGLang 0.5.23 would load"),
    (("--quantization", "fp8"), "is an engine flag, and no engine was named"),
])
def test_a_method_the_engine_lacks_or_kvfit_does_not_model_exits_2(args, says):
    code, out, err = run_cli(LLAMA, *BASE, *args)
    assert code == 2 and out == ""
    assert says in err and "Traceback" not in err


def test_a_method_differing_from_the_checkpoints_own_exits_2():
    code, out, err = run_cli(MODELOPT, *BASE, "--gpus", "2", "--engine", "vllm@0.33.0",
                             "--quantization", "fp8")
    assert code == 2 and out == ""
    assert "differs from the quantization this checkpoint declares (modelopt)" in err
    assert "config/model.py:1456-1462" in err
    # its own method is accepted and changes nothing
    code, same = run_json(MODELOPT, *BASE, "--gpus", "2", "--engine", "vllm@0.33.0",
                          "--quantization", "modelopt")
    code2, plain = run_json(MODELOPT, *BASE, "--gpus", "2", "--engine", "vllm@0.33.0")
    assert code == code2 == 0 and same["weights"] == plain["weights"]


def test_explain_log_checks_a_quantization_the_user_passes():
    # the v0.24.0 MTP run passed --quantization fp8 (its non-default args); its pinned stand-in
    # config is the bf16 Qwen3.5-27B, so fp8 is quantized while loading, and a method vLLM 0.24
    # is not known to have (fp8_per_tensor: first read in 0.33.0) exits 2 like the plan
    log = Path(__file__).parent / "fixtures/engine_logs/vllm-0.24.0-qwen3.6-27b-fp8-mtp-2x3090-tp2.log"
    model = str(CONFIGS / "Qwen--Qwen3.5-27B")
    common = ("explain-log", str(log), "--model-dir", model, "--tp", "2", "--hardware", "custom:24")
    code, out, err = run_cli(*common, "--quantization", "fp8")
    assert code == 0, err
    assert "--quantization fp8: vLLM stores every linear weight as fp8" in out
    code, out, err = run_cli(*common, "--quantization", "fp8_per_tensor")
    assert code == 2 and out == "" and "is known from vLLM 0.33.0 on" in err
    assert "Traceback" not in err


def test_another_registered_method_on_a_quantized_checkpoint_plans_the_declared_weights():
    # vLLM lets some methods take over another's declaration (override_quantization_method,
    # e.g. auto_gptq.py:213-233 in 0.33.0); kvfit does not model which, so it plans the
    # declared weights and says so instead of refusing
    code, rep = run_json(MODELOPT, *BASE, "--gpus", "2", "--engine", "vllm@0.33.0",
                         "--quantization", "gptq_marlin")
    code2, plain = run_json(MODELOPT, *BASE, "--gpus", "2", "--engine", "vllm@0.33.0")
    assert code == code2 == 0 and rep["weights"] == plain["weights"]
    assert any("--quantization gptq_marlin on a checkpoint that declares modelopt" in w
               for w in rep["warnings"])


def test_the_method_is_passed_in_the_engines_spelling():
    code, out, err = run_cli(LLAMA, *BASE, "--engine", "vllm@0.33.0", "--quantization",
                             "FP8_Per_Tensor", "--print-command", "vllm")
    assert code == 0, err
    assert "--quantization fp8_per_tensor" in out.split("vllm serve", 1)[1].splitlines()[0]
