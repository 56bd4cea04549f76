"""`kvfit audit`: coverage over a named frontier, the independent oracle, monotonicity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvfit.audit import checks, oracle
from kvfit.audit.config import load_frontier
from kvfit.audit.run import run
from kvfit.errors import UsageError

from conftest import run_cli, validate

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "audit" / "open-frontier.toml"
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
NEMOTRON_SUPER = (ROOT / "tests" / "architectures" / "nemotron_h" / "configs"
                  / "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8")


def test_example_frontier_judges_every_cell():
    # 12 models x 2 contexts = 24 required cells. DeepSeek-V3.2, GLM-5.2, Qwen3.6-35B-A3B and
    # Nemotron-3-Nano have no weight files or index offline; their specs' `parameters:` give
    # a labelled config-shape estimate (test_weights_estimate_dsa_families.py /
    # test_weights_estimate_hybrid_families.py), so every cell is judged: 24 / 24 passes 1.0.
    report = run(load_frontier(EXAMPLE))
    assert report["passed"] is True
    assert not [c for c in report["cells"] if c["status"] == "not judged"]
    assert report["coverage"]["answered_cells"] == 24 and report["coverage"]["required_cells"] == 24
    assert report["oracle"]["checked"] >= 8 and report["oracle"]["disagreements"] == 0
    qwen = next(c for c in report["cells"] if c["model"] == "Qwen/Qwen3-32B"
                and c["context"] == "32k")
    # 64 layers x 2 x 8 KV heads x 128 x 2 B x 32,768 tokens
    assert qwen["state_bytes"] == 8589934592 and qwen["oracle"]["expected"] == 8589934592


def test_example_frontier_checks_estimates_against_pinned_indexes():
    # medgemma-27b-it and Devstral-Small-2507 plan from their pinned indexes; the audit also
    # computes each spec's config-shape estimate and compares the bytes: both equal the
    # index total_size (54,864,813,280 B for medgemma, tests/test_weights_estimate_vision.py;
    # Devstral, tests/test_weights_estimate.py).
    report = run(load_frontier(EXAMPLE))
    assert report["weights_check"] == {"compared": 2, "exact": 2, "differ": []}
    med = next(c for c in report["cells"] if c["model"] == "google/medgemma-27b-it")
    assert med["weights_check"]["index_bytes"] == med["weights_check"]["estimate_bytes"] \
        == 54_864_813_280
    # Cells whose weights are an estimate themselves carry no cross-check.
    assert all("weights_check" not in c for c in report["cells"]
               if c["model"] == "deepseek-ai/DeepSeek-V3.2")


def test_cli_text_and_json(tmp_path):
    code, out, err = run_cli("audit", EXAMPLE)
    assert code == 0, err
    assert out.startswith("kvfit audit: open-frontier-sample") and "PASSED" in out
    code, out, _ = run_cli("audit", EXAMPLE, "--json")
    assert json.loads(out)["passed"] is True
    # A model whose weights stay unknown offline (Nemotron 3 Super: no files or index, and
    # its latent MoE is outside the nemotron_h tensor list) is not judged, and fails the audit.
    path = _frontier(tmp_path, f'''[audit]
min_coverage = 1.0
[[models]]
family = "nemotron_h"
model = "{NEMOTRON_SUPER}"
contexts = ["8k"]
[[hardware]]
preset = "h100-80"
counts = [8]
''')
    code, out, err = run_cli("audit", path)
    assert code == 1, err
    assert "FAILED" in out and "NOT JUDGED" in out


def _frontier(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "audit.toml"
    path.write_text(body)
    return path


def test_a_refused_required_model_fails_the_thresholds(tmp_path):
    (tmp_path / "zebra").mkdir()
    (tmp_path / "zebra" / "config.json").write_text('{"model_type": "zebra"}')
    path = _frontier(tmp_path, f'''[audit]
min_coverage = 0.9
[[models]]
family = "qwen3"
model = "{QWEN}"
contexts = ["8k"]
[[models]]
family = "zebra"
model = "zebra"
contexts = ["8k"]
''')
    report = run(load_frontier(path))
    assert report["passed"] is False and report["coverage"]["coverage"] == 0.5
    assert report["coverage"]["supported_families"] == ["qwen3"]
    refused = next(c for c in report["cells"] if c["family"] == "zebra")
    assert "model_type 'zebra' is not covered" in refused["reason"]
    code, out, _ = run_cli("audit", path)
    assert code == 1 and "FAILED" in out and "REFUSED" in out


def test_an_oracle_disagreement_fails_the_audit(tmp_path, monkeypatch):
    path = _frontier(tmp_path, f'[[models]]\nfamily = "qwen3"\nmodel = "{QWEN}"\n'
                               'contexts = ["8k"]\n')
    monkeypatch.setattr("kvfit.audit.run.state_bytes", lambda cfg, ctx, w: (1, "oracle: test"))
    report = run(load_frontier(path))
    assert report["oracle"]["disagreements"] == 1 and report["passed"] is False


def test_oracle_formulas_and_refusals():
    cfg = json.loads((QWEN / "config.json").read_text())
    from fractions import Fraction
    assert oracle.state_bytes(cfg, 1024, Fraction(2)) == (64 * 2 * 8 * 128 * 2 * 1024,
                                                         "oracle: gqa")
    mla = {"num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64}
    assert oracle.state_bytes(mla, 10, Fraction(1))[0] == 61 * 576 * 10
    assert oracle.state_bytes(cfg | {"layer_types": ["sliding_attention"]}, 1, Fraction(2))[0] \
        is None


def test_monotonicity_checks_catch_violations():
    fleet = {"status": "answered", "topology_ok": True, "gpus": 8}
    cells = [
        {"status": "answered", "model": "m", "context_tokens": 1000, "kv_dtype": "bf16",
         "state_bytes": 200, "fleets": [
             fleet | {"fleet": "small x 8", "memory_bytes_per_gpu": 80, "max_sequences": 10},
             fleet | {"fleet": "big x 8", "memory_bytes_per_gpu": 140, "max_sequences": 4}]},
        {"status": "answered", "model": "m", "context_tokens": 2000, "kv_dtype": "bf16",
         "state_bytes": 100, "fleets": [fleet | {"fleet": "odd x 8", "topology_ok": False,
                                                 "memory_bytes_per_gpu": 80,
                                                 "max_sequences": 1}]},
    ]
    problems = checks.monotonicity(cells)
    assert any("state shrinks" in p for p in problems)
    assert any("despite more memory per GPU" in p for p in problems)
    assert any("does not use the fleet's GPUs exactly" in p for p in problems)


@pytest.mark.parametrize(("body", "needle"), [
    ("[audit]\ncolour = 1", "unknown key 'audit.colour'"),
    ("[audit]\nmin_coverage = 2", "between 0 and 1"),
    ("[[models]]\nfamily = 'x'\nmodel = 'y'", "lacks contexts"),
    ("[[models]]\nfamily = 'x'\nmodel = 'y'\ncontexts = []", "contexts is empty"),
    ("[[models]]\nfamily = 1\nmodel = 'y'\ncontexts = ['8k']", "should be str"),
    ("[[hardware]]\npreset = 'h100-80'\ncounts = [0]", "whole numbers 1-4096"),
    ("[fleet]\nx = 1", "unknown table"),
    ("models = 3", "array of tables"),
    ("not toml =", "not valid TOML"),
    ("[audit]\nname = 'empty'", "names no [[models]]"),
])
def test_bad_audit_files(tmp_path, body, needle):
    with pytest.raises(UsageError, match=None) as info:
        load_frontier(_frontier(tmp_path, body))
    assert needle in info.value.message


def test_audit_json_matches_its_schema():

    schema = json.loads((ROOT / "schemas" / "audit.schema.json").read_text())
    validate(run(load_frontier(EXAMPLE)), schema)
