"""Hostile plan inputs: mutated real config.json files, TOML presets (plan, [calibration] and
audit files) and architecture spec YAML. Structure-aware: each case starts from a real file
and tells one to three lies in it (a value of the wrong type or size, a removed or duplicated
key, deep nesting, a truncation), so most of the case still reaches the code behind the
parser."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

from .generators import _expr, _pick

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
CONFIGS = sorted((TESTS / "architectures").glob("*/configs/*/config.json"))
SPECS = sorted(p for p in (ROOT / "specs" / "architectures").glob("*.yaml")
               if not p.name.startswith("_"))

# values a config field may be replaced with: wrong types, edges, huge and odd numbers
ODD = [None, 0, 1, -1, 2, 3, 7, 2**31, 2**32 + 1, 2**53 + 1, 2**63, 2**64, 10**30, 0.5, 1e-300,
       1e308, -1e308, True, False, "", "64", "full_attention", "sliding_attention", "\x1b[31m",
       "\ud800", [], [0], [1, 2], ["full_attention"] * 3, {}, {"a": 1}, {"type": "yarn"}]
# raw JSON tokens json.dumps cannot write (spliced into the text)
RAW = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 400, "9" * 5000, "-0", "1E+308",
       "[" * 3000 + "]" * 3000, '"\\ud800"', '"\\u0000"', "0.000000000000000000001"]
CONTEXTS = ["1", "4096", "32k", "128k", "1m", "0", "-5", "1e999", "nan", "10000000000000"]


def _paths(doc, prefix=()):
    """Every (path, value) in a JSON document, lists included (at most 8 items each)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k), v
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:8]):
            yield (*prefix, i), v
            yield from _paths(v, (*prefix, i))


def _set(doc, path, value) -> None:
    for key in path[:-1]:
        doc = doc[key]
    if value is _DELETE:
        del doc[path[-1]]
    else:    # a copy: ODD's lists and dicts are shared, and a later edit inside one would
        doc[path[-1]] = copy.deepcopy(value)     # change ODD itself or nest it in itself


_DELETE = object()


def _numeric_lie(rng: random.Random, value):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _pick(rng, ODD)
    return _pick(rng, [value * 2, value // 2 if isinstance(value, int) else value / 2, value + 1,
                       value - 1, -value, 0, value * 10**6, value * 2**40, float(value) + 0.5])


def config_json_case(rng: random.Random) -> tuple[str, str, list[str]]:
    """(config.json text, a label, extra plan flags) from a real pinned config."""
    path = _pick(rng, CONFIGS)
    doc = json.loads(path.read_text())
    marks: list[str] = []
    for _ in range(rng.randint(1, 3)):
        paths = [p for p, _ in _paths(doc)]
        if not paths:
            break
        where = _pick(rng, paths)
        roll = rng.random()
        try:
            if roll < 0.15 and not isinstance(where[-1], int):
                _set(doc, where, _DELETE)
            elif roll < 0.55:
                current = doc
                for key in where:
                    current = current[key]
                _set(doc, where, _numeric_lie(rng, current))
            elif roll < 0.85:
                _set(doc, where, _pick(rng, ODD))
            else:
                token = f"@@RAW{len(marks)}@@"
                marks.append(_pick(rng, RAW))
                _set(doc, where, token)
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(doc, indent=1, ensure_ascii=rng.random() < 0.5)
    for i, raw in enumerate(marks):
        text = text.replace(f'"@@RAW{i}@@"', raw)
    roll = rng.random()
    if roll < 0.05:
        text = text[: rng.randrange(len(text) + 1)]                  # truncated
    elif roll < 0.1:                                                 # a duplicate key
        text = text.replace("{", '{"num_hidden_layers": 0, ', 1)
    flags = ["--context", _pick(rng, CONTEXTS[:5]) if rng.random() < 0.9 else _pick(rng, CONTEXTS)]
    if rng.random() < 0.5:
        flags.append("--allow-context-overflow")
    if rng.random() < 0.15:
        flags += ["--engine", _pick(rng, ["vllm", "sglang"])]
    if rng.random() < 0.2:
        flags += ["--kv-dtype", _pick(rng, ["fp8", "auto", "bf16"])]
    if rng.random() < 0.3:
        flags += ["--weight-gib", str(_pick(rng, [1, 60, 400, 1e-300, 1e300]))]
    if rng.random() < 0.15:
        flags += ["--users", str(_pick(rng, [1, 4, 64, 10**6]))]
    return text, path.parent.name, flags


