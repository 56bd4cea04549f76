"""One hostile input per (kind, rng): valid structure with one or more lies in it."""

from __future__ import annotations

import json
import random
import struct

from hostile import gguf as g

HOSTILE_INTS = [0, 1, 2, 255, 2**16, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**53, 2**63,
                2**64 - 1]
HOSTILE_NUMBERS = [".", "1.2.3", "1e999", "-1", "0", "01", "eight", "nan", "9" * 5000, "",
                   "0.0", "-0.5", "1,2,3", "4294967296", "1e308"]
HOSTILE_JSON = ["null", "-1", "1.5", "NaN", "Infinity", "true", '"12"', "[]", "{}", "1e400",
                "9" * 5000, "[" * 5000 + "]" * 5000, "-0", "18446744073709551616"]


def _pick(rng: random.Random, items):
    return items[rng.randrange(len(items))]


def _count(rng, true_value: int) -> int:
    return true_value if rng.random() < 0.7 else _pick(rng, HOSTILE_INTS)


# ---- GGUF ---------------------------------------------------------------------------------

def gguf_case(rng: random.Random) -> bytes:
    """A qwen3-like GGUF header; counts, lengths, types and layers may lie."""
    arch = _pick(rng, ["qwen3", "llama", "gemma2"])
    layers = _count(rng, rng.randint(1, 6))
    u = g.kv_u64 if layers >= 2**32 or rng.random() < 0.2 else g.kv_u32
    kvs = [g.kv_str("general.architecture", arch), u(f"{arch}.block_count", layers % 2**64),
           g.kv_u32(f"{arch}.embedding_length", _count(rng, 64) % 2**32),
           g.kv_u32(f"{arch}.attention.head_count", _count(rng, 4) % 2**32),
           g.kv_u32(f"{arch}.attention.head_count_kv", _count(rng, 2) % 2**32),
           g.kv_u32(f"{arch}.context_length", _count(rng, 4096) % 2**32),
           g.kv_u32(f"{arch}.feed_forward_length", 128)]
    if arch == "gemma2" or rng.random() < 0.3:
        kvs.append(g.kv_u32(f"{arch}.attention.sliding_window", _count(rng, 512) % 2**32))
    vocab = rng.randint(0, 40)
    items = b"".join(g.string(f"t{i}") for i in range(vocab))
    kvs.append(g.kv_array("tokenizer.ggml.tokens", g.STRING, _count(rng, vocab) % 2**64, items))
    if rng.random() < 0.3:
        kvs.append(g.kv_array("x.u8", g.U8, _count(rng, 4) % 2**64, b"\x01" * 4))
    if rng.random() < 0.2:                       # an unknown value type
        kvs.append(g.kv("x.bad", rng.randrange(0, 20), b"\0" * 8))
    if rng.random() < 0.2:                       # a string that lies about its length
        kvs.append(g.kv("x.s", g.STRING, g.string("abc", declared=_pick(rng, HOSTILE_INTS))))
    tensors = []
    for n in range(rng.randint(0, 4)):
        dims = [rng.randint(1, 8) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.1:
            dims = [_pick(rng, HOSTILE_INTS)] * rng.randint(1, 9)
        tensors.append(g.tensor_info(f"blk.{n}.attn_q.weight", [d % 2**64 for d in dims],
                                     ggml_type=_pick(rng, [0, 1, 8, 30, 99]), offset=32 * n))
    data = g.gguf(kvs, tensors, n_kv=_count(rng, len(kvs)) % 2**64,
                  n_tensors=_count(rng, len(tensors)) % 2**64, tail=b"\0" * 512)
    if rng.random() < 0.2:
        data = data[: rng.randrange(len(data) + 1)]
    if rng.random() < 0.1:
        pos = rng.randrange(len(data)) if data else 0
        data = data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1:]
    return data


# ---- safetensors --------------------------------------------------------------------------

