"""What a plan process loads: a local plan loads no subprocess machinery, no difflib, no Hub
reference parser and no --help text (wrapping its examples was a tenth of a plan); an engine
plan with no engine installed reads no distribution metadata (importlib.metadata scans every
installed package). A plain local plan also loads nothing it does not use (issue 13, "warm
local plan <= 8x a bare interpreter start"): no kvfit.hub at all, no packaging (its default
engine version is compared as release numbers), no typing, shutil or threading, no YAML reader, no
other question's module (inverse, search, detection, pipeline stages, preflight probes) and
no class of a path it does not take (spec problems, system presets, RoPE scaling, expert
blocks). Processes are inspected, never timed."""

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


# Loaded by a plain local plan before issue 13's warm-plan work, and used by none: each is
# another question's code, another path's classes, or a library the plan has no use for.
NOT_ON_A_PLAIN_PLAN = (
    "kvfit.hub", "kvfit.hub.deadline", "kvfit.hub.artifacts", "kvfit.hub.safetensors_header",
    "threading",
    "kvfit.specs.events", "kvfit.specs.schema", "ruamel", "kvfit.spec_problems",
    "kvfit.plan.inverse", "kvfit.plan.search", "kvfit.hardware.detect", "kvfit.plan.stages",
    "kvfit.plan.rope", "kvfit.engines.common", "kvfit.preflight.check",
    "kvfit.specs.experts", "kvfit.specs.parameters",    # the config-shape weight estimate's
    "encodings.utf_8_sig",          # config.json's byte-order mark is a prefix check (plan-trim)
)


def test_a_plain_local_plan_loads_no_other_questions_code(tmp_path):
    loaded = _loaded(tmp_path, *PLAN)
    assert {"kvfit.plan.placements", "kvfit.engines.spec", "kvfit.hardware.presets"} <= loaded
    assert sorted(m for m in NOT_ON_A_PLAIN_PLAN if m in loaded) == []


def test_a_catalog_plan_reads_its_entry_without_importlib_resources_or_typing(tmp_path):
    """The README's quick start (a catalog plan, --offline): its entry is found from the
    package's own folder, by the folder named after the repo (one entry read), so neither
    importlib.resources (with tempfile, shutil, bz2 and lzma) nor typing is loaded."""
    loaded = _loaded(tmp_path, "openai/gpt-oss-20b", "--hardware", "rtx-5090-32", "--context",
                     "128k", "--offline", "--json")
    assert "kvfit.hub.catalog" in loaded
    assert sorted(loaded & {"importlib.resources", "tempfile"}) == []


def test_the_lazy_modules_still_load_for_the_plans_that_use_them(tmp_path):
    """The same modules arrive when a plan takes their path (so the lean test above is not
    passing because they were removed): --pp, --system and a stated RoPE scaling, and the
    weight estimate's tensor shapes when no weight bytes are known."""
    loaded = _loaded(tmp_path, *PLAN, "--pp", "2")
    assert "kvfit.plan.stages" in loaded
    loaded = _loaded(tmp_path, str(QWEN), "--context", "32k", "--system", "dgx-h100",
                     "--weight-gib", "61", "--rope-scaling",
                     '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":40960}',
                     "--json")
    assert {"kvfit.hardware.presets", "kvfit.plan.rope"} <= loaded
    loaded = _loaded(tmp_path, str(QWEN), "--context", "32k", "--hardware", "h100-80", "--gpus",
                     "2", "--json")
    assert "kvfit.specs.parameters" in loaded


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


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None,
                    reason="vLLM is installed here: its version is read from its metadata")
def test_an_engine_plan_without_the_engine_installed_reads_no_package_metadata(tmp_path):
    loaded = _loaded(tmp_path, *PLAN, "--engine", "vllm")
    assert "kvfit.engines.vllm" in loaded
    assert "importlib.metadata" not in loaded


AUDIT = ROOT / "examples" / "audit" / "open-frontier.toml"


def _audit_loaded(tmp_path, *argv: str) -> set[str]:
    env = dict(os.environ, KVFIT_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", PROBE, "audit", str(AUDIT), *argv],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr         # the bundled audit passes
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_an_audit_loads_the_renderer_it_writes_and_no_other_questions_code(tmp_path):
    """Issue 13, "the bundled audit's cpu <= 3x one plan": the audit prices every fleet from
    one preparation per checkpoint and context (kvfit.plan.prepared), writes its text without
    the JSON renderer and its JSON without the text one, and asks no other question."""
    text = _audit_loaded(tmp_path)
    assert {"kvfit.plan.prepared", "kvfit.audit.render", "kvfit.plan.placements"} <= text
    assert "kvfit.report.jsonout" not in text
    as_json = _audit_loaded(tmp_path, "--json")
    assert "kvfit.report.jsonout" in as_json and "kvfit.audit.render" not in as_json
    others = ("kvfit.plan.search", "kvfit.plan.inverse", "kvfit.plan.suggest", "kvfit.hardware.detect",
              "kvfit.plan.launch", "kvfit.preflight.check", "kvfit.cli.helptext", "subprocess",
              "difflib", "huggingface_hub", "ruamel")
    assert sorted(m for m in others if m in text | as_json) == []
