"""Config-shape weight estimates for the gpt-oss, Llama 4 and Mixtral MoE families.

Every expected total is derived by hand from a pinned config (derivation in the comments);
gpt-oss is also checked against its pinned safetensors index, and Llama-4-Scout against the
per-rank weights vLLM 0.19.0 printed at TP4.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvfit.checkpoint.estimate import estimate_weights
from kvfit.checkpoint.metadata import Metadata
from kvfit.checkpoint.quant import summarize
from kvfit.state.resolve import resolve_architecture

ARCH = Path(__file__).resolve().parent / "architectures"
GIB = 2**30


def _config(spec: str, name: str) -> dict:
    return json.loads((ARCH / spec / "configs" / name / "config.json").read_text())


def _estimate(cfg: dict, model_bytes=2):
    return estimate_weights(resolve_architecture(cfg), summarize(Metadata("x", "local", cfg)),
                            model_bytes)


def test_gpt_oss_20b_reproduces_its_index_total_size():
    # gpt-oss-20b: vocab 201,088, hidden 2,880, 24 layers, 64 q / 8 kv heads x 64, 32 experts
    # of intermediate 2,880, attention_bias true, untied. MXFP4 for every linear except those
    # modules_to_not_convert lists (self_attn, mlp.router, embed_tokens, lm_head): the experts.
    # Embedding + lm_head: 2 x 201,088 x 2,880 x 2 B = 2,316,533,760.
    # Per layer (bf16 unless said):
    #   q, o weights 2 x 4,096 x 2,880 x 2 B                          =  47,185,920
    #   k, v weights 2 x   512 x 2,880 x 2 B                          =   5,898,240
    #   q/k/v/o biases (4,096 + 512 + 512 + 2,880) x 2 B              =      16,000
    #   sinks 64 x 2 B                                                =         128
    #   input/post-attention norms 2 x 2,880 x 2 B                    =      11,520
    #   router 32 x 2,880 x 2 B + bias 32 x 2 B                       =     184,384
    #   gate_up MXFP4 per expert [5,760, 2,880]: 5,760 x 2,880 / 2
    #     + 5,760 x 90 scale bytes = 8,812,800; x 32                  = 282,009,600
    #   down MXFP4 per expert [2,880, 2,880]: 2,880 x 2,880 / 2
    #     + 2,880 x 90 = 4,406,400; x 32                              = 141,004,800
    #   expert biases 32 x (5,760 + 2,880) x 2 B                      =     552,960
    #   = 476,863,552 B; x 24 = 11,444,725,248.
    # Total: 2,316,533,760 + 11,444,725,248 + final norm 5,760 = 13,761,264,768 B.
    est, why = _estimate(_config("gpt_oss", "openai--gpt-oss-20b"))
    assert est is not None, why
    assert est.total_bytes == 13_761_264_768
    assert "mxfp4" in why
    # The pinned index lists 459 tensors = 3 + 24 x 19 (the rows above, with each MXFP4
    # expert weight as *_blocks + *_scales) and states total_size 13,761,264,768: the gap is
    # 0 B. Tolerance 0: every tensor of the index is accounted for, with its stored bytes
    # (the sinks' 64 x 2 B per layer was the last residual; they are bf16 in the file).
    index = json.loads((ARCH / "gpt_oss" / "configs" / "openai--gpt-oss-20b"
                        / "model.safetensors.index.json").read_text())
    assert len(index["weight_map"]) == 3 + 24 * 19
    assert index["metadata"]["total_size"] - est.total_bytes == 0
    # The exclusion globs keep attention and the router at bf16.
    stored = {r.module.rsplit(".", 1)[-1]: r.stored_as for r in est.rows}
    assert stored["q_proj"] == stored["router"] == "model dtype"
    assert stored["gate_up_proj"] == stored["down_proj"] == "mxfp4"


def test_llama4_scout_text_decoder_and_the_vllm_tp4_weights():
    # Llama-4-Scout (text_config): vocab 202,048, hidden 5,120, 48 layers, 40 q / 8 kv heads
    # x 128, interleave_moe_layer_step 1 (every layer MoE), 16 experts and a shared expert
    # of intermediate 8,192, no biases, untied; bf16.
    # Embedding + lm_head 2 x 202,048 x 5,120 = 2,068,971,520 parameters.
    # Per layer: attention 2 x 5,120^2 + 2 x 1,024 x 5,120 = 62,914,560; routed experts
    # 16 x 3 x 8,192 x 5,120 = 2,013,265,920; shared expert 3 x 8,192 x 5,120 = 125,829,120;
    # router 16 x 5,120 = 81,920; norms 2 x 5,120 = 10,240 -> 2,202,101,760 x 48 =
    # 105,700,884,480. + final norm 5,120 = 107,769,861,120 parameters x 2 B
    # = 215,539,722,240 B for the text decoder; the vision encoder and projector add
    # 871,932,416 parameters (derived in tests/test_weights_estimate_vision.py).
    est, why = _estimate(_config("llama4", "meta-llama--Llama-4-Scout-17B-16E-Instruct"))
    assert est is not None, why
    assert est.total_bytes == (107_769_861_120 + 871_932_416) * 2
    # TP4: every rank keeps the norms (48 x 2 x 5,120 + 5,120 = 496,640 values) and the
    # routers (48 x 16 x 5,120 = 3,932,160 values) whole: 8,857,600 B; the rest splits 4
    # ways (k/v: 8 heads over 4 ranks). (215,539,722,240 - 8,857,600) / 4 + 8,857,600
    # = 53,891,573,760 B. Of the tower, the class and position embeddings, the LayerNorms
    # and the o_proj / fc2 biases stay whole (1,408 + 812,416 + 5,632 + 34 x (4 x 1,408 +
    # 2 x 1,408) = 1,106,688 values = 2,213,376 B); its other 870,825,728 values split 4
    # ways (435,412,864 B): 54,329,200,000 B = 50.60 GiB.
    assert est.rank_bytes(4) == 53_891_573_760 + 435_412_864 + 2_213_376 == 54_329_200_000
    # vLLM 0.19.0 printed "weights memory: 53.12GiB" per rank for this checkpoint at TP4 on
    # H100 (tests/fixtures/engine_logs/vllm-0.19.0-llama-4-scout-17b-16e-instruct-h100-tp4.log):
    # the estimate is 2.52 GiB (4.7%) lower; most likely vLLM's RoPE cos/sin cache for
    # max_position_embeddings 10,485,760 positions x 128 x 2 B = 2.5 GiB, which is not a
    # checkpoint weight.
    printed = 53.12 * GIB
    assert 0 < printed - est.rank_bytes(4) < 0.06 * printed


def test_llama4_maverick_interleaves_dense_and_moe_layers():
    # Maverick: as Scout but 128 experts and interleave_moe_layer_step 2: layers 1, 3, ..., 47
    # (24) are MoE, the 24 even layers a dense MLP of intermediate_size_mlp 16,384.
    # Per MoE layer: 128 x 3 x 8,192 x 5,120 + 3 x 8,192 x 5,120 + 128 x 5,120
    # = 16,106,127,360 + 125,829,120 + 655,360 = 16,232,611,840; per dense layer
    # 3 x 16,384 x 5,120 = 251,658,240. Attention + norms 62,924,800 on all 48 layers.
    # 2,068,971,520 + 48 x 62,924,800 + 24 x 16,232,611,840 + 24 x 251,658,240 + 5,120
    # = 400,711,848,960 parameters x 2 B.
    cfg = _config("llama4", "meta-llama--Llama-4-Maverick-17B-128E-Instruct")
    est, why = _estimate(cfg)
    assert est is not None, why
    assert est.total_bytes == 400_711_848_960 * 2
    rows = {r.module.split("layers.{i}.")[-1]: r for r in est.rows}
    assert rows["feed_forward.router"].instances == 24
    assert rows["feed_forward.gate_proj"].instances == 24
    # transformers follows a declared moe_layers, vLLM only the step: a list of another
    # length is refused, one consistent with the step is accepted.
    bad = json.loads(json.dumps(cfg))
    bad["text_config"]["moe_layers"] = list(range(48))
    est, why = _estimate(bad)
    assert est is None and "moe_layers" in why
    good = json.loads(json.dumps(cfg))
    good["text_config"]["moe_layers"] = list(range(1, 48, 2))
    assert _estimate(good)[0].total_bytes == 400_711_848_960 * 2


def test_llama4_fp8_dynamic_exclusions_match_the_language_model_paths():
    # RedHatAI's FP8-dynamic Scout ignores language_model.model.layers.N.self_attn.*,
    # ...feed_forward.router and language_model.lm_head: those stay bf16; the experts and
    # the shared expert are FP8 (1 B per element + one 4-byte scale per output row).
    est, why = _estimate(_config("llama4", "RedHatAI--Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"))
    assert est is not None, why
    rows = {r.module.split("layers.{i}.")[-1]: r for r in est.rows}
    assert rows["self_attn.q_proj"].stored_as == rows["feed_forward.router"].stored_as \
        == "model dtype"
    up = rows["feed_forward.experts.{e}.up_proj"]
    assert up.stored_as == "fp8" and up.bytes == 48 * 16 * (8192 * 5120 + 8192 * 4)


def test_mixtral_8x7b_matches_its_parameter_count():
    # Mixtral-8x7B: vocab 32,000, hidden 4,096, 32 layers, 32 q / 8 kv heads x 128, 8 experts
    # of intermediate 14,336, untied, no biases; bf16.
    # Embedding + lm_head 2 x 32,000 x 4,096 = 262,144,000 parameters.
    # Per layer: attention 2 x 4,096^2 + 2 x 1,024 x 4,096 = 41,943,040; experts
    # 8 x 3 x 14,336 x 4,096 = 1,409,286,144; router (block_sparse_moe.gate) 8 x 4,096 =
    # 32,768; norms 2 x 4,096 = 8,192 -> 1,451,270,144 x 32 = 46,440,644,608.
    # + final norm 4,096 = 46,702,792,704 parameters ("46.7B") x 2 B = 93,405,585,408 B.
    est, why = _estimate(_config("mixtral", "mistralai--Mixtral-8x7B-v0.1"))
    assert est is not None, why
    assert est.total_bytes == 46_702_792_704 * 2
    # TP2: norms (32 x 2 x 4,096 + 4,096 = 266,240 values) and routers (32 x 32,768 =
    # 1,048,576 values) stay whole on each rank (2,629,632 B); k/v split over 8 heads.
    replicated = (266_240 + 1_048_576) * 2
    assert est.rank_bytes(2) == (est.total_bytes - replicated) // 2 + replicated
