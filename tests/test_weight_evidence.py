"""Every plan of a checkpoint uses its best weight evidence, whatever --parallelism: GLM-5.3's
pinned checkpoint-tensor-split.json, not the bf16 config-shape estimate (issue 27, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli, run_json

GLM = Path(__file__).parent / "fixtures" / "systems" / "zai-org--GLM-5.3"
ONE_B300_TP8 = ("--system", "dgx-b300", "--tp", "8", "--context", "128k")

# By hand from tests/fixtures/systems/zai-org--GLM-5.3/checkpoint-tensor-split.json:
# routed_expert_bytes 734,618,714,112 + non_expert_bytes 20,998,426,304 = 755,617,140,416 B;
# / 1,073,741,824 = 703.72 GiB (703 x 2^30 = 754,840,502,272; the rest 776,638,144 B = 0.72 GiB).
SPLIT_BYTES = 734_618_714_112 + 20_998_426_304
# TP8 holds 1/8 of every tensor: 755,617,140,416 / 8 = 94,452,142,552 B (87.97 GiB) per rank.
TP8_RANK = SPLIT_BYTES // 8


def test_split_file_holds_the_hand_figure():
    data = json.loads((GLM / "checkpoint-tensor-split.json").read_text())
    assert data["routed_expert_bytes"] + data["non_expert_bytes"] == SPLIT_BYTES == 755617140416
    assert f"{SPLIT_BYTES / 2**30:.1f}" == "703.7"


def _tp8(report: dict) -> dict:
    return next(x for x in report["layouts"] if x["id"] == "tp8")


def test_same_weights_with_and_without_attention_dp():
    code, plain = run_json(str(GLM), *ONE_B300_TP8)
    assert code == 0
    code, dpa = run_json(str(GLM), *ONE_B300_TP8, "--parallelism", "sglang-dpa")
    assert code == 0
    for report in (plain, dpa):
        assert report["weights"]["bytes"] == SPLIT_BYTES
        assert report["weights"]["source"] == "tensor split"
        assert "checkpoint-tensor-split.json" in report["weights"]["detail"]
        assert _tp8(report)["per_rank"]["weights_bytes"] == TP8_RANK
        assert not any("ESTIMATE" in w for w in report["warnings"])
    # the expert-parallel layouts split the same bytes by expert ownership
    own = dpa["expert_parallel"]
    assert own["source"] == "pinned summary"
    assert own["routed_expert_bytes"] + own["non_expert_bytes"] == SPLIT_BYTES


def test_text_names_the_figure_and_source():
    for extra in ((), ("--parallelism", "sglang-dpa")):
        code, text, _ = run_cli(str(GLM), *ONE_B300_TP8, *extra)
        assert code == 0
        assert "weights 703.723 GiB (tensor split)" in text
        assert "ESTIMATED" not in text


def test_catalog_list_and_fit_show_the_same_figure():
    code, out, _ = run_cli("catalog", "list", "--family", "glm_moe_dsa", "--json")
    assert code == 0
    entry = next(e for e in json.loads(out)["entries"] if e["repo_id"] == "zai-org/GLM-5.3")
    assert entry["weights"]["bytes"] == SPLIT_BYTES
    assert entry["weights"]["basis"] == "tensor split"
    code, out, _ = run_cli("catalog", "list", "--family", "glm_moe_dsa")
    line = next(x for x in out.splitlines() if "zai-org/GLM-5.3 " in x)
    assert "703.7 GiB" in line and "tensor split" in line
    code, out, _ = run_cli("fit", *ONE_B300_TP8, "--family", "zai-org", "--json")
    rows = [r for rs in json.loads(out)["rows"].values() for r in rs]
    row = next(r for r in rows if r["model"] == "zai-org/GLM-5.3")
    assert row["weights"]["bytes"] == SPLIT_BYTES and row["weights"]["basis"] == "tensor split"
    # and the offline catalog entry plans like the folder
    code, report = run_json("zai-org/GLM-5.3", "--offline", *ONE_B300_TP8)
    assert report["weights"]["bytes"] == SPLIT_BYTES


def test_files_beat_the_split(tmp_path):
    """An index's total_size is better evidence than the pinned split: it wins."""
    folder = tmp_path / "glm"
    folder.mkdir()
    for name in ("config.json", "checkpoint-tensor-split.json"):
        (folder / name).write_bytes((GLM / name).read_bytes())
    # a made-up total: only which number wins is under test
    index = {"metadata": {"total_size": 123 * 2**30}, "weight_map": {}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    _, report = run_json(str(folder), *ONE_B300_TP8)
    assert report["weights"]["source"] == "safetensors index"
    assert report["weights"]["bytes"] == 123 * 2**30
