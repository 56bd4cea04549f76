"""explain-log on a pipeline-parallel vLLM run: each stage keeps its own layers' pages and the
smallest stage's block count binds (vllm/v1/core/kv_cache_planning.py:1580-1595, as
kvfit/engines/vllm_pp.py models it for plans). Expected numbers are derived by hand from the
pinned Llama-3.1-8B config and the fixture logs of llm-d-planner's v0.19.0 sweep."""

from __future__ import annotations

import pytest
from engine_log_cases import load_cases

from kvfit.engines.explain import explain

CASES = {c.slug: c for c in load_cases()}


def _run(slug: str, **kw) -> dict:
    c = CASES[slug]
    return explain(c.text, model_dir=str(c.model_dir), engine_version=c.version, tp=c.tp,
                   hardware=c.hardware, flags=c.thread_flags | kw)


def _rows(res: dict) -> dict:
    return {r["number"]: r for r in res["rows"]}


@pytest.mark.parametrize(("pp", "block_bytes", "from_printed"), [
    # 32 layers split 16 / 16 (vllm/distributed/utils.py get_pp_indices); a stage's 16-token
    # block: 16 layers x 16 tokens x 8 KV heads x (128 + 128) x 2 B = 1,048,576 B. The log's
    # 66.54 GiB as every stage's pool: floor(66.54 x 2^30 / 1,048,576) = floor(68,136.96)
    # = 68,136 blocks x 16 = 1,090,176 tokens.
    (2, 1_048_576, 1_090_176),
    # 8 layers a stage: 524,288 B a block; floor(69.8 x 2^30 / 524,288) = floor(142,950.4)
    # = 142,950 blocks x 16 = 2,287,200 tokens.
    (4, 524_288, 2_287_200),
])
def test_each_stage_pages_its_own_layers(pp, block_bytes, from_printed):
    res = _run(f"vllm-0.19.0-llama-3.1-8b-instruct-h100-pp{pp}")
    rows = _rows(res)
    assert rows["bytes per block (per GPU)"]["predicted"] == block_bytes
    assert rows["GPU KV cache size, from the printed memory"]["predicted"] == from_printed
    stages = res["prediction"]["pipeline_stages"]
    assert [s["layers"] for s in stages["value"]] == [[32 // pp * i, 32 // pp * (i + 1)]
                                                       for i in range(pp)]
    # the last stage holds the LM head and runs the sampler: it has the least room and binds
    assert stages["binding_stage"] == pp - 1
    # the printed 1,075,312 (PP2) and 2,257,264 (PP4) tokens are the last stage's: PP2's
    # stage 1 prints 9.6 GiB of non-KV memory, so 75.23 - 9.6 = 65.63 GiB -> 65.63 x 1,024
    # = 67,205 blocks x 16 = 1,075,280 tokens (the GiB figures are rounded); end to end
    # kvfit is within 5 %
    assert abs(rows["GPU KV cache size"]["diff_pct"]) <= 5


def test_stage_weights_put_the_embedding_first_and_the_head_last():
    res = _run("vllm-0.19.0-llama-3.1-8b-instruct-h100-pp4")
    w = [s["weights_bytes"] for s in res["prediction"]["pipeline_stages"]["value"]]
    # embedding and LM head: 128,256 x 4,096 x 2 B = 1,050,673,152 B each (untied), on stage 0
    # and stage 3; the middle stages hold 8 decoder layers only
    assert w[0] == w[3] and w[1] == w[2]
    assert w[0] - w[1] == 128_256 * 4_096 * 2


def test_the_users_pp_flag_overrides_and_is_checked():
    from kvfit.errors import UsageError

    with pytest.raises(UsageError, match="pipeline_parallel_size"):
        _run("vllm-0.19.0-llama-3.1-8b-instruct-h100-pp2", pipeline_parallel_size=0)
