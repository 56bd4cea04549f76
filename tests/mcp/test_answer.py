"""kvfit.report.answer: the one paragraph the MCP tools (and the page) quote, for the answers
that are not a plain fit: state only, weights unknown, hypothetical, a --min-gpus question.
Every number is derived by hand from the pinned Qwen3-32B config (64 layers, 8 KV heads,
head_dim 128, 40,960 declared positions): KV per token = 2 x 8 x 128 x 2 B x 64 = 262,144 B,
so 8 GiB per 32,768-token sequence."""

from __future__ import annotations

from pathlib import Path

import kvfit
from kvfit.report.answer import plan_answer

from conftest import config_without_weights

QWEN = Path(__file__).resolve().parents[1] / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"


def test_no_hardware_is_the_state_only():
    text = plan_answer(kvfit.plan("Qwen/Qwen3-32B", context="32k", offline=True))
    assert "STATE ONLY: 8.000 GiB of state per sequence" in text
    assert "Weights" not in text                         # nothing was judged against them


def test_unknown_weights_are_not_a_verdict(tmp_path):
    report = kvfit.plan(str(config_without_weights(QWEN, tmp_path)), hardware="h100-80",
                        context="32k")
    text = plan_answer(report)
    assert report.fits is None
    assert "WEIGHTS UNKNOWN on 1 x h100-80: the state per sequence is 8.000 GiB" in text
    assert "FITS" not in text and "--weight-gib" in text


def test_a_context_past_the_declared_maximum_is_hypothetical():
    # 48k = 49,152 > 40,960; 12 GiB per sequence beside 61 GiB of weights on one H100
    text = plan_answer(kvfit.plan("Qwen/Qwen3-32B", hardware="h100-80", context="48k",
                                  weight_gib=61, allow_context_overflow=True, offline=True))
    assert text.startswith("HYPOTHETICAL (the context exceeds the declared maximum of 40,960 "
                           "tokens): Qwen/Qwen3-32B at 49,152 tokens")


def test_min_gpus_names_the_count():
    # 100 sequences of 8 GiB beside 64 GiB of weights, 71.68 GiB budgeted per H100; a TP
    # group must split the 8 KV heads (TP 1, 2, 4, 8). Per group: TP=1 0 (7.68 < 8), TP=2
    # (2 x 71.68 - 64) / 8 = 9, TP=4 27, TP=8 63. Under 16 GPUs the most is 81 (12 = TP=4 x
    # DP=3); 16 GPUs hold 126 at TP=8 x DP=2 (108 at TP=4 x DP=4), so 16 is the fewest.
    text = plan_answer(kvfit.plan("Qwen/Qwen3-32B", hardware="h100-80", context="32k",
                                  concurrent_users=100, weight_gib=64, min_gpus=True,
                                  offline=True))
    assert "Fewest GPUs: 16 x h100-80 (TP=8 x DP=2)." in text
    assert "stated with --weight-gib" in text
