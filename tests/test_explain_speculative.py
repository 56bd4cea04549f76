"""explain-log reads the run's --speculative-config (#11 rule 7, MTP): an MTP method runs the
checkpoint's own MTP layers as the draft, whose KV joins the target's pool in the same groups.

The log is the public vLLM 0.24.0 MTP run on 2x RTX 3090 (tests/fixtures/engine_logs/
vllm-0.24.0-qwen3.6-27b-fp8-mtp-2x3090-tp2.*); its geometry is the pinned Qwen3.5-27B stand-in
config (64 layers = 16 full attention + 48 GDN, mtp_num_hidden_layers 1).
"""

from __future__ import annotations

from engine_log_cases import load_cases

from kvfit.engines.explain import explain

CASE = next(c for c in load_cases() if c.slug == "vllm-0.24.0-qwen3.6-27b-fp8-mtp-2x3090-tp2")
SPEC = {"method": "mtp", "num_speculative_tokens": 3}


def _rows(flags: dict) -> dict:
    res = explain(CASE.text, model_dir=str(CASE.model_dir), engine_version="0.24.0", tp=2,
                  hardware="custom:24", flags=flags)
    return {r["number"]: r for r in res["rows"]}


def _base() -> dict:
    return {k: v for k, v in CASE.thread_flags.items() if k != "speculative_config"}


def test_mtp_draft_layer_joins_the_attention_groups():
    rows = _rows(_base() | {"speculative_config": SPEC})
    # per rank at TP 2, fp8 cache: attention page 2 KV heads x (256 + 256) x 1 B = 1,024 B per
    # token; GDN state 5,120 x 3 x 2 B + 24 x 128 x 128 x 4 B = 1,603,584 B -> attention block
    # 16 x ceil(1,603,584 / 16,384) = 1,568 tokens. 16 attention layers + 1 MTP draft layer = 17,
    # 48 GDN layers -> groups of 17 (3 padding layers): block = 17 x 1,568 x 1,024 = 27,295,744 B
    assert rows["attention block size"]["predicted"] == 1568
    assert rows["padding layers"]["predicted"] == 3
    assert rows["bytes per block (per GPU)"]["predicted"] == 17 * 1568 * 1024 == 27_295_744
    # 5.33 GiB // 27,295,744 B = 209 blocks; a request holds ceil(262,144 / 1,568) = 168
    # attention blocks + 3 GDN groups x (2 + 3 speculative) = 183: int(209 / 183 x 262,144)
    assert rows["num_gpu_blocks, from the printed memory"]["predicted"] == 209
    tokens = rows["GPU KV cache size, from the printed memory"]
    assert tokens["predicted"] == 209 * 262_144 // 183 == 299_388
    assert tokens["printed"] == 300_220 and abs(tokens["diff_pct"]) < 0.5


def test_without_the_speculative_config_the_draft_layer_is_not_counted():
    rows = _rows(_base())
    # 16 attention layers, groups of 16, no padding: block 16 x 1,568 x 1,024 = 25,690,112 B;
    # 5.33 GiB // 25,690,112 = 222 blocks; no speculative blocks: 168 + 3 x 2 = 174 per request
    assert rows["bytes per block (per GPU)"]["predicted"] == 16 * 1568 * 1024
    assert "padding layers" not in rows or not rows["padding layers"]["predicted"]
    assert rows["GPU KV cache size, from the printed memory"]["predicted"] == \
        222 * 262_144 // 174 == 334_459


def test_a_draft_model_method_adds_no_mtp_layer():
    # 'ngram' drafts from the prompt (no draft KV); only MTP methods run the model's MTP layers
    rows = _rows(_base() | {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})
    assert rows["bytes per block (per GPU)"]["predicted"] == 16 * 1568 * 1024


def test_the_log_printed_speculative_config_is_read():
    line = ("(APIServer pid=1) INFO 07-06 10:43:59 [api_utils.py:273] non-default args: "
            "{'model': 'x', 'speculative_config': {'method': 'qwen3_5_mtp', "
            "'num_speculative_tokens': 3}}\n")
    res = explain(line + CASE.text, model_dir=str(CASE.model_dir), engine_version="0.24.0",
                  tp=2, hardware="custom:24", flags=_base())
    rows = {r["number"]: r for r in res["rows"]}
    assert rows["bytes per block (per GPU)"]["predicted"] == 27_295_744


