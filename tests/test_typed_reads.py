"""No string-key reads of the report or its parts in kvfit/planner, kvfit/engines and
kvfit/report: the planner builds typed parts (kvfit.model) and reads them by attribute.

What counts as a string-key read of the report (an AST scan, imports inside functions too):
  - `x["key"]` (a subscript read with a string constant) or `x.get("key", ...)`,
  - where "key" is a JSON field name of some part of kvfit.model (the report's own
    vocabulary: `max_sequences`, `per_rank`, `recommended`, `fits`, ...),
  - and the receiver (the name the subscript chain starts from, or the attribute it ends in:
    `m.edge["x"]` -> `edge`, `e["memory"]["value"]` -> `e`) is not one of the external-data
    holders named below.
External data read by key is not the report: a checkpoint's config.json, an engine or
architecture spec (YAML), the user's flags and options, a parsed engine log, nvidia-smi.
The engines build their prediction typed (kvfit.model.engine) and read it by attribute, so
no file has a string-key read of the report left.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

from kvfit import model

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("planner", "engines", "report")

# receivers holding external data, anywhere in the three packages
EXTERNAL = {
    "config": "a checkpoint's config.json", "cfg": "a checkpoint's config.json",
    "root": "the (text) config.json the spec matched", "model_config": "config.json",
    "vals": "evaluated spec values of config.json", "values": "spec values / config values",
    "rules": "an engine spec's version rules (YAML)", "rule": "one engine spec rule (YAML)",
    "rem": "an engine spec constraint's remedy (YAML)", "reg": "a spec's fitted regime (YAML)",
    "tier": "an engine spec's batch tier (YAML)", "spec": "an engine spec (YAML)",
    "flags": "the engine flags the user gave", "opts": "CLI options",
    "given": "CLI options as given", "ns": "an argparse namespace",
    "detected": "what nvidia-smi reported (kvfit.hardware.detect)",
    "FIELDS": "the request's field table",
    "commands": "an engine spec's command templates (YAML)",
    "cmds": "an engine spec's command templates (YAML)",
    "estimates": "an engine spec's fitted estimates (YAML)",
    "blocks": "an engine spec's version blocks (YAML)",
    "cond": "an engine spec rule's condition (YAML)",
    "entry": "an architecture spec's engine entry (YAML)",
    "_top": "a checkpoint's top-level config.json",
}
# (file, receiver): external data under a short name in one module
EXTERNAL_IN = {
    ("planner/constraints.py", "c"): "an engine spec's layout_constraints entry (YAML)",
    ("planner/constraints.py", "q"): "the checkpoint's quantization summary (kvfit.checkpoint)",
    ("planner/build.py", "engine"): "a library caller's engine options (plan(engine=...))",
    ("planner/build.py", "BoolOp"): "`(quant or {})`: the checkpoint's quantization summary",
    ("planner/sections.py", "summary"): "the checkpoint's quantization summary",
    ("planner/rope.py", "rope"): "the config's rope_scaling block",
    ("planner/rope.py", "doc"): "the --rope-scaling JSON the user gave",
    ("planner/sections.py", "rope"): "the config's rope_scaling block",
    ("planner/ownership.py", "data"): "a safetensors header / index (kvfit.checkpoint)",
    ("planner/fit.py", "row"): "kvfit fit's own rows (its JSON, not a plan report)",
    ("planner/fit.py", "r"): "kvfit fit's own rows (its JSON, not a plan report)",
    ("planner/fit.py", "BoolOp"): "kvfit fit's own rows (its JSON, not a plan report)",
    ("planner/request.py", "values"): "the request's input values",
    ("planner/pp_layouts.py", "env"): "an engine spec rule (YAML)",
    ("planner/build.py", "dict"): "the plan's cache dtype names by cache (kv, index), planner pairs",
    ("planner/launch.py", "dict"): "the plan's cache dtype names by cache (kv, index), planner pairs",
    ("planner/spellings.py", "normalize_tp"): "the request's input values (normalize_tp)",
    ("report/check_text.py", "c"): "the engine check's open JSON (preflight results)",
    ("report/check_text.py", "r"): "the engine check's open JSON (preflight results)",
    ("report/check_text.py", "section"): "the engine check's open JSON (preflight results)",
    ("report/plot.py", "b"): "the plot's own series (built from the report, then drawn)",
    ("report/plot.py", "c"): "the plot's own series",
    ("report/plot.py", "s"): "the plot's own series",
    ("report/plot.py", "panel"): "the plot's own series",
    ("engines/rows.py", "p"): "a parsed engine log's printed numbers (LogFacts.printed)",
    ("engines/explain.py", "p"): "a parsed engine log's printed numbers",
    ("engines/cli_args.py", "out"): "engine CLI arguments parsed from a launch command",
    ("engines/registry.py", "data"): "an engine spec file (YAML)",
    ("engines/explain.py", "user"): "the engine flags the user gave explain-log",
    ("engines/rope_cache.py", "params"): "config.json's rope_parameters / rope_scaling",
    ("engines/spec.py", "c"): "an engine spec's layout constraint (YAML)",
    ("engines/state.py", "c"): "an engine spec's storage layout row (YAML)",
    ("engines/state.py", "row"): "an engine spec's architecture row (YAML)",
    ("engines/command.py", "pieces"): "the layout pieces an engine spec's command names",
    ("engines/command.py", "env"): "an engine spec rule (YAML)",
    ("engines/quant_methods.py", "BoolOp"): "`(quant or {})`: the checkpoint's quantization summary",
    ("engines/budget.py", "BoolOp"): "`(inp.quant or {})`: the checkpoint's quantization summary",
    ("engines/sglang_mm.py", "r"): "an engine spec's multimodal rows (YAML)",
    ("engines/sglang_dsv4.py", "r"): "an engine spec rule (YAML)",
    ("engines/sglang_dsv4.py", "cell"): "an engine spec's table cell (YAML)",
    ("engines/vllm_blocks.py", "row"): "an engine spec's block-size rows (YAML)",
    ("engines/vllm_blocks.py", "rows"): "an engine spec's block-size rows (YAML)",
    ("engines/logparse.py", "flags"): "flags parsed from an engine log",
    ("engines/vllm_engine.py", "BoolOp"): "`(rules.values.get(...) or {})`: an engine spec rule (YAML)",
    ("engines/vllm_engine.py", "t"): "an engine spec's batch tier rows (YAML)",
    ("engines/vllm_engine.py", "data"): "the JSON a running vLLM server answers (GET /version)",
    ("engines/sglang_engine.py", "data"): "the JSON a running SGLang server answers",
    ("engines/sglang_engine.py", "info"): "the JSON a running SGLang server answers",
    ("engines/vllm.py", "rows"): "an engine spec's table rule (YAML)",
    ("engines/vllm.py", "row"): "an engine spec's table row (YAML)",
    ("engines/vllm.py", "tiers"): "an engine spec's batch tier rule (YAML)",
    ("engines/vllm.py", "majors"): "an engine spec's compute-capability rule (YAML)",
    ("engines/vllm.py", "model"): "config.json as a whole (Inputs.model_config)",
    ("engines/sglang.py", "row"): "an engine spec's table row (YAML)",
    ("engines/sglang.py", "BoolOp"): "`(dsv4 or rules)[...]`: an engine spec rule (YAML)",
    ("engines/spec.py", "b"): "an engine spec's version block (YAML)",
    ("engines/explain.py", "fl"): "the run's engine flags (the log's and the user's)",
    ("planner/spellings.py", "aliases"): "the engine flags the user gave, by engine spelling",
}
def report_keys() -> set[str]:
    """Every JSON field name of a part of the report model."""
    out = set()
    for name in model.SUBMODULES:
        for v in vars(importlib.import_module(f"kvfit.model.{name}")).values():
            if isinstance(v, type) and dataclasses.is_dataclass(v):
                out |= {f.name for f in dataclasses.fields(v)}
    return out - {"more"}


def _receiver(node) -> str:
    """The name a subscript / call chain starts from (`m.edge` -> edge, `e["a"]["b"]` -> e)."""
    while isinstance(node, (ast.Subscript, ast.Call, ast.Attribute)):
        if isinstance(node, ast.Attribute):
            return node.attr
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else type(node).__name__


def reads(path: Path, keys: set[str]) -> list[tuple[int, str, str]]:
    """(line, receiver, key) of every string-key read of a report field name in `path`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        key = recv = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            key, recv = node.slice.value, _receiver(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            key, recv = node.args[0].value, _receiver(node.func.value)
        if key in keys:
            out.append((node.lineno, recv, key))
    return out


def report_reads() -> dict[str, list[tuple[int, str, str]]]:
    """{file: its string-key reads of the report}, external-data receivers left out."""
    keys, found = report_keys(), {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / "kvfit" / pkg).glob("*.py")):
            name = f"{pkg}/{path.name}"
            hits = [r for r in reads(path, keys)
                    if r[1] not in EXTERNAL and (name, r[1]) not in EXTERNAL_IN]
            if hits:
                found[name] = hits
    return found


