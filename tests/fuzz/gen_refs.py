"""Hostile model references (repo ids, Hub URLs, hf:// URIs, GGUF URLs, local paths) and
benchmark result JSON (what `kvfit calibrate` reads back from the engine's benchmark)."""

from __future__ import annotations

import json
import random

from .generators import _pick

ORGS = ["Qwen", "openai", "a", "A" * 96, "-x", "x-", "a..b", "a--b", "org.", "ü", "org name",
        "ＱＷＥＮ", "org%2F..", "", ".", "x" * 97, "Qwen/Qwen3", "org\x00", "hf.co"]
NAMES = ["Qwen3-32B", "gpt-oss-20b", "b", "name.git", "n" * 96, "..", "x/../y", "a@b", "@",
         "model-GGUF", "DeepSeek-V3.2", "Llama_3.1", "", "na me", "\u202ename"]
REVISIONS = ["main", "v1.0", "refs/pr/1", "0" * 40, "..", "a/../b", "a//b", "%2E%2E", "x" * 300,
             "", "a b", "rev%2Fsub", "@", "~1", "HEAD^", "\x1b"]
HOSTS = ["https://huggingface.co", "http://huggingface.co", "https://hf.co", "HTTPS://HF.CO",
         "https://www.huggingface.co", "https://huggingface.co:443", "https://huggingface.co:8080",
         "https://evil.example", "https://user:pw@huggingface.co", "https://[::1",
         "https://huggingface.co:99999", "ftp://huggingface.co", "https://huggingface.co.evil.io",
         "https://huggingface.co@evil.io"]
FILES = ["model.safetensors", "model-00001-of-00002.safetensors", "m.Q4_K_M.gguf", "config.json",
         "../x.gguf", "a/%2e%2e/b.gguf", "sub/dir", "x.bin", "", "a//b.gguf", "A.GGUF",
         "%00.gguf", "x" * 300 + ".gguf"]
VERBS = ["tree", "blob", "resolve", "raw", "", "commit"]


def _repo(rng: random.Random) -> str:
    return f"{_pick(rng, ORGS[:4]) if rng.random() < 0.6 else _pick(rng, ORGS)}/" + (
        _pick(rng, NAMES[:4]) if rng.random() < 0.6 else _pick(rng, NAMES))


def _rev(rng: random.Random) -> str:
    return _pick(rng, REVISIONS[:4]) if rng.random() < 0.6 else _pick(rng, REVISIONS)


def text_lie(rng: random.Random) -> str:
    return _pick(rng, ["\x00", "\x1b[31m", "\ud800", "\u202e", " " * 3, "\t", "é", "%", "\n"])


def model_ref_case(rng: random.Random) -> tuple[str, str | None]:
    """(reference text, separate revision or None). Local paths are relative to the worker's
    sandbox folder (see targets_plan.model_ref)."""
    roll = rng.random()
    if roll < 0.25:
        text = _repo(rng) + (f"@{_rev(rng)}" if rng.random() < 0.3 else "")
    elif roll < 0.55:
        text = f"{_pick(rng, HOSTS)}/{_repo(rng)}"
        if rng.random() < 0.7:
            text += f"/{_pick(rng, VERBS)}/{_rev(rng)}"
            if rng.random() < 0.7:
                text += f"/{_pick(rng, FILES)}"
        if rng.random() < 0.2:
            text += _pick(rng, ["/", "?download=true", "#frag", "//", "/.."])
    elif roll < 0.7:
        text = f"{_pick(rng, ['hf://', 'HF://', 'hf:/', 'hf:///'])}" + _pick(
            rng, ["", "datasets/", "spaces/", "buckets/"]) + _repo(rng)
        if rng.random() < 0.4:
            text += f"@{_rev(rng)}"
        if rng.random() < 0.5:
            text += f"/{_pick(rng, FILES)}"
    else:
        text = _pick(rng, ["./model", "./model/config.json", "./missing", "./file.gguf",
                           "./bad.gguf", "./empty", "./loop", "~", "~/x", "~nobody/x", ".", "..",
                           "/dev/zero", "/dev/null", "/proc/self/environ", "./" + "p" * 300,
                           "./a/" * 40, "model", "./model/", "./config.json"])
    if rng.random() < 0.1:
        pos = rng.randrange(len(text) + 1)
        text = text[:pos] + text_lie(rng) + text[pos:]
    if rng.random() < 0.05:
        text = text * rng.choice([2, 50, 2000])
    revision = _rev(rng) if rng.random() < 0.15 else None
    return text, revision


# ---- benchmark result JSON ----------------------------------------------------------------

BENCH_ODD = [None, 0, -1, 1, 7, 8, 16, 2**53, 10**400, 1.5, -0.0, "8", "", True, [], {},
             "NaN", float("nan"), float("inf"), 1e308, -1e308]
RAW = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 400, "9" * 5000, "[" * 5000 + "]" * 5000]
KEYS = ["total_input_tokens", "completed", "failed", "p99_ttft_ms", "p99_tpot_ms", "p99_e2el_ms",
        "p99_e2e_latency_ms", "errors", "num_prompts", "duration"]


def bench_json_case(rng: random.Random) -> tuple[str, int, int]:
    """(result file text, concurrency, input tokens per request)."""
    concurrency, per_request = _pick(rng, [1, 2, 8]), _pick(rng, [1, 128, 4096])
    prompts = concurrency * 2
    doc = {"total_input_tokens": prompts * per_request, "completed": prompts, "failed": 0,
           "p99_ttft_ms": 120.5, "p99_tpot_ms": 20.0, "p99_e2el_ms": 900.0, "errors": [""] * prompts}
    if rng.random() < 0.2:
        doc["total_input_tokens"] -= prompts * rng.randint(1, 5)       # a special-token shortfall
    marks = []
    for _ in range(rng.randint(0, 3)):
        key = _pick(rng, KEYS)
        roll = rng.random()
        if roll < 0.15:
            doc.pop(key, None)
        elif roll < 0.3:
            marks.append(_pick(rng, RAW))
            doc[key] = f"@@RAW{len(marks) - 1}@@"
        elif key == "errors" and roll < 0.6:
            doc[key] = [_pick(rng, ["", "CUDA out of memory", None, 7, {"e": "OOM"}, "x" * 500])
                        for _ in range(rng.randint(0, 4))]
        else:
            doc[key] = _pick(rng, BENCH_ODD)
    text = json.dumps(doc)
    for i, raw in enumerate(marks):
        text = text.replace(f'"@@RAW{i}@@"', raw)
    roll = rng.random()
    if roll < 0.1:                                   # JSON lines: the last one counts
        text = "\n".join([json.dumps({"completed": 0}), text, _pick(rng, ["", "{", text, "[1]"])])
    elif roll < 0.15:
        text = _pick(rng, ["", "null", "[]", "{", "\xff\xfe", '"x"', "[" * 5000, "1e999"])
    elif roll < 0.2:
        text = text[: rng.randrange(len(text) + 1)]
    return text, concurrency, per_request
