"""What a plan process loads: a local plan loads no subprocess machinery, no difflib, no Hub
reference parser and no --help text (wrapping its examples was a tenth of a plan); an engine
plan with no engine installed reads no distribution metadata (importlib.metadata scans every
installed package). Processes are inspected, never timed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
PROBE = """
import json, sys
from kvfit.cli.main import main
code = main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""
PLAN = [str(QWEN), "--context", "32k", "--hardware", "h100-80", "--gpus", "2",
        "--weight-gib", "61", "--json"]


def _loaded(tmp_path, *argv: str) -> set[str]:
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["fits"] is True
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_a_local_plan_loads_only_what_it_uses(tmp_path):
    loaded = _loaded(tmp_path, *PLAN)
    assert "kvfit.state.evaluate" in loaded                     # it did plan
    for module in ("subprocess", "difflib", "kvfit.hub.reference", "huggingface_hub",
                   "kvfit.hub.resolver", "kvfit.cli.helptext"):    # helptext: --help only
        assert module not in loaded, module


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None,
                    reason="vLLM is installed here: its version is read from its metadata")
def test_an_engine_plan_without_the_engine_installed_reads_no_package_metadata(tmp_path):
    loaded = _loaded(tmp_path, *PLAN, "--engine", "vllm")
    assert "kvfit.engines.vllm" in loaded
    assert "importlib.metadata" not in loaded
