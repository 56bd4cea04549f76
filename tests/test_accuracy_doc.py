"""docs/accuracy.md is what bench/accuracy_doc.py writes from the current engine model: every
public start-up log in the fixtures, predicted given the printed weights and end to end, and
the recorded-engine comparisons' sizes. Regenerate with `uv run python bench/accuracy_doc.py`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("accuracy_doc", ROOT / "bench" / "accuracy_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_accuracy_doc_is_current():
    mod = _module()
    text = mod.render()
    assert (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8") == text, \
        "docs/accuracy.md is stale: run uv run python bench/accuracy_doc.py"
    # every fixture log has a row, and the record section counts both engines' points
    logs = sorted(p.stem for p in (ROOT / "tests/fixtures/engine_logs").glob("*.yaml"))
    assert all(f"| {slug} |" in text for slug in logs) and len(logs) >= 24
    assert "| vLLM 0.33.0 |" in text and "| SGLang 0.5.23 |" in text
