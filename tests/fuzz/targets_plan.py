"""Targets for the plan-side kinds: config_json, preset_toml, spec_yaml, model_ref, bench_json.

Each runs the input through kvfit's own code in-process (the plan path, the preset and
calibrate loaders, the spec loader and compiler, the reference parser and metadata loader,
the calibrate verdicts) and checks the answer: exit codes 0/1/5 only, numbers finite and
>= 0, a verdict that agrees with its layouts, JSON without NaN. An ExprError escaping the
plan path is a finding (the CLI would show it as an internal error), so it is re-raised as
a RuntimeError the runner counts as a traceback.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from .checks import Wrong, _check, _whole

# numbers a report may legitimately hold below zero (differences, signed room)
# (vLLM's available KV memory and the rest after weights go below zero when it refuses to start)
SIGNED = {"difference", "available_kv_bytes", "rest_bytes"}
MODEL = Path(__file__).resolve().parents[1] / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
PLAN_FLAGS = ["--hardware", "h100-80", "--gpus", "8", "--offline", "--timeout", "5"]


def _escaped_expr(call):
    from kvfit.expr import ExprError

    try:
        return call()
    except ExprError as exc:
        raise RuntimeError(f"ExprError escaped the plan path: {exc.message}") from exc


def _numbers(doc, path=""):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _numbers(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _numbers(v, f"{path}[{i}]")
    elif isinstance(doc, int | float) and not isinstance(doc, bool):
        yield path, doc


def check_report(plan) -> str:
    """The invariants of one plan's Report (read through its JSON), or of the JSON a `--json`
    plan printed; returns its verdict code as text."""
    from kvfit.cli.request import verdict_code
    from kvfit.report.jsonout import render_json
    from kvfit.report.text import render_text

    printed = isinstance(plan, dict)            # the CLI's --json output: no Report to render
    report = plan if printed else plan.to_json()
    for where, value in _numbers(report):
        _check(isinstance(value, int) or math.isfinite(value), f"{where} = {value!r}")
        echoed = where.startswith((".model.", ".architecture.fields[", ".rope_scaling.stated."))
        signed = SIGNED & set(where.replace("[", ".").split("."))
        _check(value >= 0 or echoed or signed, f"{where} = {value!r} < 0")
    code = {True: 0, False: 1}.get(report["fits"], 5) if printed else verdict_code(plan)
    _check(code in (0, 1, 5), f"exit code {code}")
    state = report.get("state") or {}
    per_seq = state.get("bytes_per_sequence")
    _check(per_seq is None or (_whole(per_seq) and per_seq > 0), f"state {per_seq!r} per sequence")
    for c in state.get("components", []):
        _check(c["bytes_per_sequence"] == c["layers"] * c["entries_per_layer"] * c["bytes_per_entry"],
               f"component {c['name']} bytes disagree with layers x entries x bytes")
    weights = (report.get("weights") or {}).get("bytes")
    _check(weights is None or (_whole(weights) and weights > 0), f"weights {weights!r}")
    need = (report.get("target") or {}).get("required_sequences")
    for lay in report.get("layouts") or []:
        if lay.get("fits"):
            _check(lay["valid"] and need is not None and lay["max_sequences"] >= need,
                   f"layout {lay['id']} fits with {lay['max_sequences']} of {need} sequences")
    rec = report.get("recommended")
    if report["fits"] is True:
        _check(rec is not None and rec["fits"] and rec["max_sequences"] >= need,
               f"FITS but the recommendation is {rec}")
    if report["fits"] is False and rec is not None:
        _check(not rec["fits"], "does not fit, yet the recommendation fits")
    doc = json.loads(render_json(report), parse_constant=lambda c: (_ for _ in ()).throw(Wrong(c)))
    problem = next(_schema().iter_errors(doc), None)
    _check(problem is None, f"report schema: {problem and problem.message[:120]}")
    if not printed:
        render_text(plan)
    return str(code)


_SCHEMA: dict = {}


def _schema():
    if "v" not in _SCHEMA:
        import jsonschema

        path = MODEL.parents[4] / "schemas" / "report.schema.json"
        _SCHEMA["v"] = jsonschema.Draft202012Validator(json.loads(path.read_text()))
    return _SCHEMA["v"]


def plan_argv(argv: list[str]) -> str:
    """Plan ARGV in-process. An engine check ([engine] check, --check-engine) is validated
    (kvfit.preflight.options) but not run: it starts the engine's own Python, which is the
    engine's input, not kvfit's (and a process start per case)."""
    from kvfit.cli.plan_args import build_parser
    from kvfit.cli.request import request_from
    from kvfit.planner.build import plan
    from kvfit.preflight.options import engine_check

    with redirect_stderr(io.StringIO()):
        req = request_from(vars(build_parser().parse_args(argv)))
        if req.check_engine is not None:
            engine_check(req)
            req.check_engine = None
        return check_report(_escaped_expr(lambda: plan(req)))


def config_json(case: tuple[str, str, list[str]]) -> str:
    text, _, flags = case
    with tempfile.TemporaryDirectory() as root:
        Path(root, "config.json").write_text(text, encoding="utf-8", errors="surrogatepass")
        return plan_argv([root, *flags, *PLAN_FLAGS])


def _finite_fields(obj, what: str) -> None:
    for f in dataclasses.fields(obj):
        name, value = f.name, getattr(obj, f.name)
        if isinstance(value, float):
            _check(math.isfinite(value) and value > 0, f"{what}.{name} = {value!r}")


def preset_toml(case: tuple[str, str]) -> str:
    mode, text = case
    with tempfile.TemporaryDirectory() as root:
        shutil.copytree(MODEL, Path(root, "model"))
        path = Path(root, "preset.toml")
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        if mode == "audit":
            from kvfit.audit.config import load_frontier
            f = load_frontier(path)
            _check(0 <= f.min_coverage <= 1 and 0 <= f.min_family_coverage <= 1, "coverage")
            for row in (*f.hardware, *f.systems):
                counts = row.get("counts", row.get("node_counts"))
                _check(all(_whole(c) and 0 < c <= 4096 for c in counts), f"counts {counts}")
            return "audit"
        if mode == "calibrate":
            return _calibrate(path)
        return plan_argv([str(path)])


def _calibrate(path: Path) -> str:
    from kvfit.calibrate import deploy
    from kvfit.cli.calibrate_cmd import run
    from kvfit.cli.preset import load_preset

    _, cal = deploy.load(path, load_preset(path, for_calibration=True))
    _finite_fields(cal, "calibration")
    _check(all(getattr(cal, k) <= 7 * 86_400 for k in ("startup_timeout", "request_timeout",
                                                       "metrics_interval")), "a timeout past a week")
    _check(0 < cal.port < 65536 and cal.output_tokens >= 1, "port / output_tokens")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        code = _escaped_expr(lambda: run([str(path), "--dry-run", "--json"]))
    _check(code == 0, f"dry run exit {code}")
    doc = json.loads(out.getvalue(), parse_constant=lambda c: (_ for _ in ()).throw(Wrong(c)))
    points = doc["concurrency"]["points"]
    _check(all(_whole(p) and p >= 1 for p in points), f"points {points}")
    return "dry-run"


def spec_yaml(case: tuple[str, str]) -> str:
    from kvfit.specs.architecture import compile_architecture
    from kvfit.specs.loader import load_text
    from kvfit.specs.registry import ARCH_SCHEMA, _extended, specs_dir
    from kvfit.specs.schema import check

    spec_id, text = case
    doc, problems = load_text(text, f"{spec_id}.yaml")
    if doc is not None and not problems:
        problems = check(doc, ARCH_SCHEMA)
    if doc is not None and not problems:   # `extends: BASE` as the registry reads it
        doc, problems = _extended(specs_dir("architectures") / f"{spec_id}.yaml", doc)
    arch = None
    if doc is not None and not problems:
        arch, problems = compile_architecture(doc)
    _check((arch is None) == bool(problems), "compiled with problems, or refused without any")
    for p in problems:
        _check(p.line >= 1 and p.col >= 1 and p.message and "\n" not in p.message,
               f"problem {p.code} at {p.line}:{p.col}: {p.message[:80]!r}")
        p.render()
    if arch is None:
        return "rejected"                 # refused with located problems, as it should be
    return _escaped_expr(lambda: _evaluate(arch, spec_id))


def _evaluate(arch, spec_id: str) -> str:
    """The compiled spec against its own family's first pinned config (at 4k tokens)."""
    from kvfit.state.evaluate import check_requirements, evaluate_components
    from kvfit.state.fields import resolve_fields
    from kvfit.state.layers import evaluate_layers

    configs = sorted((MODEL.parents[2] / spec_id / "configs").glob("*/config.json"))
    if not configs:
        return "compiled"
    config = json.loads(configs[0].read_text())
    root = config.get(arch.config_root, config) if getattr(arch, "config_root", None) else config
    root = root if isinstance(root, dict) else config
    fields = resolve_fields(arch, root)
    check_requirements(arch, fields)
    values = {k: r.value for k, r in fields.items() if r.value is not None}
    n_layers, sets = evaluate_layers(arch, values)
    _check(_whole(n_layers) and n_layers >= 1, f"{n_layers!r} layers")
    names = {"kv_bytes": 2, "index_bytes": 2, "model_bytes": 2, "mtp": 0}
    for c in evaluate_components(arch, fields, sets, 4096, names, None):
        _check(_whole(c.bytes_per_sequence), f"{c.name}: {c.bytes_per_sequence!r} bytes")
    return "evaluated"


