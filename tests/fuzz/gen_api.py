"""Hostile inputs for the Python API, the web page's JSON API and the MCP tools: keyword
options (unknown names, wrong types, huge and non-ASCII numbers, NaN, nested containers,
hostile strings, huge lists), query strings, JSON and log bodies, and tool arguments."""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import quote

from .generators import _pick

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "engine_logs"
MODEL = "Qwen/Qwen3-32B"                       # a catalog model: planned offline
# names kvfit.plan takes, a few kvfit.fit / explain_log take, and names nothing takes
NAMES = ["hardware", "gpus", "nodes", "tp", "pp", "context", "users", "concurrent_users",
         "utilization", "kv_dtype", "engine", "system", "max_model_len", "max_num_seqs",
         "block_size", "weight_gib", "runtime_reserve_gib", "device_memory_gib", "timeout",
         "gpu_memory_utilization", "hf_overrides", "rope_scaling", "systems", "parallelism",
         "memory_basis", "revision", "tune", "min_gpus", "max_context", "family",
         "no_catalog", "model_dir", "engine_version", "predict_weights", "offline",
         "bogus", "", "Context", "__class__", "a" * 300, "контекст", "gpus ", "json",
         "config", "check_engine", "engine_python", "plot", "sweep", "model"]
# a value a name takes, so some calls get through to a plan
VALID = {"hardware": ["h100-80", "b200-180", "custom:96"], "gpus": [1, 2, 8, "8"],
         "nodes": [1, 2], "tp": [1, 2, 8, "auto"], "context": ["32k", 8192, "4k"],
         "users": [1, 4, "16"], "concurrent_users": [2], "utilization": [0.9, "0.85"],
         "kv_dtype": ["fp8", "bf16"], "engine": ["vllm", "sglang"], "system": ["dgx-h100"],
         "family": ["qwen3"], "no_catalog": [True], "tune": [False], "max_model_len": [8192]}


def _huge_int() -> int:
    return 10 ** 5000                          # a str() of it hits Python's int-string limit


HOSTILE = [None, True, False, 0, -1, 2**64, float("nan"), float("inf"), -float("inf"), 1e309,
           -0.0, 1.5, "nan", "inf", "²", "١٢", "１２", "9" * 5000, "", " ", "\0", "\x00" * 9,
           "x\ny", "\u202e8", "../../etc/passwd", "1e309", "0x10", "1_000", "32k\n", "a" * 5000,
           [], [1], ["8", "16"], [[[]]], {}, {"a": {"b": [1]}}, b"8", (1, 2), {1, 2},
           "[" * 3000, "{\"a\": 1}", "h100-80,h100-80", "custom:" + "9" * 5000, "custom:nan"]
SWEEPS = ["context=8k,32k", "gpus=1,2,4,8", "users=1,4", "kv-dtype=fp8,bf16", "bogus=1",
          "context=" + "9" * 5000, "gpus=²", "context=", "=", "", "users=١٢,2",
          "context=" + ",".join(["4k"] * 5000), "nodes=1,2"]


def _value(rng: random.Random, name: str):
    roll = rng.random()
    if name in VALID and roll < 0.5:
        return _pick(rng, VALID[name])
    if roll < 0.97:
        value = _pick(rng, HOSTILE)
        return _huge_int() if value == 2**64 and rng.random() < 0.3 else value
    return [_pick(rng, HOSTILE) for _ in range(rng.choice([1000, 100_000]))]   # a huge list


PLAN_NAMES = NAMES[:29]
FIT_NAMES = ["hardware", "gpus", "nodes", "tp", "context", "users", "utilization", "kv_dtype",
             "engine", "system", "family", "no_catalog", "tune"]
EXPLAIN_NAMES = ["tp", "hardware", "engine_version", "predict_weights", "weight_gib",
                 "max_model_len", "gpu_memory_utilization", "max_num_seqs", "block_size"]


