"""Weight estimates from config shapes (architecture specs' `parameters:`).

Expected totals are derived by hand from the pinned configs (derivations in comments), or are
the `metadata.total_size` a pinned safetensors index states.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.checkpoint.estimate import _Matcher, estimate_weights
from kvfit.checkpoint.metadata import Metadata
from kvfit.checkpoint.quant import summarize
from kvfit.specs.architecture import compile_architecture
from kvfit.specs.loader import load_file
from kvfit.specs.schema import check
from kvfit.state.resolve import resolve_architecture

ROOT = Path(__file__).resolve().parent
CONFIGS = ROOT / "fixtures" / "model-configs"


def _config(name: str) -> dict:
    return json.loads((CONFIGS / name / "config.json").read_text())


def _estimate(cfg: dict, model_bytes=2):
    return estimate_weights(resolve_architecture(cfg), summarize(Metadata("x", "local", cfg)),
                            model_bytes)


def test_qwen3_8b_matches_its_parameter_count():
    # Qwen3-8B: vocab 151,936, hidden 4,096, 36 layers, 32 q / 8 kv heads x 128, MLP 12,288,
    # untied. Embedding + lm_head 2 x 151,936 x 4,096 = 1,244,659,712. Per layer: q/o
    # 2 x 4,096 x 4,096 = 33,554,432, k/v 2 x 1,024 x 4,096 = 8,388,608, MLP 3 x 12,288 x
    # 4,096 = 150,994,944, q/k norms 2 x 128, layer norms 2 x 4,096 -> 192,946,432 x 36 =
    # 6,946,071,552; + final norm 4,096 = 8,190,735,360 parameters x 2 B (bf16).
    est, why = _estimate(_config("Qwen--Qwen3-8B"))
    assert est is not None, why
    assert est.total_bytes == 8_190_735_360 * 2
    assert "estimate from config shapes" in why and "qwen3" in why
    # TP4: everything splits 4 ways except 36 x (2 x 4,096 + 2 x 128) + 4,096 norm values
    # (304,384 values = 608,768 B), which every rank keeps whole.
    replicated = (36 * (2 * 4096 + 2 * 128) + 4096) * 2
    assert est.rank_bytes(4) == (est.total_bytes - replicated) // 4 + replicated


def test_llama_3_1_8b_matches_its_parameter_count():
    # Llama-3.1-8B: vocab 128,256, hidden 4,096, 32 layers, 32 q / 8 kv heads x 128, MLP
    # 14,336, untied, no biases. Embedding + lm_head 2 x 128,256 x 4,096 = 1,050,673,152.
    # Per layer: attention 2 x 4,096^2 + 2 x 1,024 x 4,096 = 41,943,040, MLP 3 x 14,336 x
    # 4,096 = 176,160,768, norms 8,192 -> 218,112,000 x 32 = 6,979,584,000; + final norm
    # 4,096 = 8,030,261,248 parameters (Meta's "8B") x 2 B.
    est, _ = _estimate(_config("meta-llama--Llama-3.1-8B"))
    assert est.total_bytes == 8_030_261_248 * 2


def test_fp8_block_checkpoint_counts_its_scales():
    # Qwen3-8B-FP8 (weight_block_size [128, 128], float32 weight_scale_inv). Per layer, the
    # FP8 linears store 1 B per element plus 4 B per 128 x 128 block:
    #   q, o: 4,096 x 4,096 -> 16,777,216 + 32 x 32 x 4 = 16,781,312 each
    #   k, v: 1,024 x 4,096 ->  4,194,304 +  8 x 32 x 4 =  4,195,328 each
    #   gate, up: 12,288 x 4,096 and down: 4,096 x 12,288 -> 50,331,648 + 96 x 32 x 4
    #     = 50,343,936 each
    # = 2 x 16,781,312 + 2 x 4,195,328 + 3 x 50,343,936 = 192,985,088 B per layer, x 36 =
    # 6,947,463,168. Kept at bf16: embedding + lm_head 2 x 622,329,856 values, norms
    # 36 x 8,448 + 4,096 values -> (1,244,659,712 + 308,224) x 2 B = 2,489,935,872.
    est, why = _estimate(_config("Qwen--Qwen3-8B-FP8"))
    assert est.total_bytes == 6_947_463_168 + 2_489_935_872
    assert "fp8-block" in why


def test_exclusion_list_keeps_the_router_at_the_model_dtype():
    # Qwen3-235B-A22B-FP8 lists every layer's mlp.gate in modules_to_not_convert.
    est, _ = _estimate(_config("Qwen--Qwen3-235B-A22B-FP8"))
    gate = next(r for r in est.rows if r.module.endswith("mlp.gate"))
    experts = next(r for r in est.rows if r.module.endswith("experts.{e}.up_proj"))
    # 94 layers x 128 x 4,096 router weights at 2 B
    assert gate.stored_as == "model dtype" and gate.bytes == 94 * 128 * 4096 * 2
    # 94 x 128 experts of [1,536, 4,096]: 1 B each + 12 x 32 blocks x 4 B of scales
    assert experts.stored_as == "fp8-block"
    assert experts.bytes == 94 * 128 * (1536 * 4096 + 12 * 32 * 4)


@pytest.mark.parametrize("name", ["mistralai--Devstral-Small-2507", "google--medgemma-27b-it"])
def test_estimate_against_pinned_index_total_size(name):
    index = json.loads((CONFIGS / name / "model.safetensors.index.json").read_text())
    total = index["metadata"]["total_size"]
    est, _ = _estimate(_config(name))
    # every tensor is listed (for medgemma the SigLIP tower and projector too, derived in
    # tests/test_weights_estimate_vision.py), so the bytes agree exactly
    assert est.total_bytes == total


def test_matcher_semantics():
    plain = _Matcher(("mlp.gate", "lm_head"))
    assert plain("model.layers.3.mlp.gate") and plain("lm_head")
    assert not plain("model.layers.3.mlp.gate_proj")
    glob = _Matcher(("model.layers.*.self_attn",))
    assert glob("model.layers.7.self_attn.q_proj") and not glob("model.layers.7.mlp.up_proj")
    regex = _Matcher((r"re:.*mlp\.experts.*",))
    assert regex("model.layers.0.mlp.experts.3.up_proj") and not regex("model.layers.0.mlp.gate")
    assert _Matcher(("Linear",))("anything.at.all")


def test_unavailable_estimates_say_why():
    cfg = _config("Qwen--Qwen3-8B")
    del cfg["vocab_size"]
    est, why = _estimate(cfg)
    assert est is None and "vocab_size" in why
    moe = _config("Qwen--Qwen3-30B-A3B")
    moe["mlp_only_layers"] = [0]
    est, why = _estimate(moe)
    assert est is None and "dense-MLP and MoE layers" in why
    bnb = dict(_config("Qwen--Qwen3-8B"), quantization_config={
        "quant_method": "bitsandbytes", "load_in_8bit": True})
    est, why = _estimate(bnb)
    assert est is None and "no storage rule for bitsandbytes-8bit" in why


def test_bad_parameters_block_is_located(tmp_path):
    spec = (ROOT.parent / "specs" / "architectures" / "qwen3.yaml").read_text()
    bad = spec.replace('layers: "*", count: hidden}', 'layers: "evry", count: hiden}', 1)
    path = tmp_path / "qwen3.yaml"
    path.write_text(bad)
    doc, problems = load_file(path, "qwen3.yaml", False)
    assert not problems and not check(doc, "architecture.v1.schema.json")
    arch, problems = compile_architecture(doc)
    assert arch is None
    codes = {p.code for p in problems}
    assert codes == {"KV124", "KV201"}, problems
    text = " ".join(p.message for p in problems)
    assert "'evry'" in text and "hiden" in text


def test_absent_optional_list_counts_as_empty():
    # Qwen3-30B-A3B without mlp_only_layers: every layer is MoE, as with an empty list.
    cfg = _config("Qwen--Qwen3-30B-A3B")
    with_list, _ = _estimate(dict(cfg, mlp_only_layers=[]))
    cfg.pop("mlp_only_layers", None)
    without, why = _estimate(cfg)
    assert without is not None, why
    assert without.total_bytes == with_list.total_bytes


@pytest.mark.parametrize("path", ["model.layers.3.mlp.experts.17.w1", "lm_head", "a.b",
                                  "model.layers.10.self_attn.q_proj", "x..y"])
def test_plain_names_match_any_run_of_whole_segments_of_their_own_length(path):
    """A plain name matches a path when it equals some run of consecutive whole segments;
    only runs as long as some name are tried. Every run, written out here by slicing, gives
    the same answers."""
    names = ["layers.3.mlp", "lm_head", "experts.17.w1", "model.layers.10.self_attn.q_proj",
             "b", "mlp.experts", "x.", "layers.30.mlp"]
    parts = path.split(".")
    every = {".".join(parts[a:b]) for a in range(len(parts)) for b in range(a + 1, len(parts) + 1)}
    for name in names:
        assert _Matcher((name,))(path) == (name in every), (name, path)
    assert _Matcher(tuple(names))(path) == bool(every & set(names))