_SANDBOX: dict = {}


def _sandbox() -> Path:
    """A folder with the local paths model_ref cases name (made once per worker)."""
    if "root" not in _SANDBOX:
        root = Path(tempfile.mkdtemp(prefix="kvfit-fuzz-refs-"))
        shutil.copytree(MODEL, root / "model")
        shutil.copy(MODEL / "config.json", root / "config.json")
        (root / "file.gguf").write_bytes(b"GGUF" + b"\0" * 60)
        (root / "bad.gguf").write_bytes(b"not a gguf")
        (root / "empty").mkdir()
        (root / "loop").symlink_to(root / "loop")
        _SANDBOX["root"] = root
    return _SANDBOX["root"]


def model_ref(case: tuple[str, str | None]) -> str:
    import os

    from kvfit.hub import parse_reference
    from kvfit.hub.reference import _REPO_ID, _REVISION, ARTIFACT_SUFFIXES
    from kvfit.planner.build import load_metadata
    from kvfit.planner.request import PlanRequest

    text, revision = case
    here = os.getcwd()
    os.chdir(_sandbox())
    try:
        ref = parse_reference(text, revision)
        _check(ref.kind in ("hub", "local", "gguf-file", "hub-artifact"), f"kind {ref.kind}")
        if ref.repo_id is not None:
            _check(bool(_REPO_ID.fullmatch(ref.repo_id)) and len(ref.repo_id) <= 96
                   and "--" not in ref.repo_id and ".." not in ref.repo_id, f"repo {ref.repo_id!r}")
        if ref.revision is not None:
            _check(bool(_REVISION.fullmatch(ref.revision)) and ".." not in ref.revision,
                   f"revision {ref.revision!r}")
        if ref.kind in ("hub", "hub-artifact") and ref.path is not None:
            parts = ref.path.split("/")
            _check(not ref.path.startswith("/") and not {"", ".", ".."} & set(parts),
                   f"in-repo path {ref.path!r}")
        if ref.kind == "hub-artifact":
            _check(ref.path.lower().endswith(ARTIFACT_SUFFIXES), f"artifact {ref.path!r}")
        _check(isinstance(ref.source, str), "source")
        meta = load_metadata(PlanRequest(model=text, revision=revision, offline=True))
        _check(isinstance(meta.config, dict), "config not an object")
        return ref.kind
    finally:
        os.chdir(here)


