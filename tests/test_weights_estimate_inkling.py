"""The inkling spec's config-shape weight estimate. No public Inkling config, index or checkpoint
was available: the pinned synthetic config (tests/architectures/inkling/configs/synthetic--inkling)
declares no MoE sizes and gets no estimate, and the tensor list is checked here on a small
SYNTHETIC config written for this test (its values are arbitrary, not Inkling's), with every
count derived by hand under vLLM 0.33's Inkling modules (cited in the spec's parameters sources).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import estimate_of, load_config_dir, param_count, row_of

ARCH = Path(__file__).resolve().parent / "architectures"

# SYNTHETIC (this test only): hidden 64, 4 layers (local 0, 1, 3; global 2), global 4 q / 2 KV
# heads x 16, local 4 q / 4 KV heads x 16, window 8, kernel 4, d_rel 16, rel_extent 1,024,
# vocab 1,000 padded to 1,024, dense MLP of 128 on layer 0 (dense_mlp_idx 1), then 8 routed
# experts of 32 + 1 sink expert, gate bias and global scales.
TINY = {
    "architectures": ["InklingForConditionalGeneration"],
    "model_type": "inkling_mm_model",
    "text_config": {
        "model_type": "inkling_model", "torch_dtype": "bfloat16", "model_max_length": 4096,
        "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "swa_num_attention_heads": 4,
        "swa_num_key_value_heads": 4, "swa_head_dim": 16, "sliding_window_size": 8,
        "local_layer_ids": [0, 1, 3], "use_sconv": True, "sconv_kernel_size": 4,
        "vocab_size": 1000, "padded_vocab_size": 1024, "intermediate_size": 32,
        "dense_intermediate_size": 128, "dense_mlp_idx": 1, "n_routed_experts": 8,
        "n_shared_experts": 1, "shared_expert_sink": True, "use_gate_bias": True,
        "use_global_scale": True,
    },
}


def test_the_pinned_synthetic_config_gets_no_estimate_and_says_why():
    est, why = estimate_of(*load_config_dir(ARCH / "inkling/configs/synthetic--inkling"))
    assert est is None and "intermediate_size" in why


def test_tiny_synthetic_inkling_counted_by_hand():
    #   embed (replicated) and unembed 2 x 1,024 x 64 + final norm 64   =   131,136
    #   every layer: attn_norm, mlp_norm 2 x 64; attn_sconv, mlp_sconv 2 x 64 x 4 -> 640; x 4
    #                                                                   =     2,560
    #   global layer: wq 64 x 64 = 4,096, wk and wv 2 x 32 x 64 = 4,096, wr 64 x 64 = 4,096,
    #     wo 4,096, q/k norms 32, rel_logits_proj 16 x 1,024 = 16,384, k/v sconv 2 x 32 x 4
    #     = 256                                                         =    33,056
    #   local layers: wq 4,096, wk and wv 2 x 64 x 64 = 8,192, wr 4,096, wo 4,096, norms 32,
    #     rel 16 x 8 = 128, sconv 2 x 64 x 4 = 512 -> 21,152; x 3         =    63,456
    #   dense layer 0: w13_dn 256 x 64 = 16,384, w2_md 64 x 128 = 8,192, global_scale 1
    #                                                                   =    24,577
    #   MoE layers: gate 9 x 64 = 576, float32 scale 1 and bias 8, experts 8 x (64 x 64 +
    #     64 x 32) = 49,152, sink 2 x 32 x 64 + 64 x 32 = 6,144 -> 55,881; x 3 =   167,643
    #   total 422,428 parameters; bytes 2 x 422,428 + 2 x (3 + 24) float32 extras = 844,910
    est, why = estimate_of(TINY)
    assert est is not None, why
    assert param_count(est) == 422_428
    assert est.total_bytes == 844_910
    rel = {r.instances: r.elements for r in est.rows if r.module.endswith("rel_logits_proj.proj")}
    assert rel == {1: 16 * 1024, 3: 16 * 8}
    assert row_of(est, "mlp.experts.{e}.w13").instances == 3 * 8
    assert row_of(est, "mlp.experts.{e}.w13").routed
    assert not row_of(est, "shared_experts.w13_weight").routed
    # The embedding is replicated on every TP rank; the unembedding is vocab-sharded.
    assert row_of(est, "model.llm.embed").on_rank(4) == 1024 * 64 * 2
    assert row_of(est, "model.llm.unembed").on_rank(4) == 1024 * 64 * 2 // 4


def test_hf_names_map_onto_the_og_widths():
    # HF names: intermediate_size is the dense width and moe_intermediate_size the expert width
    # (vLLM InklingModelConfig swaps them when dense_intermediate_size is absent).
    hf = json.loads(json.dumps(TINY))
    text = hf["text_config"]
    del text["dense_intermediate_size"]
    text["intermediate_size"], text["moe_intermediate_size"] = 128, 32
    est, why = estimate_of(hf)
    assert est is not None, why
    assert param_count(est) == 422_428


def test_towers_and_an_incomplete_moe_are_refused():
    vis = json.loads(json.dumps(TINY)) | {"vision_config": {"decoder_dmodel": 64}}
    refused, why = estimate_of(vis)
    assert refused is None and "vision or audio tower" in why
    no_sink = json.loads(json.dumps(TINY))
    no_sink["text_config"]["shared_expert_sink"] = False
    refused, why = estimate_of(no_sink)
    assert refused is None and "shared_expert_sink" in why
