"""Weights as vLLM loads them (kvfit/engines/load_quant.py): `--quantization fp8` on a bf16
checkpoint, and a served 8-bit checkpoint whose pinned config is a bf16 stand-in. Expected
bytes are derived by hand from the pinned configs below; the engine figures they are compared
with are the ones the fixture logs print."""

from __future__ import annotations

import json

import pytest
from engine_log_cases import load_cases

from kvfit.engines.explain import explain
from kvfit.errors import ConfigError

CASES = {c.slug: c for c in load_cases()}
GIB = 2**30


def _weights_row(case, **kw) -> dict:
    res = explain(case.text, model_dir=str(case.model_dir), engine_version=kw.pop(
        "version", case.version), tp=case.tp, hardware=case.hardware, flags=case.thread_flags
                  | kw.pop("flags", {}), log_weights=False, **kw)
    return next(r for r in res["rows"] if r["number"] == "weights per GPU")


def test_online_fp8_llama_8b():
    # meta-llama--Llama-3.1-8B config: hidden 4096, 32 layers, 32 heads, 8 KV heads x 128,
    # intermediate 14336, vocab 128256, untied, bf16. vLLM 0.19 `--quantization fp8` keeps the
    # embedding and LM head in bf16 and stores every linear weight as fp8 (+ one fp32 scale per
    # output row in kvfit's storage rule, an upper bound on vLLM's per-tensor scale).
    # Per layer elements: q 4096*4096 + k 1024*4096 + v 1024*4096 + o 4096*4096
    #   + gate/up/down 3 * 14336*4096 = 16,777,216*2 + 4,194,304*2 + 58,720,256*3 = 218,103,808
    # rows: 4096+1024+1024+4096+14336+14336+4096 = 43,008 -> 172,032 B of scales
    # 32 layers: (218,103,808 + 172,032) * 32 = 6,984,826,880 B
    # embed + lm_head: 2 * 128256*4096 * 2 B = 2,101,346,304 B; norms (2*32+1)*4096 * 2 B = 532,480
    # vLLM's RoPE cos/sin cache (llama3 rope, one shared instance): max_position_embeddings
    #   131072 x head_dim 128 x 2 B = 33,554,432 B (kvfit/engines/rope_cache.py)
    expected = 6_984_826_880 + 2_101_346_304 + 532_480 + 33_554_432      # 9,120,260,096 B
    row = _weights_row(CASES["vllm-0.19.0-llama-3.1-8b-instruct-qfp8-h100-tp1"])
    assert row["predicted"] == pytest.approx(expected / GIB, abs=1e-9)
    assert "--quantization fp8" in row["rule"]
    # the engine printed 8.49 GiB (the run's 'Model loading took' line): within 0.1 %
    assert abs(row["predicted"] - 8.49) / 8.49 < 0.001


def test_online_fp8_refused_by_vllm_033():
    # vllm 0.33.0 model_executor/layers/quantization/fp8.py:106-112: `fp8` on a checkpoint
    # that is not fp8-serialized raises and names fp8_per_tensor.
    case = CASES["vllm-0.19.0-llama-3.1-8b-instruct-qfp8-h100-tp1"]
    with pytest.raises(ConfigError, match="refuses --quantization fp8") as err:
        _weights_row(case, version="0.33.0")
    assert "fp8_per_tensor" in err.value.hint
    # the online method of that release sizes as the old fp8 one did
    row = _weights_row(case, version="0.33.0", flags={"quantization": "fp8_per_tensor"})
    assert row["predicted"] == pytest.approx(9_120_260_096 / GIB, abs=1e-9)


def test_served_fp8_llama_70b_tp2():
    # meta-llama--Llama-3.3-70B-Instruct config (the stand-in for the RedHatAI fp8-dynamic
    # checkpoint, whose per-layer lines say CompressedTensorsW8A8Fp8): hidden 8192, 80 layers,
    # 64 heads, 8 KV heads x 128, intermediate 28672, vocab 128256, untied.
    # Per layer elements: q,o 2 * 8192*8192 = 134,217,728; k,v 2 * 1024*8192 = 16,777,216;
    #   gate/up/down 3 * 28672*8192 = 704,643,072 -> 855,638,016; scale rows
    #   8192+1024+1024+8192+28672*2+8192 = 83,968 -> 335,872 B; 80 layers: 68,477,911,040 B,
    #   half per TP2 rank: 34,238,955,520
    # embed + lm_head 2 * 128256*8192 * 2 B = 4,202,692,608, vocab-split: 2,101,346,304 per rank
    # norms (2*80+1)*8192 * 2 B = 2,637,824 on every rank; the RoPE cache 131072 x 128 x 2 B =
    # 33,554,432 on every rank
    expected = 34_238_955_520 + 2_101_346_304 + 2_637_824 + 33_554_432   # 36,376,494,080 B
    case = CASES["vllm-0.19.0-llama-3.3-70b-fp8-dynamic-h100-tp2"]
    assert case.served_format == "fp8"
    row = _weights_row(case, served_format=case.served_format)
    assert row["predicted"] == pytest.approx(expected / GIB, abs=1e-9)
    # the engine printed 33.88 GiB per rank
    assert abs(row["predicted"] - 33.88) / 33.88 < 0.001


def test_checkpoint_declaration_wins_over_the_flag():
    # A checkpoint that declares its own quantization is sized by that declaration; the
    # load-time rule only applies to checkpoints that declare none.
    from kvfit.checkpoint.quant import QuantSummary
    from kvfit.engines.load_quant import load_time

    declared = QuantSummary(method="compressed-tensors")
    assert load_time("vllm", "0.19.0", "fp8", declared) == (None, None)
    assert load_time("sglang", "0.5.23", "fp8", None) == (None, None)
    summary, why = load_time("vllm", "0.19.0", "fp8", QuantSummary())
    assert summary.module_groups == (("fp8", ("Linear",)),) and "fp8" in why


def test_rope_cache_llama4_scout():
    # meta-llama--Llama-4-Scout-17B-16E-Instruct text_config: max_position_embeddings 10,485,760,
    # head_dim 128, rope_type llama3, bf16: 10,485,760 x 128 x 2 B = 2,684,354,560 B = 2.5 GiB on
    # every rank, the gap between the log's 53.12 GiB per rank and the checkpoint's share
    from kvfit.engines.rope_cache import rope_cache_bytes

    case = CASES["vllm-0.19.0-llama-4-scout-17b-16e-instruct-h100-tp4"]
    text = json.loads((case.model_dir / "config.json").read_text())["text_config"]
    assert rope_cache_bytes(text, 2)[0] == 2_684_354_560
    row = _weights_row(case)
    assert abs(row["predicted"] - 53.12) / 53.12 < 0.001
    # kinds whose cache is not max_position x rotary_dim get no term
    assert rope_cache_bytes(text | {"rope_scaling": {"rope_type": "yarn", "factor": 4}}, 2)[0] \
        is None