def bench_json(case: tuple[str, int, int]) -> str:
    from kvfit.calibrate.bench import read_result
    from kvfit.calibrate.qualify import judge, summarize

    text, concurrency, per_request = case
    with tempfile.TemporaryDirectory() as root:
        path = Path(root, "bench.json")
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        result, problem = read_result(path)
    prompts = concurrency * 2
    metrics = {"max_running": concurrency, "max_waiting": 0, "waiting_samples": 0,
               "max_kv_usage": 0.5, "samples": 4, "errors": 0, "last_error": None,
               "implausible": [], "metrics": {"running": "r", "waiting": "w", "kv_usage": "k"}}
    raw = {"offered_concurrency": concurrency, "num_prompts": prompts, "command": ["bench"],
           "exit_status": 0, "timed_out": False, "duration_s": 1.0, "result": result,
           "result_problem": problem, "output_tail": [], "metrics": metrics, "oom": [],
           "prompt_counter": {"metric": "p", "names": ["p"], "before": 0,
                              "after": prompts * per_request, "delta": prompts * per_request,
                              "error": None}}
    point = judge(raw, per_request, {"max_ttft_ms": 500.0})
    summary = summarize([point], [concurrency], concurrency, None, {"max_ttft_ms": 500.0})
    doc = json.dumps({"point": point, "summary": summary}, allow_nan=False)
    json.loads(doc)
    if point["qualified"]:
        got = point["tokens"]["reported_total"]
        _check(isinstance(result, dict) and point["completions"]["completed"] == prompts
               and not point["completions"]["failed"], "qualified without every completion")
        _check(_whole(got) and prompts * per_request - got <= 4 * prompts, f"qualified at {got!r}")
    _check(summary["calibrated"] == point["qualified"], "calibrated disagrees with its point")
    for key in ("ttft_ms", "tpot_ms", "e2e_ms"):
        v = point["latency"][key]
        _check(v is None or (math.isfinite(v) and v >= 0), f"latency {key} = {v!r}")
    return "qualified" if point["qualified"] else "rejected"


TARGETS = {"config_json": config_json, "preset_toml": preset_toml, "spec_yaml": spec_yaml,
           "model_ref": model_ref, "bench_json": bench_json}
