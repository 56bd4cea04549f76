"""--kv-cache-memory-bytes under --engine vllm: vLLM takes the stated pool as given and skips
its memory check (vllm/v1/worker/gpu_worker.py:656-680), so a layout whose weights and stated
pool exceed the GPU's memory does not start, whatever blocks the pool would hold."""

from __future__ import annotations

from conftest import run_json

QWEN = "tests/architectures/qwen3/configs/Qwen--Qwen3-32B"
POOL = 40 * 2**30
# h100-80's CUDA total: 81,089 MiB = 85,028,716,544 B (specs/hardware/h100-80.yaml).
TOTAL = 81_089 * 2**20


def _plan(weight_gib: int) -> tuple[int, dict]:
    code, report = run_json(QWEN, "--hardware", "h100-80", "--gpus", "1", "--context", "32k",
                            "--engine", "vllm", "--kv-cache-memory-bytes", str(POOL),
                            "--weight-gib", str(weight_gib))
    return code, next(x for x in report["layouts"] if x["tp"] == 1)


def test_weights_beside_the_stated_pool_fit():
    # 20 GiB + 40 GiB = 64,424,509,440 B <= 85,028,716,544 B
    assert 20 * 2**30 + POOL <= TOTAL
    code, lay = _plan(20)
    assert code == 0 and lay["fits"] is True and lay["max_sequences"] > 0


def test_weights_and_the_stated_pool_larger_than_the_gpu_do_not_start():
    # 61 GiB + 40 GiB = 108,447,924,224 B > 85,028,716,544 B: out of memory at load or at the
    # cache allocation; the engine section still says what the pool would hold
    assert 61 * 2**30 + POOL > TOTAL
    code, lay = _plan(61)
    assert code == 1 and lay["fits"] is False and lay["max_sequences"] == 0
    assert "gpu_worker.py:656-680" in lay["reason"]
    assert lay["engine"]["num_gpu_blocks"]["value"] > 0
