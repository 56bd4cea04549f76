"""`--index-dtype fp4` where the engine's 4-bit indexer format is unambiguous.

vLLM 0.33's DeepSeek sparse indexer takes fp8 or mxfp4 and nothing else
(vllm/v1/attention/backends/mla/indexer.py:57-68, DSA_INDEXER_KV_DTYPES), so on DeepSeek-V4
`fp4` can only mean mxfp4; the spec says so (`index_fp4`). Elsewhere fp4 stays ambiguous
(mxfp4 and nvfp4 are different formats). vLLM runs the MXFP4 indexer only on compute
capability 10.x (indexer.py:94-100): on H200 (9.0) it refuses to start.

Pinned config: tests/architectures/deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash
(index_head_dim 128; 43 layers, 21 of them with compress ratio 4 and so an indexer).
"""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli, run_json

HERE = Path(__file__).parent
V4 = str(HERE / "architectures/deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash")
V32 = str(HERE / "architectures/deepseek_v32/configs/deepseek-ai--DeepSeek-V3.2")
BASE = (V4, "--gpus", "8", "--context", "32k", "--weight-gib", "150")


def _index_row(report: dict) -> dict:
    return next(c for c in report["state"]["components"] if c["name"] == "c4-index")


def test_fp4_resolves_to_mxfp4_with_the_rule_named():
    code, r = run_json(*BASE, "--hardware", "b200-180", "--index-dtype", "fp4")
    assert code == 0
    index = r["dtypes"]["index"]
    assert index["name"] == "mxfp4"
    assert "indexer.py:57-68" in index["provenance"] and "fp4" in index["provenance"]
    # mxfp4 = 17/32 B per value: 128 values x 17/32 = 68 B per compressed entry
    # (64 B of e2m1 values + 4 one-byte e8m0 scales, one per 32 values).
    assert _index_row(r)["bytes_per_entry"] == 68


def test_fp4_under_vllm_prices_the_fp4_indexer_row_and_passes_it_on():
    code, r = run_json(*BASE, "--hardware", "b200-180", "--index-dtype", "fp4",
                       "--engine", "vllm", "--print-command", "vllm")
    assert code == 0
    # vLLM's FP4 indexer row: index_head_dim // 2 + index_head_dim // 32 = 64 + 4 = 68 B
    assert _index_row(r)["bytes_per_entry"] == 68
    launch = r["engine_command"]["launch"]
    assert '"indexer_kv_dtype": "mxfp4"' in launch
    assert launch.startswith(f"vllm serve {V4} ")      # a local folder is served from its path


def test_mxfp4_indexer_is_refused_below_blackwell_datacenter():
    code, r = run_json(*BASE, "--hardware", "h200-141", "--index-dtype", "fp4",
                       "--engine", "vllm")
    assert code == 1
    for lay in r["layouts"]:
        refusal = lay["engine"]["refusal"]
        assert refusal is not None and "indexer.py:57-68, 94-100" in refusal["rule"]
        assert lay["fits"] is False


def test_fp4_stays_ambiguous_where_the_spec_names_no_format():
    code, out, err = run_cli(V32, "--hardware", "b200-180", "--gpus", "8", "--context", "32k",
                             "--index-dtype", "fp4")
    assert code == 2 and "ambiguous" in err and "mxfp4" in err and "nvfp4" in err
