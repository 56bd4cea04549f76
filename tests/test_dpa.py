"""Attention-DP with expert parallelism, expert ownership, and the MLA copy explanation.

GLM-5.3 numbers (tests/fixtures/systems/zai-org--GLM-5.3, Hub revision aca966e4), derived by
hand (GiB = 2**30 B):
  checkpoint-tensor-split.json: routed experts 734,618,714,112 B, other tensors
  20,998,426,304 B (703.723 GiB of tensors; the brief's 703.737 GiB counts whole files).
  EP8: 734,618,714,112 / 8 = 91,827,339,264 B of experts per GPU; + 20,998,426,304 replicated
  = 112,825,765,568 B = 105.077 GiB per GPU.
  State per token (--kv-dtype fp8 --cache-layout sglang-dsa-scaled --mtp): 78 latent layers
  x 656 B + 21 indexer layers x 132 B + 1 MTP layer x (656 + 132) = 54,728 B;
  x 1,048,576 tokens = 57,386,467,328 B = 53.445 GiB per sequence, whole on every rank.
  Pool padding: one 64-token page = 64 x 54,728 = 3,502,592 B per attention group.
  Nominal budget: int(288 GiB x 0.8) = 247,390,116,249 B (230.400 GiB); reserve 8 GiB.
  Left: 247,390,116,249 - 112,825,765,568 - 8,589,934,592 - 3,502,592 = 125,970,913,497
  -> // 57,386,467,328 = 2 sequences per GPU; DPA8 = 8 attention groups -> 16.
  Used: 112,825,765,568 + 8,589,934,592 + 3,502,592 + 2 x 57,386,467,328 = 236,192,137,408 B
  = 219.971 GiB of 230.400.
  Visible budget: int(275,040 MiB x 0.8) = 230,720,274,432 B; left 109,301,071,680 -> 1 per
  GPU -> 8 sequences on one node.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest

from kvfit.checkpoint.metadata import FileEntry, Metadata
from kvfit.engines import parallelism
from kvfit.errors import ConfigError, UsageError
from kvfit.expr import compile_expr
from kvfit.planner import ownership
from kvfit.planner.dpa import padding_bytes, page_tokens
from kvfit.specs.architecture import Experts

from conftest import run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
GLM = ROOT / "tests" / "fixtures" / "systems" / "zai-org--GLM-5.3"
LITE = ROOT / "tests" / "fixtures" / "systems" / "deepseek-ai--DeepSeek-V2-Lite"
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
GIB = 2**30
GLM_ONE_NODE = ("--system", "dgx-b300", "--nodes", "1", "--tp", "8",
                "--concurrent-users", "8", "--active-sequences-per-user", "2",
                "--context", "1m", "--kv-dtype", "fp8", "--parallelism", "sglang-dpa",
                "--cache-layout", "sglang-dsa-scaled", "--mtp",
                "--runtime-reserve-gib", "8", "--utilization", "0.8")


def _dpa8(report: dict) -> dict:
    return next(x for x in report["layouts"] if x["id"] == "sglang-dpa-g8-a8")


def test_must_show_one_b300_node_holds_16_sequences_on_the_nominal_basis(snap_text, snap_json):
    code, report = run_json(GLM, *GLM_ONE_NODE, "--memory-basis", "nominal")
    assert code == 0 and report["fits"] is True
    assert report["state"]["bytes_per_sequence"] == 57386467328            # 53.445 GiB
    lay = _dpa8(report)
    p = lay["per_rank"]
    assert lay["label"] == "DPA8 / attention TP1 / EP8"
    assert (lay["attention_dp"], lay["attention_tp"], lay["ep"], lay["dp"]) == (8, 1, 8, 1)
    assert p["routed_expert_bytes"] == 91827339264
    assert p["non_expert_bytes"] == 20998426304
    assert p["weights_bytes"] == 112825765568 and f"{p['weights_bytes'] / GIB:.3f}" == "105.077"
    assert p["state_bytes_per_sequence"] == 57386467328
    assert p["padding_page_tokens"] == 64 and p["padding_bytes"] == 3502592
    assert p["budget_bytes"] == 247390116249 and f"{p['budget_bytes'] / GIB:.3f}" == "230.400"
    assert lay["sequences_per_group"] == 2 and lay["max_sequences"] == 16
    assert p["used_bytes"] == 236192137408 and f"{p['used_bytes'] / GIB:.3f}" == "219.971"
    assert report["recommended"]["id"] == "sglang-dpa-g8-a8"
    # The whole checkpoint stays 703.723 GiB of tensors, not 105 GiB.
    assert report["weights"]["bytes"] == 734618714112 + 20998426304
    ep = report["expert_parallel"]
    assert ep["source"] == "pinned summary" and ep["routed_experts"] == 256
    assert "counted replicated" in ep["assumption"]
    # Plain TP=8 copies the latent on all 8 ranks: 703.723 / 8 = 87.965 GiB of weights, and
    # (247,390,116,249 - 94,452,142,552 - 8 GiB) // 57,386,467,328 = 2 sequences in all.
    tp8 = next(x for x in report["layouts"] if x["id"] == "tp8")
    assert tp8["max_sequences"] == 2
    assert any("8 copies" in n for n in tp8["replication"])
    code, text, _ = run_cli(GLM, *GLM_ONE_NODE, "--memory-basis", "nominal")
    assert "105.077 GiB of checkpoint tensors" in text
    assert "2 x 53.445 GiB of sequence state" in text
    assert "219.971 GiB / 230.400 GiB budgeted" in text
    assert text == snap_text
    assert run_cli(GLM, *GLM_ONE_NODE, "--memory-basis", "nominal", "--json")[1] == snap_json


def test_visible_basis_gives_the_smaller_answer_and_says_why():
    code, report = run_json(GLM, *GLM_ONE_NODE)
    assert code == 1 and report["fits"] is False
    lay = _dpa8(report)
    assert lay["per_rank"]["budget_bytes"] == 230720274432
    assert lay["sequences_per_group"] == 1 and lay["max_sequences"] == 8
    cmp = report["memory_basis_comparison"]
    assert (cmp["max_sequences"], cmp["other_max_sequences"]) == (8, 16)
    assert "19.406 GiB more per GPU" in cmp["explanation"]
    assert "from 8 to 16 resident sequences" in cmp["explanation"]
    _, text, _ = run_cli(GLM, *GLM_ONE_NODE)
    assert "Memory basis: The visible basis" in text


def test_vllm_dp_ep_profile():
    args = [("vllm-dp-ep" if a == "sglang-dpa" else a) for a in GLM_ONE_NODE]
    code, report = run_json(GLM, *args, "--memory-basis", "nominal")
    lay = next(x for x in report["layouts"] if x["id"] == "vllm-dp-ep-g8-a8")
    assert lay["label"] == "DP8 x attention TP1 + EP8"
    assert lay["engine_flags"] == ("--data-parallel-size 8 --tensor-parallel-size 1 "
                                   "--enable-expert-parallel")
    assert lay["max_sequences"] == 16 and report["expert_parallel"]["engine"] == "vLLM"


def test_must_show_mla_dp_holds_several_times_tp8_because_tp_copies_the_latent(snap_text):
    # DeepSeek-V2-Lite (deepseek_v3 spec): 27 layers x (512 + 64) x 2 B = 31,104 B per token;
    # x 32,768 = 1,019,215,872 B per sequence, the same on every TP rank (one shared head).
    # Weights: assumed 29.3 GiB (15.7 B parameters x 2 B) = 31,460,635,443 B.
    # TP=1 x DP=8: (76,968,728,985 - 31,460,635,443) // 1,019,215,872 = 44 per GPU -> 352.
    # TP=8: (76,968,728,985 - 3,932,579,431) // 1,019,215,872 = 71 for the one replica.
    args = (LITE, "--hardware", "h100-80", "--gpus", "8", "--context", "32k", "--kv-dtype",
            "bf16", "--weight-gib", "29.3", "--concurrent-users", "64")
    code, report = run_json(*args)
    assert code == 0 and report["architecture"]["id"] == "deepseek_v3"
    lay = {x["id"]: x for x in report["layouts"]}
    assert lay["tp1"]["max_sequences"] == 352 and lay["tp8"]["max_sequences"] == 71
    assert lay["tp1"]["max_sequences"] >= 4 * lay["tp8"]["max_sequences"]
    assert lay["tp8"]["per_rank"]["state_bytes_per_sequence"] == 1019215872
    assert report["recommended"]["id"] == "tp1"
    note = report["placement_notes"][0]
    assert "where TP=8 x DP=1 holds 71" in note and "8 copies" in note
    _, text, _ = run_cli(*args)
    assert "(latent: 8 copies)" in text and text == snap_text
    _, verbose, _ = run_cli(*args, "--verbose")       # and each layout's own copy note
    assert "TP=8: latent: one shared head, replicated on every TP rank, so the 8 ranks of a " \
           "group hold 8 copies of each sequence's state" in verbose


def test_glm_attention_dp_beats_tp8_several_times():
    # Same node, nominal basis: DPA8 holds 16, TP=8 holds 2 (8x).
    _, report = run_json(GLM, *GLM_ONE_NODE, "--memory-basis", "nominal")
    assert report["placement_notes"] and "where TP=8 x DP=1 holds 2" in report["placement_notes"][0]


# --- refusals ---------------------------------------------------------------------------


def test_dense_model_refuses_expert_parallelism_cleanly():
    code, out, err = run_cli(QWEN, "--hardware", "h100-80", "--gpus", "8", "--context", "1k",
                             "--parallelism", "sglang-dpa")
    assert code == 2 and out == ""
    assert "cannot be established" in err and "qwen3 spec declares no routed-expert" in err
    assert "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize(("content", "needle"), [
    ("{not json", "not valid JSON"),
    ("[1]", "must hold a JSON object"),
    ('{"routed_expert_bytes": -1, "non_expert_bytes": 1, "routed_experts": 256}',
     "routed_expert_bytes must be a whole number"),
    ('{"routed_expert_bytes": 10, "non_expert_bytes": true, "routed_experts": 256}',
     "non_expert_bytes must be a whole number"),
])
def test_bad_pinned_summary_is_exit_2(tmp_path, content, needle):
    folder = tmp_path / "glm"
    shutil.copytree(GLM, folder)
    (folder / "checkpoint-tensor-split.json").write_text(content)
    code, _, err = run_cli(folder, *GLM_ONE_NODE)
    assert code == 2 and needle in err and "Traceback" not in err


def test_glm_without_summary_or_headers_falls_back_to_the_labelled_estimate(tmp_path):
    # Without headers or the pinned split the glm_moe_dsa spec's routed-expert parameter rows
    # split the config-shape estimate (issue 12 part 3); the report says it is an estimate.
    folder = tmp_path / "glm"
    shutil.copytree(GLM, folder)
    (folder / "checkpoint-tensor-split.json").unlink()
    code, report = run_json(folder, *GLM_ONE_NODE)
    assert code in (0, 1)
    ep = report["expert_parallel"]
    assert ep["source"] == "config estimate" and ep["detail"].startswith("ESTIMATE")
    assert ep["routed_experts"] == 256
    assert report["weights"]["source"] == "config estimate"


def test_summary_checks_count_and_revision():
    meta = Metadata("x", "hub", {}, revision="b" * 40)
    good = {"routed_expert_bytes": 8, "non_expert_bytes": 2, "routed_experts": 4}
    own = ownership._from_summary(good, "here", meta, 4)
    assert (own.rank_bytes(2), own.total_bytes, own.problem(3)) == (4, 10, "EP=3 does not "
                                                                     "divide the 4 routed experts")
    with pytest.raises(ConfigError, match="config declares 8"):
        ownership._from_summary(good, "here", meta, 8)
    with pytest.raises(ConfigError, match="describes revision"):
        ownership._from_summary(good | {"revision": "a" * 40}, "here", meta, 4)


# --- per-tensor ownership from safetensors headers --------------------------------------


def _safetensors(tensors: dict[str, int]) -> bytes:
    """A valid safetensors file of U8 tensors with the given byte sizes (zeros)."""
    header, offset = {}, 0
    for name, size in tensors.items():
        header[name] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + b"\0" * offset


def _arch(count: int = 4):
    pattern = re.compile(r"^model\.layers\.\d+\.mlp\.experts\.(?P<expert>\d+)\.")
    return SimpleNamespace(id="toy", experts=Experts(pattern, compile_expr("n", {"n"})))


def _toy_checkpoint(tmp_path: Path, tensors: dict[str, int]) -> Metadata:
    half = len(tensors) // 2
    items = list(tensors.items())
    for i, part in enumerate((items[:half], items[half:])):
        (tmp_path / f"model-{i}.safetensors").write_bytes(_safetensors(dict(part)))
    files = tuple(FileEntry(p.name, p.stat().st_size)
                  for p in sorted(tmp_path.glob("*.safetensors")))
    return Metadata(tmp_path.name, "local", {}, files=files)


def test_ownership_from_local_safetensors_headers(tmp_path):
    # 4 experts over 2 layers; expert 3 is larger. Shared experts and attention are not routed.
    tensors = {
        "model.layers.0.self_attn.q_proj.weight": 100,
        "model.layers.0.mlp.shared_experts.up_proj.weight": 50,
        **{f"model.layers.{layer}.mlp.experts.{e}.up_proj.weight": 10 + 5 * (e == 3)
           for layer in (0, 1) for e in range(4)},
    }
    meta = _toy_checkpoint(tmp_path, tensors)
    own = ownership.establish(meta, _arch(), {"n": 4}, str(tmp_path))
    # Per expert over both layers: 20, 20, 20, 30 -> routed 90; other 100 + 50 = 150.
    assert own.source == "safetensors headers" and own.expert_bytes == (20, 20, 20, 30)
    assert (own.routed_bytes, own.non_expert_bytes) == (90, 150)
    # EP=2: rank 0 owns experts 0-1 (40 B), rank 1 owns 2-3 (50 B): the fullest rank is 50.
    assert own.rank_bytes(2) == 50 and own.rank_bytes(4) == 30 and own.rank_bytes(1) == 90


def test_ownership_refuses_incomplete_headers(tmp_path):
    tensors = {f"model.layers.0.mlp.experts.{e}.w.weight": 8 for e in (0, 1, 2)}
    meta = _toy_checkpoint(tmp_path, tensors | {"lm_head.weight": 4})
    with pytest.raises(UsageError, match="no tensors for 1 of 4 routed experts"):
        ownership.establish(meta, _arch(), {"n": 4}, str(tmp_path))
    meta = Metadata("x", "hub", {}, tensor_bytes={"model.layers.0.mlp.experts.9.w": 1})
    with pytest.raises(ConfigError, match="names expert 9"):
        ownership.establish(meta, _arch(), {"n": 4}, None)


def test_padding_rule():
    # A latent model pages 64 tokens in SGLang; a GQA model pages 1 token (SGLang) / 16 (vLLM).
    latent = SimpleNamespace(kind="latent", entries_per_layer=10, layers=2, bytes_per_entry=5,
                             heads=None, per_rank=lambda tp: 100)
    gqa = SimpleNamespace(kind="full", entries_per_layer=10, layers=2, bytes_per_entry=8,
                          heads=4, heads_per_rank=lambda tp: max(1, 4 // tp), per_rank=None)
    const = SimpleNamespace(kind="constant", entries_per_layer=1, per_rank=lambda tp: 7)
    assert page_tokens(parallelism("sglang-dpa"), [latent]) == 64
    assert page_tokens(parallelism("sglang-dpa"), [gqa]) == 1
    assert page_tokens(parallelism("vllm-dp-ep"), [gqa]) == 16
    # latent: 64 x (2 x 5) = 640; gqa at TP=2: 16 x (2 x 8 x 2/4) = 128; constant: 1 slot = 7.
    assert padding_bytes([latent], 1, 64) == 640
    assert padding_bytes([gqa, const], 2, 16) == 128 + 7


# --- the spec's experts: block ------------------------------------------------------------


def _spec_with(tmp_path: Path, block: str) -> Path:
    src = (ROOT / "specs" / "architectures" / "qwen3.yaml").read_text()
    out = tmp_path / "qwen3.yaml"
    out.write_text(src + block)
    return out


@pytest.mark.parametrize(("block", "code", "needle"), [
    ("experts:\n  routed_tensors: 'mlp\\.experts\\.(?P<expert>\\d+)\\.'\n  count: layers\n", 0,
     "ok: 1"),
    ("experts:\n  routed_tensors: 'mlp\\.experts\\.(\\d+)\\.'\n  count: layers\n", 2,
     "named group `expert`"),
    ("experts:\n  routed_tensors: 'mlp\\.experts\\.(?P<expert>\\d+'\n  count: layers\n", 2,
     "not a valid regular expression"),
    ("experts:\n  routed_tensors: 'mlp\\.experts\\.(?P<expert>\\d+)\\.'\n  count: nosuch\n", 2,
     "nosuch"),
])
def test_experts_block_in_specs(tmp_path, block, code, needle):
    rc, out, err = run_cli("specs", "check", _spec_with(tmp_path, block))
    assert rc == code and needle in out + err


def test_hub_reference_uses_the_catalog_summary_offline():
    # The offline catalog pins GLM-5.3 at aca966e4 with the same checkpoint-tensor-split.json.
    code, report = run_json("zai-org/GLM-5.3@aca966e4e02791568aa6a4ced368624b3d897f42",
                            "--offline", *GLM_ONE_NODE, "--memory-basis", "nominal")
    assert code == 0 and report["model"]["revision"].startswith("aca966e4")
    assert "offline catalog" in report["expert_parallel"]["detail"]
    assert _dpa8(report)["max_sequences"] == 16
