"""Shared test helpers: run the CLI in-process, text/JSON single-file snapshots, ports that no
other xdist worker can take, and the suite's default of one worker per core."""

from __future__ import annotations

import atexit
import io
import itertools
import json
import os
import shutil
import socket
import tempfile
from contextlib import redirect_stderr, redirect_stdout

# Tests never reach the real Hub: no telemetry pings (read when huggingface_hub is imported).
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from kvfit.cli.main import main

# A private kvfit cache of this process, removed when it ends. An xdist worker inherits the
# controller's environment, so it makes its own rather than share the controller's
# (KVFIT_TEST_CACHE_PID says whose it is); a KVFIT_CACHE_DIR set before pytest started is kept.
_owner = os.environ.get("KVFIT_TEST_CACHE_PID")
if "KVFIT_CACHE_DIR" not in os.environ or (_owner and _owner != str(os.getpid())):
    os.environ["KVFIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kvfit-test-cache-")
    os.environ["KVFIT_TEST_CACHE_PID"] = str(os.getpid())
    atexit.register(shutil.rmtree, os.environ["KVFIT_CACHE_DIR"], ignore_errors=True)


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


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    """`uv run pytest` runs on every core: pytest-xdist's `-n auto --dist load` unless -n was
    given (`-n0`: one process), xdist is off (`-p no:xdist`) or this is an xdist worker.
    --dist load hands out tests a few at a time in collection order, so each worker runs a
    module's tests in order and sets a module-scoped fixture up once (the catalog plans of
    tests/test_fit.py, the fuzz worker pool); the slowest tests (the MiniMax-M3 record rows,
    ~20 s each) do not leave one worker with a tail, as --dist loadfile would. A wrapper, so
    it runs before xdist's own tryfirst hook turns "auto" into a worker count."""
    xdist = config.pluginmanager.hasplugin("xdist")
    if xdist and not hasattr(config, "workerinput") and config.option.numprocesses is None:
        config.option.numprocesses = "auto"
        if config.option.dist == "no":
            config.option.dist = "load"
    return (yield)


@pytest.fixture
def closed_port():
    """A 127.0.0.1 port nothing listens on, for the test's whole length: a socket is bound to it
    and never listens, so a connection is refused and no other socket (another xdist worker's
    test hub) can take the port meanwhile, as it could once a probed port is let go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


_launched = itertools.count()


def launch_port() -> int:
    """A free port for a server a test starts as a child process, which binds the number itself.
    It lies below the kernel's ephemeral range, so no socket bound to port 0 (a test hub of
    another xdist worker) is handed it between the probe and the child's bind, and in a block
    of 500 of this worker's own (gw0 20000-20499, gw1 20500-...)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    base = 20000 + 500 * (int(worker) % 20 if worker.isdigit() else 0)
    for _ in range(500):
        port = base + next(_launched) % 500
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue                      # in use by something else on the machine
        return port
    raise RuntimeError(f"no free port in {base}-{base + 499}")


_VALIDATORS: dict = {}


def validate(instance, schema: dict, cls=None) -> None:
    """jsonschema.validate(instance, schema, cls), the same check and the same error (its best
    match), with the schema checked and its validator built once per schema text and class:
    jsonschema.validate does both on every call, ~0.18 s for the report schema."""
    import jsonschema

    key = (json.dumps(schema, sort_keys=True), cls)
    if key not in _VALIDATORS:
        kind = cls or jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        _VALIDATORS[key] = kind(schema)
    error = jsonschema.exceptions.best_match(_VALIDATORS[key].iter_errors(instance))
    if error is not None:
        raise error


def run_cli(*args: str) -> tuple[int, str, str]:
    """Run `kvfit ARGS` in-process; returns (exit code, stdout, stderr). A plan's (or a
    sweep's) --json report is validated against schemas/report.schema.json."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    if "--json" in args and out.getvalue().startswith("{"):
        doc = json.loads(out.getvalue())
        if "report_version" in doc and "layouts" in doc:       # a plan report
            validate(doc, report_schema())
    return code, out.getvalue(), err.getvalue()


def report_schema() -> dict:
    """schemas/report.schema.json (read once)."""
    if "report" not in _SCHEMAS:
        from pathlib import Path
        path = Path(__file__).resolve().parents[1] / "schemas" / "report.schema.json"
        _SCHEMAS["report"] = json.loads(path.read_text())
    return _SCHEMAS["report"]


_SCHEMAS: dict = {}


def _validating(plan):
    """kvfit.planner.build.plan, validating the JSON of every Report it returns (every plan the
    suite makes in-process: the CLI's, sweeps' cells, suggestions' re-plans, audits, fits)."""
    import functools

    @functools.wraps(plan)
    def run(*args, **kwargs):
        report = plan(*args, **kwargs)
        validate(report.to_json(), report_schema())
        return report
    return run


def _install_validating_plan() -> None:
    from kvfit.planner import build
    if not hasattr(build.plan, "__wrapped__"):
        build.plan = _validating(build.plan)


_install_validating_plan()


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
    from kvfit.checkpoint.estimate import estimate_weights
    from kvfit.checkpoint.metadata import Metadata
    from kvfit.checkpoint.quant import summarize
    from kvfit.state.resolve import resolve_architecture

    meta = Metadata("x", "local", cfg, quant_config=hf)
    return estimate_weights(resolve_architecture(cfg), summarize(meta), model_bytes)


def param_count(est) -> int:
    """Parameters an estimate counts (instances x elements over its rows)."""
    return sum(r.instances * r.elements for r in est.rows)


def row_of(est, suffix: str):
    """The estimate's row for the module path ending in `suffix`."""
    return next(r for r in est.rows if r.module.endswith(suffix))