# ---- TOML presets ------------------------------------------------------------------------

def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(value), repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)        # a basic string, escapes included


TOML_ODD = [0, -1, 1, 2**63 - 1, -(2**63), 0.0, -0.5, 1e308, float("nan"), float("inf"),
            float("-inf"), True, "", "~", "~/x", "x" * 300, "\x1b]0;t\x07", "../../etc",
            "/dev/zero", [], ["vllm"], [1, "x"], [0], [-1, 2**40], {"a": 1}, "32k", "auto",
            "http://[::1", "http://user:SECRET@127.0.0.1:1", "{model} {unknown}", "{"]
PLAN_BASE = {"model": "model", "context": "32k", "hardware": "h100-80", "gpus": 2,
             "kv_dtype": "auto", "utilization": 0.9, "concurrent_users": 4, "offline": True,
             "timeout": 5, "tp": 2, "weight_gib": 60}
ENGINE_TABLE = {"check": "vllm", "tp": 1, "timeout": 60, "require_pass": False}
CALIBRATION = {"engine": "vllm", "mode": "attach", "base_url": "http://127.0.0.1:8000",
               "output_tokens": 4, "concurrency": [1, 2, 4], "requests_per_concurrency": 2,
               "request_timeout": 60, "metrics_interval": 0.5, "max_ttft_ms": 500}
LAUNCH = {"engine": "sglang", "mode": "launch", "port": 30000, "server_args": ["--x", "1"],
          "startup_timeout": 600, "max_concurrency": 8, "benchmark_command":
          ["python", "-m", "bench", "--concurrency", "{concurrency}", "--out", "{result_file}"]}
AUDIT = {"audit": {"name": "fuzz", "offline": True, "min_coverage": 0.5, "engine": "vllm"},
         "models": [{"family": "qwen3", "model": "model", "contexts": ["8k", 32768],
                     "kv_dtype": "auto", "required": True}],
         "hardware": [{"preset": "h100-80", "counts": [1, 8]}],
         "systems": [{"preset": "dgx-h100", "node_counts": [1, 2]}]}


def _lie(rng: random.Random, table: dict, keys: list[str]) -> None:
    key = _pick(rng, sorted(table) + keys) if rng.random() < 0.9 else "bogus_key"
    current, roll = table.get(key), rng.random()
    if roll < 0.1:
        table.pop(key, None)
    elif roll < 0.4:
        table[key] = _pick(rng, TOML_ODD)                     # any type
    elif isinstance(current, str):                            # a string of another meaning
        table[key] = _pick(rng, [v for v in TOML_ODD if isinstance(v, str)])
    elif isinstance(current, list) and current:               # one item lies
        table[key] = [*current[:-1], _numeric_lie(rng, current[-1])]
    else:
        table[key] = _numeric_lie(rng, current if current is not None else 1)


def _render_tables(root: dict, tables: dict[str, dict], arrays: dict[str, list]) -> str:
    out = [f"{k} = {_toml_value(v)}" for k, v in root.items()]
    for name, table in tables.items():
        out += [f"[{name}]", *(f"{k} = {_toml_value(v)}" for k, v in table.items())]
    for name, rows in arrays.items():
        for row in rows:
            out += [f"[[{name}]]", *(f"{k} = {_toml_value(v)}" for k, v in row.items())]
    return "\n".join(out) + "\n"