def safetensors_case(rng: random.Random) -> bytes:
    """A safetensors file: 8-byte length + JSON header + data; any part may lie."""
    entries, offset = [], 0
    for n in range(rng.randint(0, 4)):
        shape = [rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
        size = 2
        for d in shape:
            size *= d
        entry = {"dtype": json.dumps(_pick(rng, ["BF16", "F16", "BF16", "F4", "Q9", "bf16"])),
                 "shape": json.dumps(shape), "data_offsets": json.dumps([offset, offset + size])}
        if rng.random() < 0.25:
            entry[_pick(rng, sorted(entry))] = _pick(rng, HOSTILE_JSON)
        if rng.random() < 0.1:
            entry["shape"] = "[" + _pick(rng, HOSTILE_JSON) + "]"
        body = ", ".join(f'"{k}": {v}' for k, v in entry.items())
        entries.append(f'"model.layers.{n}.w": {{{body}}}')
        offset += size
    if rng.random() < 0.15 and entries:
        entries.append(entries[0])                               # duplicate key
    if rng.random() < 0.15:
        entries.append('"__metadata__": ' + _pick(rng, ['{"format": "pt"}', '{"a": 1}', "[]",
                                                        '{"a": {"b": "c"}}']))
    header = ("{" + ", ".join(entries) + "}").encode()
    if rng.random() < 0.1:
        header = _pick(rng, HOSTILE_JSON).encode()
    declared = len(header) if rng.random() < 0.85 else _pick(rng, HOSTILE_INTS) % 2**64
    data = struct.pack("<Q", declared) + header + b"\0" * offset
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    return data


# ---- expressions --------------------------------------------------------------------------

NAMES = ("layers", "heads", "head_dim", "kv_bytes", "window", "flags", "label")
_OPS = ["+", "-", "*", "/", "//", "%", "**", "==", "<", ">=", " and ", " or ", " in ", " is ",
        "&", "|", "<<", "@"]


def _expr(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if depth <= 0 or roll < 0.25:
        return _pick(rng, [*NAMES, "1", "3", "0", "64", "2**96", "(1/3)", "1e308", "...", "'s'",
                           "None", "True", "0.5"])
    if roll < 0.35:
        fn = _pick(rng, ["min", "max", "ceil_div", "len", "abs", "open", "__import__"])
        args = ", ".join(_expr(rng, depth - 1) for _ in range(rng.randint(1, 2)))
        return f"{fn}({args})"
    if roll < 0.45:
        return f"({_expr(rng, depth - 1)}) ** {_pick(rng, ['2', '64', '65', '-1', 'layers'])}"
    if roll < 0.5:
        return f"({_expr(rng, depth - 1)} if {_expr(rng, depth - 1)} else {_expr(rng, depth - 1)})"
    if roll < 0.55:
        return _pick(rng, ["-", "not ", "~"]) + f"({_expr(rng, depth - 1)})"
    return f"({_expr(rng, depth - 1)}{_pick(rng, _OPS)}{_expr(rng, depth - 1)})"


def expr_case(rng: random.Random) -> tuple[str, dict]:
    """(expression text, name values); values include strings, lists, huge and odd numbers."""
    values = {n: _pick(rng, [1, 8, 128, 0, -1, 2**95, 10**300, 0.5, float("inf"), "abc",
                             [1, 2, 3], True, 2.5]) for n in NAMES}
    return _expr(rng, rng.randint(1, 5)), values


# ---- explain-log --------------------------------------------------------------------------

def explain_log_case(rng: random.Random, lines: list[str]) -> str:
    """A real start-up log with numbers and argument values replaced by hostile tokens."""
    import re

    out = []
    for line in lines:
        if rng.random() < 0.15:
            line = re.sub(r"\d[\d,]*\.?\d*", lambda m: _pick(rng, HOSTILE_NUMBERS)
                          if rng.random() < 0.5 else m.group(0), line)
        if "non-default args" in line and rng.random() < 0.5:
            line = re.sub(r"(': )([^,}]+)", lambda m: m.group(1) + _pick(
                rng, ["-1", "1e999", "'eight'", "01", "None", "True", "0", "[1]", "{", "0.95"]),
                line)
        if rng.random() < 0.02:
            line = line[: rng.randrange(len(line) + 1)]
        out.append(line)
    if rng.random() < 0.2:
        out.append("Multiplying the GPU KV cache size by the dcp_world_size "
                   + _pick(rng, HOSTILE_NUMBERS))
    return "\n".join(out)


# ---- Prometheus /metrics ------------------------------------------------------------------

GAUGES = ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")


def metrics_case(rng: random.Random) -> str:
    """/metrics text with odd values, labels and lines."""
    lines = []
    for _ in range(rng.randint(0, 8)):
        name = _pick(rng, [*GAUGES, "vllm:prompt_tokens_total", "other"])
        labels = _pick(rng, ['', '{engine="0"}', '{engine="1",tp_rank="1"}', '{bad', '{a="\\"}'])
        value = _pick(rng, ["3", "0", "1e308", "NaN", "+Inf", "-1", "2.5", "0.75", "1.5",
                            "9" * 400, "x", ""])
        lines.append(f"{name}{labels} {value}")
    if rng.random() < 0.2:
        lines.append("# HELP " + "x" * rng.randint(0, 100))
    return "\n".join(lines)


# ---- metadata cache entries ---------------------------------------------------------------

def cache_case(rng: random.Random) -> str:
    """A cache file's text: the snapshot shape with wrong types, or not that shape at all."""
    files = [[_pick(rng, ["config.json", "model.safetensors", "", "../x", 7, None]),
              _pick(rng, [10, 0, -5, None, 1.5, "12", True, 2**70])]
             for _ in range(rng.randint(0, 3))]
    data = {"files": files if rng.random() < 0.8 else _pick(rng, [7, "x", None, {}]),
            "config": _pick(rng, [{"model_type": "qwen3"}, None, [1], "x", 3]),
            "quant_config": _pick(rng, [None, {}, [], 1]),
            "index": _pick(rng, [None, {"weight_map": {}}, "x"])}
    if rng.random() < 0.15:
        del data[_pick(rng, sorted(data))]
    doc = {"format": _pick(rng, [1, 1, 1, 2, "1", None]), "data": data}
    if rng.random() < 0.1:
        return _pick(rng, ["[]", "null", "{", '"x"', "[" * 3000, '{"format": 1, "data": 5}'])
    return json.dumps(doc)


# ---- Hub model-info replies ---------------------------------------------------------------

def hub_info_case(rng: random.Random) -> tuple[bytes, dict]:
    """(body, headers) for a model-info reply: sha, siblings and sizes of any type; sometimes
    not JSON, not an object, or gzip-encoded."""
    import gzip

    names = ["config.json", "model.safetensors", "../etc/passwd", "/abs", "", "a\x1bb",
             None, 7, "x" * 2000, "sub/./x", "ok/model-00001-of-00002.safetensors"]
    sizes = [10, 0, -1, -999_999_999_999, 1.5, "12", True, None, 2**70, 2**50, {"a": 1}]
    siblings = []
    for _ in range(rng.randint(0, 5)):
        sib = {"rfilename": _pick(rng, names)}
        if rng.random() < 0.8:
            sib["size"] = _pick(rng, sizes)
        if rng.random() < 0.3:
            sib["lfs"] = {"size": _pick(rng, sizes), "sha256": "0" * 64, "pointerSize": 134}
        siblings.append(sib)
    doc = {"id": "a/b", "sha": _pick(rng, ["0" * 40, "abc", None, 5, "g" * 40]),
           "siblings": siblings if rng.random() < 0.9 else _pick(rng, [None, "x", 3, [1]])}
    body = json.dumps(doc).encode()
    if rng.random() < 0.1:
        body = _pick(rng, [b"[]", b"null", b"{", b"\xff\xfe", b"[" * 5000, b'"x"'])
    headers = {"Content-Type": "application/json"}
    if rng.random() < 0.2:
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    return body, headers