def test_the_scan_sees_a_string_key_read_and_not_an_attribute_read(tmp_path):
    src = tmp_path / "x.py"
    src.write_text('def f(lay, config):\n    a = lay["max_sequences"]\n'
                   '    b = lay.get("fits")\n    c = lay.max_sequences\n'
                   '    d = config["hidden_size"]\n    e = lay["not_a_report_key"]\n')
    found = reads(src, report_keys())
    assert [(line, key) for line, _, key in found] == [(2, "max_sequences"), (3, "fits")]


def test_no_string_key_reads_of_the_report():
    found = report_reads()
    assert not found, "string-key reads of the report: " + "; ".join(
        f"{n}: " + ", ".join(f"{line} {recv}[{key!r}]" for line, recv, key in hits[:6])
        for n, hits in sorted(found.items()))


def test_the_planner_reads_no_layout_by_key():
    """Layouts, their per-rank memory, the engine prediction, summaries and search candidates
    are typed at the source: the planner has no string-key read of the report left."""
    assert not {n: h for n, h in report_reads().items() if n.startswith("planner/")}


def test_the_planner_writes_no_sentences_with_the_report_words():
    """The planner returns facts (kvfit.report.reasons); only kvfit/report words them, so no
    planner module imports kvfit.report.words (count, number, gib, tokens)."""
    found = []
    for path in sorted((ROOT / "kvfit" / "planner").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("report.words"):
                found.append(f"{path.name}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("report") \
                    and any(a.name == "words" for a in node.names):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, found
