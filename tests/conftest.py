"""Shared test helpers: run the CLI in-process, and text/JSON single-file snapshots."""

from __future__ import annotations

import io
import json
import os
import tempfile
from contextlib import redirect_stderr, redirect_stdout

# Tests never reach the real Hub: no telemetry pings, and a private kvfit cache.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("KVFIT_CACHE_DIR", tempfile.mkdtemp(prefix="kvfit-test-cache-"))

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from kvfit.cli.main import main


class TextSnapshot(SingleFileSnapshotExtension):
    """One readable .txt file per snapshot (rendered text reports and errors)."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


class JsonSnapshot(SingleFileSnapshotExtension):
    """One .json file per snapshot (JSON reports)."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"


@pytest.fixture
def snap_text(snapshot):
    return snapshot.use_extension(TextSnapshot)


@pytest.fixture
def snap_json(snapshot):
    return snapshot.use_extension(JsonSnapshot)


def run_cli(*args: str) -> tuple[int, str, str]:
    """Run `kvfit ARGS` in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def run_json(*args: str) -> tuple[int, dict]:
    """Run with --json and parse stdout."""
    code, out, err = run_cli(*args, "--json")
    return code, json.loads(out)


def config_without_weights(config_dir, folder):
    """A copy of `config_dir`'s config.json without vocab_size in `folder`: no weight files,
    and no config-shape weight estimate (the estimate needs the vocabulary)."""
    from pathlib import Path

    cfg = json.loads((Path(config_dir) / "config.json").read_text())
    del cfg["vocab_size"]
    (Path(folder) / "config.json").write_text(json.dumps(cfg))
    return folder


def load_config_dir(directory):
    """(config.json, hf_quant_config.json or None) of a pinned checkpoint folder."""
    from pathlib import Path

    directory = Path(directory)
    hf = directory / "hf_quant_config.json"
    return (json.loads((directory / "config.json").read_text()),
            json.loads(hf.read_text()) if hf.exists() else None)


def estimate_of(cfg: dict, hf: dict | None = None, model_bytes=2):
    """The config-shape weight estimate (estimate, why) of a config (and quant config)."""
    from kvfit.metadata import Metadata
    from kvfit.quant import summarize
    from kvfit.state.resolve import resolve_architecture
    from kvfit.weights_estimate import estimate_weights

    meta = Metadata("x", "local", cfg, quant_config=hf)
    return estimate_weights(resolve_architecture(cfg), summarize(meta), model_bytes)


def param_count(est) -> int:
    """Parameters an estimate counts (instances x elements over its rows)."""
    return sum(r.instances * r.elements for r in est.rows)


def row_of(est, suffix: str):
    """The estimate's row for the module path ending in `suffix`."""
    return next(r for r in est.rows if r.module.endswith(suffix))