def preset_toml_case(rng: random.Random) -> tuple[str, str]:
    """(mode, TOML text): mode plan | calibrate | audit."""
    from . import gen_refs

    mode = _pick(rng, ["plan", "plan", "calibrate", "audit"])
    if mode == "audit":
        doc = json.loads(json.dumps(AUDIT))
        for _ in range(rng.randint(1, 3)):
            part = _pick(rng, ["audit", "models", "hardware", "systems"])
            table = doc[part] if part == "audit" else _pick(rng, doc[part])
            _lie(rng, table, ["family", "model", "contexts", "counts", "node_counts"])
        text = _render_tables({}, {"audit": doc["audit"]},
                              {k: doc[k] for k in ("models", "hardware", "systems")})
    else:
        root = dict(PLAN_BASE)
        tables: dict[str, dict] = {}
        if rng.random() < 0.3:
            tables["engine"] = dict(ENGINE_TABLE)
        if rng.random() < 0.2:
            tables["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0,
                                      "original_max_position_embeddings": 32768}
        if mode == "calibrate":
            tables["calibration"] = dict(_pick(rng, [CALIBRATION, LAUNCH]))
        for _ in range(rng.randint(1, 3)):
            name = _pick(rng, ["root", *tables])
            _lie(rng, root if name == "root" else tables[name],
                 list(PLAN_BASE) if name == "root" else [])
        text = _render_tables(root, tables, {})
    roll = rng.random()
    if roll < 0.04:
        text = text[: rng.randrange(len(text) + 1)]
    elif roll < 0.08:
        text += "deep = " + "[" * rng.choice([10, 500, 3000]) + "]" * 10 + "\n"
    elif roll < 0.1:
        text += gen_refs.text_lie(rng) + "\n"
    return mode, text


# ---- spec YAML ---------------------------------------------------------------------------

SNIPPETS = ["", "null", "~", "[", "{", "{a: 1}", "- x", "'", '"', "&a x", "*a", "!!str x",
            "!!python/object:os.system 'id'", "1e999", "-1", "0", "2**96", "0x10", ".inf", ".nan",
            "9" * 5000, "{" * 40, "[" * 40, "- - - - - - - - - - - - - - - - - - - - - x", "\t",
            ": :", "2001-01-01", "yes", "kv_heads.__class__", "'\x1b[2J'", "? complex", "|\n  x"]
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(7))
_SCALAR = re.compile(r"^(\s*(?:- )?[A-Za-z_][\w.-]*:\s*)(\S.*)$")


def spec_yaml_case(rng: random.Random) -> tuple[str, str]:
    """(spec id, YAML text): a real architecture spec with one to three lies in it."""
    path = _pick(rng, SPECS)
    lines = path.read_text().splitlines()
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        match = _SCALAR.match(lines[i])
        roll = rng.random()
        if roll < 0.35 and match:                     # a value: an expression, number or snippet
            value = match.group(2)
            if rng.random() < 0.5 and not value.startswith(("[", "{", "'", '"')):
                value = f"'{_expr(rng, rng.randint(1, 3))}'"
            else:
                value = _pick(rng, SNIPPETS)
            lines[i] = match.group(1) + value
        elif roll < 0.5:
            del lines[i]
        elif roll < 0.65:
            lines.insert(i, lines[i])                  # a duplicated key or list item
        elif roll < 0.8:
            lines.insert(i, _pick(rng, SNIPPETS))
        elif roll < 0.9 and match:                     # a number scaled or negated
            lines[i] = re.sub(r"\b\d+\b", lambda m: str(_pick(rng, [0, -1, 2**64, int(m.group())
                                                                     * 1000])), lines[i], count=1)
        else:
            indent = len(lines[i]) - len(lines[i].lstrip())
            lines.insert(i, " " * (indent + rng.choice([1, 2, 4])) + "x: y")
    text = "\n".join(lines) + "\n"
    roll = rng.random()
    if roll < 0.03:
        text = LAUGHS + text
    elif roll < 0.06:
        text = "x: " + "{" * rng.choice([16, 40, 200]) + "\n" + text
    elif roll < 0.1:
        text = text[: rng.randrange(len(text) + 1)]
    return path.stem, text
