"""explain-log reads vLLM's end-of-start-up memory line ("Free memory on device (free/total
GiB) on startup. Desired GPU memory utilization is (util, requested GiB). Actual usage is ...",
gpu_worker.py): the GPU total, the requested memory, and the weights, activation peak and
non-torch terms it prints, so the term gaps of newer logs can be attributed (#11 rule 8).

The lines are quoted verbatim from public logs (URLs beside each)."""

from __future__ import annotations

from kvfit.engines.logparse import VLLM, LogFacts, _scan

# https://github.com/vllm-project/vllm/issues/50722 (turn 7; Qwen3.5-35B-A3B, TP 4)
PER_TERM = ("(Worker_TP1 pid=12025) INFO 08-14 09:28:01 [gpu_worker.py:857] Free memory on device "
            "(77.78/79.33 GiB) on startup. Desired GPU memory utilization is (0.85, 67.43 GiB). "
            "Actual usage is 16.92 GiB for weight, 5.66 GiB for peak activation, 0.13 GiB for "
            "non-torch memory, and 1.34 GiB for CUDAGraph memory. Replace gpu_memory_utilization "
            "config with `--kv-cache-memory=46421742490` (43.23 GiB) to fit into requested memory, "
            "or `--kv-cache-memory=57542425088` (53.59 GiB) to fully utilize gpu memory. Current kv "
            "cache memory in use is 43.4 GiB.")
# https://github.com/noonghunna/club-3090/issues/1087 (turn 1; 2x RTX 5090, TP 2)
CONSUMED = ("(Worker_TP0 pid=223) INFO 08-22 04:42:13 [gpu_worker.py:789] Free memory on device "
            "(30.27/31.4 GiB) on startup. Desired GPU memory utilization is (0.92, 28.88 GiB). "
            "Actual usage is 15.03 GiB for consumed memory (weights + non-torch), 1.59 GiB for peak "
            "activation, and 0.09 GiB for CUDAGraph memory. Replace gpu_memory_utilization config "
            "with `--kv-cache-memory=12917635953` (12.03 GiB) to fit into requested memory, or "
            "`--kv-cache-memory=14405811712` (13.42 GiB) to fully utilize gpu memory. Current kv "
            "cache memory in use is 12.26 GiB.")


def _printed(line: str) -> dict:
    facts = LogFacts("vllm")
    _scan([line], VLLM, facts)
    return facts.printed


def test_the_per_term_form_gives_every_term():
    p = _printed(PER_TERM)
    assert (p["free_at_start_gib"], p["total_gib"]) == (77.78, 79.33)
    assert (p["gpu_memory_utilization"], p["requested_gib"]) == (0.85, 67.43)
    assert (p["weights_gib"], p["activation_gib"], p["non_torch_gib"]) == (16.92, 5.66, 0.13)
    # the line's own sum: 67.43 - 16.92 - 5.66 - 0.13 - 1.34 (CUDA graphs) = 43.38 ~ 43.4 GiB
    assert round(p["requested_gib"] - p["weights_gib"] - p["activation_gib"]
                 - p["non_torch_gib"] - 1.34, 1) == 43.4


def test_consumed_memory_is_not_read_as_weights():
    p = _printed(CONSUMED)
    # "15.03 GiB for consumed memory (weights + non-torch)" is two terms together: no weights
    assert "weights_gib" not in p and "non_torch_gib" not in p
    assert (p["total_gib"], p["requested_gib"], p["activation_gib"]) == (31.4, 28.88, 1.59)
    assert p["gpu_memory_utilization"] == 0.92
