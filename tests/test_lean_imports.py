"""What a plan process loads, where that is a promise to the user: a local plan (no Hub
model) loads no Hub client, starts no subprocess (no engine is run), and loads neither
matplotlib (only --plot draws) nor the engine modules it did not ask for (--engine). Processes
are inspected, never timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def test_a_local_plan_loads_no_hub_client_engine_or_plotting(tmp_path):
    loaded = _loaded(tmp_path, *PLAN)
    assert "kvfit.state.evaluate" in loaded                     # it did plan
    for module in ("subprocess", "huggingface_hub", "kvfit.hub.resolver", "kvfit.hub.transport",
                   "matplotlib", "kvfit.report.plot", "kvfit.engines.vllm",
                   "kvfit.engines.sglang"):
        assert module not in loaded, module


def test_a_plain_plan_loads_only_the_facts_it_can_meet(tmp_path):
    """The facts of the questions it does not ask (--systems, suggestions, attention-DP) stay
    unloaded; a --systems search loads its own."""
    loaded = _loaded(tmp_path, *PLAN)
    assert "kvfit.report.reasons" in loaded
    for module in ("kvfit.report.search_reasons", "kvfit.report.suggest_reasons",
                   "kvfit.report.dpa_reasons", "kvfit.planner.search", "kvfit.planner.suggest",
                   "kvfit.planner.dpa", "kvfit.planner.dpa_notes"):
        assert module not in loaded, module
    search = [str(QWEN), "--context", "32k", "--weight-gib", "61", "--systems", "dgx-h100",
              "--json"]
    assert "kvfit.report.search_reasons" in _loaded(tmp_path, *search)


def test_the_same_modules_load_for_the_plans_that_ask_for_them(tmp_path):
    """The promise above is not met by modules that were removed: --engine vllm and --plot
    load them."""
    assert "kvfit.engines.vllm" in _loaded(tmp_path, *PLAN, "--engine", "vllm")
    plot = tmp_path / "plan.png"
    assert "matplotlib" in _loaded(tmp_path, *PLAN, "--plot", str(plot))
    assert plot.stat().st_size > 0


def test_a_config_with_a_byte_order_mark_reads_as_utf_8_sig_does():
    from kvfit.checkpoint.jsonfile import parse_json
    from kvfit.errors import ConfigError

    for raw in (b'{"a": 1}', b'\xef\xbb\xbf{"a": "\xc3\xa9"}', b'\xef\xbb\xbf\xef\xbb\xbf{}',
                b'\xef\xbb\xbf{"a": "\xff"}'):
        try:
            want = json.loads(raw.decode("utf-8-sig"))
        except ValueError as exc:
            want = type(exc)
        try:
            got = parse_json(raw, "config.json")
        except ConfigError as exc:
            got = "not UTF-8" in str(exc) and UnicodeDecodeError or "not valid JSON" in str(exc) \
                and json.JSONDecodeError
        assert got == want, raw