def options(rng: random.Random, names=PLAN_NAMES) -> dict:
    """A few keyword options, each valid or hostile (mostly names the call takes, sometimes
    any name); sometimes none."""
    count = rng.choice([0, 1, 1, 2, 3, 5])
    chosen = [_pick(rng, names) if rng.random() < 0.85 else _pick(rng, NAMES)
              for _ in range(count)]
    return {n: _value(rng, n) for n in dict.fromkeys(chosen)}


def api_options_case(rng: random.Random) -> tuple[str, dict]:
    """(function: plan | sweep | fit, keyword options)."""
    func = _pick(rng, ["plan", "plan", "sweep", "fit"])
    opts = options(rng, FIT_NAMES if func == "fit" else PLAN_NAMES)
    opts.pop("model", None)                # the positional: a second one is Python's TypeError
    if func == "plan" and "hardware" not in opts and rng.random() < 0.8:
        opts["hardware"] = "h100-80"
    if func == "sweep":
        opts["sweep"] = (_pick(rng, SWEEPS) if rng.random() < 0.6 else
                         [_pick(rng, SWEEPS) for _ in range(rng.randint(0, 3))]
                         if rng.random() < 0.8 else _value(rng, "sweep"))
    if func == "fit":
        opts.setdefault("context", _pick(rng, ["8k", "4k", 8192]))
        opts.setdefault("hardware", "h100-80")
        if rng.random() < 0.9:
            opts.setdefault("family", "qwen3")            # the whole catalog is ~1 s a case
    return func, opts


