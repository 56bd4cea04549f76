"""Whole-corpus run: every pinned real config answers or is refused with its reason.

Each config in tests/fixtures/model-configs is planned at 8,192 tokens and at 131,072
tokens (with --allow-context-overflow, so a short declared maximum is not the reason).
The outcome table is snapshotted: a reviewer sees every family's status change in the PR.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import run_cli

CORPUS = Path(__file__).parent / "fixtures" / "model-configs"
DIRS = sorted(p for p in CORPUS.iterdir() if (p / "config.json").is_file())
CONTEXTS = ("8192", "131072")


def _outcome(model: Path, ctx: str) -> str:
    code, out, err = run_cli(model, "--context", ctx, "--allow-context-overflow", "--json")
    assert "Traceback" not in err
    if code == 5:         # state only: answered, no fit judged (no hardware given)
        report = json.loads(out)
        comps = ", ".join(f"{c['name']}={c['bytes_per_sequence']}"
                          for c in report["state"]["components"])
        return f"ok {report['architecture']['id']}: {report['state']['bytes_per_sequence']} B ({comps})"
    assert code == 2, err
    error = json.loads(out)["error"]
    assert error["kind"] in ("unsupported architecture", "config error"), error
    assert len(error["message"]) > 20
    return f"refused ({error['kind']}): {error['message']}"


def test_every_config_answers_or_is_refused(snap_text):
    lines = []
    for model in DIRS:
        outcomes = [_outcome(model, ctx) for ctx in CONTEXTS]
        lines.append(f"{model.name}")
        lines += [f"  {ctx:>6}: {o}" for ctx, o in zip(CONTEXTS, outcomes, strict=True)]
    assert "\n".join(lines) + "\n" == snap_text


def test_corpus_copy_matches_manifest():
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    checked = 0
    for entry in manifest:
        path = CORPUS / entry["dir"] / entry["dest"]
        if path.is_file():
            assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], path
            checked += 1
    assert checked >= 100


@pytest.mark.parametrize("model", DIRS[:1], ids=lambda p: p.name)
def test_corpus_is_present(model):
    assert (model / "SOURCE.txt").is_file()
