"""explain-log on a Kimi-K3 checkpoint with a safetensors index: the per-rank weights it
predicts keep the replicated rows whole, as a plan does (issue 24).

The log is a three-line SGLang start-up excerpt written for this test (its printed numbers
are not compared with anything: only kvfit's predicted weights are checked). The checkpoint
is the pinned Kimi-K3 config (tests/architectures/kimi_linear/configs/moonshotai--Kimi-K3)
beside a model.safetensors.index.json of total_size 1,600,000,000,000 B.

The replicated part R = 10,636,036,096 B (router, its bias, the latent MoE projections of the
92 MoE layers; hand-derived in tests/test_sglang_kimi_k3_replicated.py), held whole on every
rank: SGLang 0.5.23 models/kimi_k3.py:484, :663-681 (deepseek_v2.py:497-531).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kvfit.engines.explain import explain

from conftest import run_cli

DIR = Path(__file__).resolve().parent / "architectures" / "kimi_linear" / "configs" / \
    "moonshotai--Kimi-K3"
GIB = 2**30
LOG = ("[2026-01-01 00:00:00 TP0] Load weight end. type=KimiK3ForConditionalGeneration, "
       "dtype=torch.bfloat16, avail mem=60.00 GB, mem usage=120.00 GB.\n"
       "[2026-01-01 00:00:01 TP0] KV Cache is allocated. #tokens: 1000000, KV size: 40.00 GB\n"
       "[2026-01-01 00:00:01 TP0] Memory pool end. avail mem=10.00 GB\n")


@pytest.fixture
def checkpoint(tmp_path):
    shutil.copy(DIR / "config.json", tmp_path / "config.json")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 1_600_000_000_000},
         "weight_map": {"lm_head.weight": "model-00001-of-00001.safetensors"}}))
    return tmp_path


def _weights_row(checkpoint, **kw) -> dict:
    res = explain(LOG, model_dir=str(checkpoint), engine_version="0.5.23", tp=8,
                  hardware="b200", log_weights=False, **kw)
    return next(r for r in res["rows"] if r["number"] == "weights per GPU")


def test_index_total_keeps_the_replicated_rows_whole(checkpoint):
    row = _weights_row(checkpoint)
    # (1,600,000,000,000 - 10,636,036,096) = 1,589,363,963,904 / 8 = 198,670,495,488
    #   + 10,636,036,096 = 209,306,531,584 B (1,600,000,000,000 / 8 was 200,000,000,000)
    assert row["predicted"] == pytest.approx(209_306_531_584 / GIB, abs=1e-9)
    assert row["rule"].startswith("checkpoint: model.safetensors.index.json")
    assert "10,636,036,096 B held whole on every rank" in row["rule"]


def test_weight_gib_is_split_the_same_way(checkpoint):
    row = _weights_row(checkpoint, weight_gib=1490)
    # 1,490 GiB = 1,599,875,317,760 B; - R = 1,589,239,281,664 / 8 = 198,654,910,208
    #   + 10,636,036,096 = 209,290,946,304 B
    assert row["predicted"] == pytest.approx(209_290_946_304 / GIB, abs=1e-9)
    assert row["rule"].startswith("user: --weight-gib / TP (10,636,036,096 B held whole")


def test_the_plan_gives_the_same_per_rank_weights(checkpoint):
    code, out, err = run_cli(str(checkpoint), "--hardware", "b200", "--gpus", "8", "--tp", "8",
                             "--context", "131072", "--json")
    assert code in (0, 1), err
    (lay,) = json.loads(out)["layouts"]
    assert lay["per_rank"]["weights_bytes"] == 209_306_531_584