def _text(value) -> str:
    """A value as a query string holds it (any type becomes its text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value > 10 ** 100:
        return "9" * 5000
    return json.dumps(value, default=repr) if not isinstance(value, float) else repr(value)


def _query(rng: random.Random, opts: dict) -> str:
    pairs = []
    for name, value in opts.items():
        for v in (value if isinstance(value, list) and len(value) < 50 else [value]):
            pairs.append(f"{quote(name)}={quote(_text(v)[:20_000], safe='')}")
    raw = _pick(rng, ["", "", "", "%ff%fe", "%00", "&&&", "=", "a=%", "model", "%zz=1",
                      "model=%E2%80%AE", "x=" + "a" * 9000])
    if raw:
        pairs.insert(rng.randrange(len(pairs) + 1), raw)
    return "&".join(pairs)[:60_000]        # httpx (the test client) refuses a URL over 64 KiB


ROUTES = ["/api/plan", "/api/plan", "/api/plan#post", "/api/sweep", "/api/command",
          "/api/fit", "/api/explain-log", "/api/catalog", "/api/folders", "/api/nope",
          "/api/plan/", "/api/hardware", "/api/systems"]


def _log(rng: random.Random) -> tuple[str, bytes]:
    """(the log's checkpoint folder, a fixture log's bytes, often cut or broken)."""
    from engine_log_cases import load_cases

    case = _pick(rng, sorted(load_cases(), key=lambda c: c.slug))
    text = (LOGS / f"{case.slug}.log").read_bytes()
    roll = rng.random()
    if roll < 0.3:
        text = text[:rng.randrange(len(text) + 1)]
    elif roll < 0.4:
        i = rng.randrange(len(text) + 1)
        text = text[:i] + bytes([rng.choice([0xff, 0xc3, 0x00])]) + text[i:]
    elif roll < 0.5:
        text = _pick(rng, [b"", b"\xff\xfe", b"{}", b"x" * 100_000, b"\n" * 50_000])
    return str(case.model_dir), text


def web_requests_case(rng: random.Random) -> tuple[str, str, str, bytes, str]:
    """(method, route, query string, body, content type)."""
    route = _pick(rng, ROUTES)
    if route == "/api/plan#post":
        body = {"model": MODEL} | options(rng) if rng.random() < 0.9 else options(rng)
        roll = rng.random()
        if roll < 0.7:
            try:
                raw = json.dumps(body, default=repr, allow_nan=True).encode()
            except ValueError:                      # an int JSON cannot print: write it out
                raw = b'{"model": "Qwen/Qwen3-32B", "gpus": ' + b"9" * 5000 + b"}"
        else:
            raw = _pick(rng, [b"", b"null", b"[]", b"\xff", b"{", b"[" * 5000 + b"]" * 5000,
                              b'{"model": 1}', b'{"model": "' + b"a" * 70_000 + b'"}',
                              b'{"model": "Qwen/Qwen3-32B", "gpus": 1e400}',
                              b'{"model": "Qwen/Qwen3-32B", "gpus": NaN}',
                              b'{"model": "Qwen/Qwen3-32B", "context": ' + b"9" * 5000 + b"}"])
        return "POST", "/api/plan", _query(rng, {}), raw, "application/json"
    if route == "/api/explain-log":
        model_dir, text = _log(rng)
        opts = options(rng, EXPLAIN_NAMES)
        if rng.random() < 0.8:
            opts = {"model_dir": model_dir} | opts
        return "POST", route, _query(rng, opts), text, "text/plain"
    opts = options(rng, FIT_NAMES if route == "/api/fit" else PLAN_NAMES)
    if route in ("/api/plan", "/api/sweep", "/api/command") and rng.random() < 0.85:
        opts = {"model": _pick(rng, [MODEL] * 6 + ["", "nope/nope", "x.toml", "/etc",
                                                    "a" * 5000, "١٢/٣٤"])} | opts
        opts.setdefault("hardware", "h100-80")
    if route == "/api/sweep":
        opts["sweep"] = [_pick(rng, SWEEPS) for _ in range(rng.randint(0, 3))]
    if route == "/api/fit":
        opts.setdefault("context", "8k")
        opts.setdefault("hardware", "h100-80")
        if rng.random() < 0.9:
            opts.setdefault("family", "qwen3")
    if route in ("/api/catalog", "/api/folders"):
        opts = {"q": _pick(rng, ["qwen", "", "/", "./", "~", "/proc/self/", "../" * 50,
                                 "/etc/\0", "\u202e", "a" * 9000, "Qwen/Qwen3-32B", "%"])}
    return "GET", route, _query(rng, opts), b"", ""


TOOLS = ["plan", "plan", "sweep", "fit", "explain_log", "list_hardware", "list_systems",
         "catalog_search"]


def mcp_arguments_case(rng: random.Random) -> tuple[str, dict | None]:
    """(tool name, arguments) as a client's tools/call carries them."""
    tool = _pick(rng, TOOLS) if rng.random() < 0.97 else _pick(rng, ["", "nope", "a" * 5000,
                                                                     "plan\0", "PLAN"])
    args = options(rng, FIT_NAMES if tool == "fit" else EXPLAIN_NAMES if tool == "explain_log"
                   else PLAN_NAMES)
    if tool in ("plan", "sweep") and rng.random() < 0.9:
        args = {"model": _pick(rng, [MODEL] * 8 + [None, 1, "", "x.toml", ["a"]])} | args
        args.setdefault("hardware", "h100-80")
    if tool == "sweep" and rng.random() < 0.9:
        args["sweep"] = (_pick(rng, SWEEPS) if rng.random() < 0.5 else
                         [_pick(rng, SWEEPS) for _ in range(rng.randint(0, 3))])
    if tool == "fit":
        args.setdefault("context", "8k")
        args.setdefault("hardware", "h100-80")
        if rng.random() < 0.9:
            args.setdefault("family", "qwen3")
    if tool == "explain_log" and rng.random() < 0.9:
        model_dir, text = _log(rng)
        args = {"text": text.decode("utf-8", "replace") if rng.random() < 0.9
                else _value(rng, "text")} | args
        if rng.random() < 0.8:
            args = {"model_dir": model_dir} | args
    if tool == "catalog_search":
        args = {k: v for k, v in {"query": _value(rng, "query") if rng.random() < 0.5
                                  else "qwen", "limit": _value(rng, "limit")}.items()
                if rng.random() < 0.7}
    return tool, (None if not args and rng.random() < 0.3 else args)
