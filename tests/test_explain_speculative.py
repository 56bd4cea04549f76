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
