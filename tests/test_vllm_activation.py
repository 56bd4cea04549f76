"""vLLM's profile-run activation peak derived from the engine's code
(kvfit/engines/vllm_activation.py). Every expected number is worked by hand below from the
pinned config in tests/fixtures/model-configs and the vLLM source lines it cites (0.19.0 and
0.24.0 wheels); none is copied from kvfit's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.engines import vllm_activation as va
from kvfit.engines.spec import rules_for
from kvfit.errors import UsageError

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "model-configs"


def _config(name: str) -> dict:
    return json.loads((CONFIGS / name / "config.json").read_text(encoding="utf-8"))


def test_dense_llama2_7b_forward_over_8192_tokens():
    # Llama-2-7b (CodeLlama-7b's geometry): hidden 4096, 32 heads x 128, intermediate 11008.
    # One compiled decoder piece over 8,192 tokens holds, per token, the attention output
    # (32 x 128 = 4,096) and the input residual (4,096) its caller passes in, the new
    # residual (4,096), gate_up (2 x 11,008 = 22,016) and the SiLU-and-mul output (11,008):
    # 45,312 values x 2 B x 8,192 tokens = 742,391,808 B.
    cfg = _config("meta-llama--Llama-2-7b-hf")
    assert va.forward_bytes(cfg, 1, 8192, 2) == 8192 * 45312 * 2 == 742_391_808
    # at TP 2 the heads and the intermediate halve: 2,048 + 8,192 + 3 x 5,504 = 26,752
    assert va.forward_bytes(cfg, 2, 8192, 2) == 8192 * 26752 * 2
    # no MoE, so no Triton-experts workspace
    assert va.moe_workspace_bytes(cfg, 1, 8192, 2) == 0


def test_dense_llama2_7b_sampler_over_1024_rows():
    # _dummy_sampler_run on min(1024, 8192) = 1,024 rows of the 32,000-token vocabulary
    # (vLLM 0.19.0): bf16 logits (gpu_model_runner.py:5571) 2 B, their fp32 copy
    # (sampler.py:90) 4 B, the Triton top-k/top-p buffer of 132 of the 1,024 rows (H100 SMs;
    # topk_topp_triton.py:1013-1018) 4 x 132/1024 B, softmax probs (topk_topp_sampler.py:112)
    # and the noise q (:334) 4 B each, per row and token:
    # 1,024 x 32,000 x (2 + 4 + 0.515625 + 8) = 475,648,000 B; plus the dummy run's hidden
    # states held meanwhile, 8,192 + 2 x 1,024 rows of 4,096 bf16 values = 83,886,080 B.
    rules = rules_for("vllm", "0.19.0")
    got, why = va.sampler_bytes(rules, 1024, 32000, 2, 4096, 8192)
    assert got == 475_648_000 + 83_886_080
    assert "1,024 rows" in why and "132 SMs" in why
    # the codellama-7b log prints a torch peak of 0.77 GiB (826,781,368 B): the forward pass
    # (742,391,808 B) is larger than this sampler phase (559,534,080 B) and sets the peak
    assert got < va.forward_bytes(_config("meta-llama--Llama-2-7b-hf"), 1, 8192, 2)


def test_sampler_below_eight_rows_sorts():
    # 0.19.0/0.24.0 sort the logits below 8 rows (topk_topp_sampler.py:251-255, :279-291):
    # fp32 copy 4 B + sorted values 4 B + int64 indices 8 B + softmax of the sorted 4 B, with
    # the bf16 logits 2 B: 1 row x 248,320 x 22 B = 5,463,040 B; hidden states held:
    # (8,192 + 2) x 2,048 x 2 B = 33,562,624 B. vLLM 0.33.0 always takes the Triton kernel:
    # 2 + 4 x (1 + 2 + 1/1) = 18 B per value (the buffer is one row), 4,469,760 B.
    got, _ = va.sampler_bytes(rules_for("vllm", "0.24.0"), 1, 248320, 2, 2048, 8192)
    assert got == 5_463_040 + 33_562_624
    got33, _ = va.sampler_bytes(rules_for("vllm", "0.33.0"), 1, 248320, 2, 2048, 8192)
    assert got33 == 4_469_760 + 33_562_624


def test_moe_qwen3_30b_a3b_forward_and_workspace():
    # Qwen3-30B-A3B: hidden 2048, 32 heads x 128, 128 experts, 8 per token, expert
    # intermediate 768, no shared expert, no dense layer.
    cfg = _config("Qwen--Qwen3-30B-A3B")
    # Triton experts (fused_moe.py:1976-1991 in 0.19.0), M = 8,192 tokens, N = 2 x 768,
    # K = 2,048: workspace13 = M x 8 x max(768, 2,048) = 134,217,728 values, shared with the
    # output M x K = 16,777,216 (modular_kernel.py:1063-1068), workspace2 = M x 8 x max(1,536,
    # 2,048) = 134,217,728: 268,435,456 bf16 values = 536,870,912 B, held by the workspace
    # manager for the rest of the run
    assert va.moe_workspace_bytes(cfg, 1, 8192, 2) == 536_870_912
    # the layer: held attention output 4,096 + residual 2,048, new residual 2,048, the MoE
    # input 2,048 and router logits 128 values per token: 10,368 x 2 B x 8,192
    assert va.forward_bytes(cfg, 1, 8192, 2) == 8192 * 10368 * 2 == 169_869_312


def test_vision_encoder_phase_qwen36_35b_a3b():
    # The RTX 5090 run: 8,192 batched tokens, max_num_seqs 1, max_model_len 131,072,
    # --limit-mm-per-prompt image 2, bf16. The largest image is 16,384 tokens (the
    # processor's 16,777,216 px / 32^2), so the encoder budget is max(8,192, 16,384) = 16,384
    # (encoder_cache_manager.py:309-314) and the batch holds max(1, min(16,384 // 16,384,
    # 1 x min(2, 131,072 // 16,384))) = 1 item (encoder_budget.py:140-180): 65,536 patches.
    # Per patch (vision hidden D 1,152, MLP F 4,304): a block's attention holds x and
    # norm1(x) 2D, qkv 3D, contiguous q/k 2D, rotated q/k 2D, the attention output D and the
    # projection D = 12,672 values (the MLP: 2D + 2F = 10,912); the dummy pixels
    # 3 x 2 x 16 x 16 = 1,536 and position embeddings 1,152 values: 15,360 x 2 B x 65,536 =
    # 2,013,265,920 B, the peak: the final torch.cat of the outputs (2 x 16,384 tokens x
    # 2,048, the text hidden, x 2 B = 134,217,728 B with the pixels and position embeddings)
    # is smaller. The outputs stay cached: 67,108,864 B (no deepstack layers in this config).
    mc = _config("nvidia--Qwen3.6-35B-A3B-NVFP4")
    rules = rules_for("vllm", "0.24.0")
    peak, cached, why = va.encoder(rules, mc, 1, 8192, 1, 131072, 2, 2, 2048)
    assert cached == 16384 * 2048 * 2 == 67_108_864
    assert peak == 2_013_265_920
    assert "1 image item of 16,384 tokens" in why
    # at TP 2 the heads split: 2D + 8D / 2 + D = 8,064 values per patch in the attention
    # (the MLP 2D + F = 6,608): (8,064 + 1,536 + 1,152) x 2 B x 65,536
    peak2, _, _ = va.encoder(rules, mc, 2, 8192, 1, 131072, 2, 2, 2048)
    assert peak2 == 10752 * 2 * 65536
    # --limit-mm-per-prompt image 0 skips the encoder profile
    assert va.encoder(rules, mc, 1, 8192, 1, 131072, 0, 2, 2048) is None


def test_gemma3_counts_only_its_cached_outputs():
    # Gemma 3: mm_tokens_per_image 256, so 8,192 // 256 = 32 images fill the budget (the
    # decoder bound 1,024 x min(999, 8,192 // 256) is larger); the SigLIP tower itself is not
    # modelled, its outputs are: 32 x 256 x 5,376 (the text hidden) x 2 B = 88,080,384 B.
    mc = _config("google--gemma-3-27b-it")
    peak, cached, _ = va.encoder(rules_for("vllm", "0.19.0"), mc, 1, 8192, 1024, 8192, None,
                                 2, 5376)
    assert peak == cached == 88_080_384


def test_a_later_pipeline_stage_keeps_the_received_tensors():
    # A PP stage after the first allocates the intermediate tensors it receives for
    # max_num_batched_tokens (gpu_model_runner.py:5437-5447 in 0.19.0): hidden states and
    # residual, 2 x 8,192 x 4,096 x 2 B = 134,217,728 B for Llama-2-7b's geometry; the PP4
    # log of Llama-3.1-8B prints 1.05 GiB for a middle stage against 1.1 for the first.
    from kvfit.engines.common import Inputs

    cfg = _config("meta-llama--Llama-2-7b-hf")
    rules = rules_for("vllm", "0.19.0")

    def peak(first: bool) -> int:
        inp = Inputs([], 1, 8192, None, 0, config=cfg, vocab=32000, sampler=False,
                     pp_first=first)
        return va.profile_peak(rules, inp, {}, 1024, 8192, None)[0]

    assert peak(True) == va.forward_bytes(cfg, 1, 8192, 2) == 742_391_808
    assert peak(False) - peak(True) == 134_217_728


def test_qwen3_vl_deepstack_outputs():
    # Qwen3-VL-8B: deepstack layers [8, 16, 24] add three 4,096-wide features per output token
    # (qwen3_vl.py:824-833 in 0.24.0), so one 16,384-token image caches 16,384 x 4,096 x
    # (1 + 3) x 2 B = 536,870,912 B. In the tower, the three features made so far stay live
    # through the later blocks: 65,536 patches x 12,672 values (its vision hidden 1,152 and MLP
    # 4,304 as above) x 2 B + 16,384 x 4,096 x 3 x 2 B = 1,660,944,384 + 402,653,184; the
    # final torch.cat holds 2 x 536,870,912; outside both, the pixels and position
    # embeddings 65,536 x (1,536 + 1,152) x 2 B = 352,321,536.
    mc = _config("Qwen--Qwen3-VL-8B-Instruct")
    peak, cached, _ = va.encoder(rules_for("vllm", "0.24.0"), mc, 1, 8192, 256, 262144, None,
                                 2, 4096)
    assert cached == 536_870_912
    assert peak == 352_321_536 + max(1_660_944_384 + 402_653_184, 2 * 536_870_912)


def test_image_limit_from_the_flag_or_a_log():
    """--limit-mm-per-prompt's image count in either spelling vLLM accepts; anything else (a
    hostile log's value) is one usage error, not a ValueError or KeyError."""
    assert va._image_limit({"limit_mm_per_prompt": {"image": 2, "audio": 0}}) == 2
    assert va._image_limit({"limit_mm_per_prompt": {"image": {"count": 0}}}) == 0
    assert va._image_limit({"limit_mm_per_prompt": {"audio": 1}}) is None
    for bad in ("two", -1, {"size": 3}, [2]):
        with pytest.raises(UsageError, match="not a whole number of items"):
            va._image_limit({"limit_mm_per_prompt": {"image": bad}})
