"""Per-rank memory bars (kvfit.planner.memory_bars) never hold a negative part."""

from conftest import run_json


def _bars(doc):
    for cell in doc["sweep"]["cells"]:
        for lay in cell.get("layouts") or []:
            if lay.get("memory_per_rank"):
                yield lay["memory_per_rank"]


def test_a_kv_pool_below_zero_is_drawn_as_none():
    # Qwen3-Next-80B on one DGX Spark: its bf16 weights (148.4 GiB by the config's shapes)
    # exceed the Spark's 128 GiB, so vLLM's pool (requested - weights - overheads,
    # gpu_worker.py:753-757) is negative and the engine would refuse to start. The bar has no
    # state part, every part is >= 0, and the parts still sum to the total.
    code, doc = run_json("Qwen/Qwen3-Next-80B-A3B-Thinking", "--hardware", "dgx-spark",
                         "--engine", "vllm", "--offline", "--sweep", "context=128k,256k")
    bars = list(_bars(doc))
    assert code == 1 and bars
    for b in bars:
        parts = [b[k] for k in b if k.endswith("_bytes") and k != "total_bytes"]
        assert b["state_bytes"] == 0
        assert min(parts) >= 0 and sum(parts) == b["total_bytes"]
        assert b["weights_bytes"] > 128 * 2**30
