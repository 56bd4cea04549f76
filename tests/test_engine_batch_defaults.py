"""vLLM's default max_num_seqs / max_num_batched_tokens follow the GPU's memory tier."""

from __future__ import annotations

import pytest

from kvfit.engines.common import Inputs
from kvfit.engines.spec import rules_for
from kvfit.engines.vllm import batch_defaults
from kvfit.hardware.presets import find_accelerator

MIB = 1024**2


@pytest.mark.parametrize(("hardware", "seqs", "mnbt"), [
    # vllm/engine/arg_utils.py get_batch_defaults (0.33.0), OpenAI server context:
    ("b200-180", 1024, 16384),     # 182,631 MiB CUDA total >= 160 GiB
    ("h100-80", 1024, 8192),       # ~79.2 GiB >= 70 GiB, not an A100
    ("a100-80", 256, 2048),        # >= 70 GiB, but A100s keep the small defaults
    ("dgx-spark", 256, 2048),      # GB10 (cc 12.1) keeps the small defaults
    ("rtx-5090-32", 256, 2048),    # 31.8 GiB < 70 GiB
])
def test_tiers(hardware, seqs, mnbt):
    acc = find_accelerator(hardware)
    total = (acc.cuda_total_mib or 0) * MIB or None
    inp = Inputs([], 1, 4096, None, acc.memory("visible")[0], total_bytes=total, device=acc.id)
    got = batch_defaults(rules_for("vllm", "0.33.0"), inp)
    assert got[:2] == (seqs, mnbt)
    assert "arg_utils.py" in got[2]


def test_unknown_gpu_falls_back_to_the_logged_defaults():
    inp = Inputs([], 1, 4096, None, 0)
    seqs, mnbt, basis = batch_defaults(rules_for("vllm", "0.33.0"), inp)
    assert (seqs, mnbt) == (1024, 8192) and "GPU unknown" in basis