def _weights(flags: dict) -> int:
    res = explain(CASE.text, model_dir=str(CASE.model_dir), engine_version="0.24.0", tp=2,
                  hardware="custom:24", flags=flags)
    return res["prediction"]["memory"]["weights_bytes"]["value"]


def test_the_mtp_draft_weights_are_loaded_with_the_target():
    # vLLM loads the drafter inside the same memory profiler as the target
    # (v1/worker/gpu_model_runner.py:4988-5012 in 0.33.0) and shares the target's embedding and
    # LM head at PP 1 (v1/spec_decode/llm_base_proposer.py:1418-1470): the draft adds its own
    # layer only. Qwen3.5-27B (hidden 5,120, 24 heads x 256 with the output gate, 4 KV heads,
    # intermediate 17,408), per rank at TP 2, under the run's --quantization fp8 (1 B per
    # linear weight, one float32 scale per output row of the rank's shard):
    #   fc [5,120, 10,240] (a ColumnParallelLinear, qwen3_5_mtp.py:98-106): 52,428,800 / 2
    #   q_proj 12,288 x 5,120 / 2 = 31,457,280; k, v 1,024 x 5,120 / 2 = 2,621,440 each
    #   o_proj 5,120 x 6,144 / 2 = 15,728,640; gate, up, down 17,408 x 5,120 / 2 = 44,564,480 each
    linear = 26_214_400 + 31_457_280 + 2 * 2_621_440 + 15_728_640 + 3 * 44_564_480
    #   scale rows: fc 2,560 + q 6,144 + k 512 + v 512 + o 2,560 + gate 8,704 + up 8,704 + down 2,560
    scales = (2_560 + 6_144 + 512 + 512 + 2_560 + 8_704 + 8_704 + 2_560) * 4
    #   norms (bf16, every rank): 3 MTP norms + input and post-attention norms x 5,120, q/k norms x 256
    norms = (5 * 5_120 + 2 * 256) * 2
    assert linear + scales + norms == 212_517_888
    base = _base() | {"quantization": "fp8"}
    assert _weights(base | {"speculative_config": SPEC}) - _weights(base) == 212_517_888


def test_speculative_tokens_widen_the_cuda_graph_capture_sizes():
    # vLLM captures up to 2 x max_num_seqs x (1 + speculative tokens) tokens
    # (vllm/config/vllm.py:1689-1691 in 0.24.0, this log's release; :2463-2470 in 0.33.0): for this
    # run 2 x 2 x 4 = 16 -> sizes 1, 2, 4, 8, 16 = 5 PIECEWISE graphs, as other v0.2x MTP runs of
    # this model print ('Profiling CUDA graph memory: PIECEWISE=5 (largest=16)',
    # noonghunna/club-3090#104, max_num_seqs 2 with 3 MTP tokens); FULL graphs up to
    # min(16, max_num_seqs 2): 1, 2. The estimate is first + 6 MiB per further graph per mode
    # (specs/engines/vllm.yaml cudagraph_first_mib 231, cudagraph_per_graph_mib 6):
    # 231 + 6 x ((5 - 1) + (2 - 1)) = 261 MiB; without the draft 2 x 2 = 4 -> 1, 2, 4 = 3
    # PIECEWISE: 231 + 6 x (2 + 1) = 249 MiB.
    res = explain(CASE.text, model_dir=str(CASE.model_dir), engine_version="0.24.0", tp=2,
                  hardware="custom:24", flags=CASE.thread_flags)
    graphs = res["prediction"]["memory"]["cudagraph_bytes"]
    assert graphs["value"] == 261 * 2**20 and graphs["graphs"] == 5 + 2
    res = explain(CASE.text, model_dir=str(CASE.model_dir), engine_version="0.24.0", tp=2,
                  hardware="custom:24", flags=_base())
    assert res["prediction"]["memory"]["cudagraph_bytes"]["value"] == 249 * 2**20
