"""Config-shape weight estimate for GLM-5.3-Flash (glm5_next) against vLLM 0.33's own build.

No safetensors index of GLM-5.3-Flash is pinned. The reference is vLLM's model class built on
the meta device at TP 1 from the pinned config (tests/engine_probe/vllm_param_probe.py; its
output is tests/engine_probe/vllm-0.33.0-params-glm5next.txt, checked in beside it). vLLM fuses
some projections (q/k/v/b/f_a/g_a of KDA, gate/up, q_a/kv_a), so names differ from the
checkpoint's, but the element counts and dtypes are vLLM's.
"""

from __future__ import annotations

from pathlib import Path

from conftest import estimate_of, load_config_dir

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "architectures/glm5_next/configs/zai-org--GLM-5.3-Flash"
RECORD = HERE / "engine_probe/vllm-0.33.0-params-glm5next.txt"


def _recorded() -> dict[str, int]:
    return {line.split()[1]: int(line.split()[2]) for line in RECORD.read_text().splitlines()
            if line.startswith("bytes ")}


def test_glm53_flash_estimate_equals_vllms_own_build():
    recorded = _recorded()
    # vLLM's bytes: 627,702,807,040 bf16 + 156,141,816 float32 = 627,858,948,856.
    assert recorded == {"bfloat16": 627_702_807_040, "float32": 156_141_816,
                        "total": 627_858_948_856}
    est, why = estimate_of(*load_config_dir(CONFIG))
    assert est is not None, why
    assert est.total_bytes == recorded["total"]
    assert "glm5_next" in why and "MTP" not in why
    # By hand, the float32 part (hidden 4,096, hc_mult 4, 45 layers; 34 KDA layers of 64 x 128
    # with conv 4; 11 DSA layers with index_head_dim 128, index_kpool 4; 42 routed layers of
    # 288 experts):
    #   hc fn 2 x 24 x 16,384 + base 2 x 24 + scale 2 x 3 = 786,486 per layer x 45 = 35,391,870
    #   KDA conv 3 x 8,192 x 4 + dt_bias 8,192 + A_log 64 = 106,560 x 34           =  3,623,040
    #   indexer k_norm 2 x 128 + kpool ape 4 x 128 = 768 x 11                      =      8,448
    #   router bias 288 x 42                                                        =     12,096
    #   = 39,035,454 values x 4 B                                                   = 156,141,816
    assert (35_391_870 + 3_623_040 + 8_448 + 12_096) * 4 == recorded["float32"]


def _with_mtp(config: dict):
    from kvfit.checkpoint.estimate import estimate_weights
    from kvfit.checkpoint.metadata import Metadata
    from kvfit.checkpoint.quant import summarize
    from kvfit.state.resolve import resolve_architecture

    return estimate_weights(resolve_architecture(config), summarize(Metadata("x", "local", config)), 2,
                            mtp=True)


def test_glm53_flash_mtp_adds_one_dsa_moe_layer():
    config, _ = load_config_dir(CONFIG)
    base, _ = estimate_of(config, None)
    with_mtp, why = _with_mtp(config)
    assert with_mtp is not None and "MTP layers included" in why
    # One MTP layer (no hyper-connections): enorm, hnorm, shared-head norm 3 x 4,096; eh_proj
    # 4,096 x 8,192 = 33,554,432; two layer norms 8,192; MLA fused_qkv_a 2,048 x 4,096 =
    # 8,388,608, q_a/kv_a norms 2,048, q_b 16,384 x 1,536 = 25,165,824, kv_b 32,768 x 512 =
    # 16,777,216, o 4,096 x 16,384 = 67,108,864; indexer wq_b 4,096 x 1,536 = 6,291,456,
    # wk_weights_proj 160 x 4,096 = 655,360, kpool gate 128 x 4,096 = 524,288; router
    # 288 x 4,096 = 1,179,648; experts 288 x 3 x 2,048 x 4,096 = 7,247,757,312; shared expert
    # 3 x 2,048 x 4,096 = 25,165,824. bf16 total 7,432,591,360 values = 14,865,182,720 B;
    # FP32: indexer k_norm + ape 768 + router bias 288 = 1,056 values = 4,224 B.
    bf16 = (3 * 4096 + 33_554_432 + 8192 + 8_388_608 + 2048 + 25_165_824 + 16_777_216
            + 67_108_864 + 6_291_456 + 655_360 + 524_288 + 1_179_648 + 7_247_757_312 + 25_165_824)
    assert bf16 == 7_432_591_360
    assert with_mtp.total_bytes - base.total_bytes == bf16 * 2 + 1056 * 4
