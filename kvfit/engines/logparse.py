"""Read a vLLM or SGLang start-up log: engine, version, model, flags, printed numbers.

Lines may carry process prefixes ("(EngineCore pid=285) INFO 04-22 15:57:45 [file:line]",
"(Worker_TP1 pid=445)", "[2026-01-31 13:50:39 TP2]") or none (quoted fragments). Each
number is read from the first rank that prints it, except the available KV memory, where
vLLM uses the smallest rank's blocks, so the smallest printed value is kept. A printed
number that is not one ('.', '1.2.3', too many digits, 0 where a count must be positive) is
ignored with a note; an engine argument out of range (gpu_memory_utilization -1, a count
given as a string) is a UsageError, never a negative prediction.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

from ..errors import UsageError

# Every pattern reads a long digit run in linear time: the quantifiers of _NUM are possessive
# (it is always followed by " tokens", which no shorter split could meet) and a number that
# starts a pattern must start its run ((?<![\d.])), so a 5,000-digit number in a hostile log
# is not rescanned from each of its digits (it was: about 1 s a line, quadratic in its length).
_NUM = r"([\d][\d,]*+\.?\d*+)"
VLLM = {
    "version": r"(?:version |V1 LLM engine \(v|API server version )(\d+\.\d+[\w.+-]*)",
    "model": r"█\s+model\s+(\S+)\s*$",
    "architecture": r"Resolved architecture: (\w+)",
    "max_model_len": r"Using max model len (\d+)",
    "max_num_batched_tokens": r"max_num_batched_tokens(?:=| to )(\d+)",
    "max_num_seqs": r"Defaulting max_num_seqs to (\d+)",
    # The "Free memory on device (free/total GiB) on startup. Desired GPU memory utilization
    # is (util, requested GiB). Actual usage is W GiB for weight, A GiB for peak activation,
    # N GiB for non-torch memory, ..." line (gpu_worker.py, INFO since about 0.10.2; later
    # releases print "W GiB for consumed memory (weights + non-torch)", which is not weights).
    "gpu_memory_utilization": r"(?:Requested memory: |--gpu-memory-utilization=|Desired GPU "
                              r"memory utilization is \()([\d.]+)",
    "total_gib": r"(?:total_memory=|Free memory on device \([\d.]+/)([\d.]+) ?GiB",
    "requested_gib": r"(?:Requested memory: [\d.]+ \(util\), |Desired GPU memory utilization is "
                     r"\([\d.]+, )([\d.]+) GiB",
    "free_at_start_gib": r"(?:Initial free memory: |free_memory=|Free memory on device \()"
                         r"([\d.]+)(?: ?GiB|/)",
    "weights_gib": r"(?:weights memory: |Model loading took )([\d.]+) ?GiB|Actual usage is "
                   r"([\d.]+) GiB for weight,",
    "activation_gib": r"torch peak memory increase: ([\d.]+)GiB|(?<![\d.])([\d.]+) GiB for peak "
                      r"activation",
    "non_torch_gib": r"non-torch forward increase memory: ([\d.]+)GiB|(?<![\d.])([\d.]+) GiB for "
                     r"non-torch memory",
    "non_kv_gib": r"Total non KV cache memory: ([\d.]+)GiB",
    "cudagraph_gib": r"Estimated CUDA graph memory: ([\d.]+) GiB total",
    "available_gib": r"Available KV cache memory: ([\d.]+) GiB",
    "kv_tokens": r"GPU (?:\+ host )?KV cache size: " + _NUM + " tokens",
    "concurrency_len": r"Maximum concurrency for " + _NUM + " tokens per request",
    "concurrency": r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x",
    "num_gpu_blocks": r"(?:num_gpu_blocks is: |# GPU blocks: )(\d+)",
    "padding_layers": r"Add (\d+) padding layers",
    "attention_block_size": r"Setting attention block size to (\d+) tokens",
    "recurrent_padding_percent": r"Padding mamba page size by ([\d.]+)%",
    "dcp": r"Multiplying the GPU KV cache size by the dcp_world_size (\d+)",
    "graphs_piecewise": r"(?:PIECEWISE=|Estimated PIECEWISE CUDA graph memory: .*\()(\d+)",
    "graphs_full": r"(?:FULL=|Estimated FULL CUDA graph memory: .*\()(\d+)",
    "refusal_len": r"To serve at least one request with the model'?s max seq len \((\d+)\)",
}
SGLANG = {
    "architecture": r"Load weight end\..*?type=(\w+)",
    "avail_after_load_gib": r"Load weight end\..*?avail mem=([\d.]+) GB",
    "weights_gib": r"Load weight end\..*?mem usage=([\d.]+) GB",
    "full_tokens": r"full_layer_tokens=(\d+)",
    "swa_tokens": r"swa_layer_tokens=(\d+)",
    "pool_tokens": r"KV Cache is allocated\..*?#tokens: (\d+)",
    "k_gib": r"KV Cache is allocated\..*? K size: ([\d.]+) GB",
    "v_gib": r"KV Cache is allocated\..*? V size: ([\d.]+) GB",
    "kv_gib": r"KV Cache is allocated\..*? KV size: ([\d.]+) GB",
    "pool_end_avail_gib": r"Memory pool end\. avail mem=([\d.]+) GB",
    "max_total_num_tokens": r"max_total_num_tokens=(\d+)",
    "max_running_requests": r"max_running_requests=(\d+)",
    "context_len": r"context_len=(\d+)",
    "mamba_cache_size": r"max_mamba_cache_size: (\d+)",
}
_VLLM_MARKS = ("Available KV cache memory", "GPU KV cache size", "Maximum concurrency for",
               "num_gpu_blocks is", "EngineCore", "vllm")
_SGLANG_MARKS = ("KV Cache is allocated", "max_total_num_tokens=", "server_args=ServerArgs",
                 "Load weight end", "sliding window memory pool", "Memory pool end")
# "Worker_TP3" or a word "TP3" ("[... TP3]"); the prefix is checked by read_lines, so the
# search starts at a literal (fast over a whole log). No rank of 5,000 digits is read.
_RANK = re.compile(r"TP([0-9]{1,5})(?![0-9])", re.ASCII)
# Literal text each pattern needs (any one of): a line holding none of a pattern's keys is
# not searched with it, so a log of a million request lines is read at the speed of `in`.
KEYS = {
    "version": ("version ", "V1 LLM engine (v"), "model": ("█",),
    "architecture": ("Resolved architecture: ", "Load weight end."),
    "max_model_len": ("Using max model len ",), "max_num_batched_tokens": ("max_num_batched_tokens",),
    "max_num_seqs": ("Defaulting max_num_seqs to ",),
    "gpu_memory_utilization": ("Requested memory: ", "--gpu-memory-utilization=",
                               "Desired GPU memory utilization is ("),
    "total_gib": ("total_memory=", "Free memory on device ("),
    "requested_gib": ("Requested memory: ", "Desired GPU memory utilization is ("),
    "free_at_start_gib": ("Initial free memory: ", "free_memory=", "Free memory on device ("),
    "weights_gib": ("weights memory: ", "Model loading took ", "Actual usage is ",
                    "Load weight end."),
    "activation_gib": ("torch peak memory increase: ", " GiB for peak activation"),
    "non_torch_gib": ("non-torch forward increase memory: ", " GiB for non-torch memory"),
    "non_kv_gib": ("Total non KV cache memory: ",),
    "cudagraph_gib": ("Estimated CUDA graph memory: ",),
    "available_gib": ("Available KV cache memory: ",), "kv_tokens": ("KV cache size: ",),
    "concurrency_len": ("Maximum concurrency for ",), "concurrency": ("Maximum concurrency for ",),
    "num_gpu_blocks": ("num_gpu_blocks is: ", "# GPU blocks: "),
    "padding_layers": (" padding layers",),
    "attention_block_size": ("Setting attention block size to ",),
    "recurrent_padding_percent": ("Padding mamba page size by ",),
    "dcp": ("Multiplying the GPU KV cache size by the dcp_world_size ",),
    "graphs_piecewise": ("PIECEWISE=", "Estimated PIECEWISE CUDA graph memory: "),
    "graphs_full": ("FULL=", "Estimated FULL CUDA graph memory: "),
    "refusal_len": ("To serve at least one request with the model",),
    "avail_after_load_gib": ("Load weight end.",), "full_tokens": ("full_layer_tokens=",),
    "swa_tokens": ("swa_layer_tokens=",), "pool_tokens": ("KV Cache is allocated.",),
    "k_gib": ("KV Cache is allocated.",), "v_gib": ("KV Cache is allocated.",),
    "kv_gib": ("KV Cache is allocated.",), "pool_end_avail_gib": ("Memory pool end.",),
    "max_total_num_tokens": ("max_total_num_tokens=",),
    "max_running_requests": ("max_running_requests=",), "context_len": ("context_len=",),
    "mamba_cache_size": ("max_mamba_cache_size: ",),
}
_ARGS_KEYS = ("non-default args: ", "server_args=ServerArgs(")
# Fewer, shorter strings, one of which every key holds (tests/test_explain_log_bounds.py
# checks): the whole log is searched for these, and only the lines found for the keys.
ANCHORS = ("version", "LLM engine", "█", "architecture", "Load weight", "max", "emory",
           "Model loading", "Actual usage", "activation", "KV cache", "KV Cache", "concurrency",
           "GPU blocks", "num_gpu_blocks", "adding", "block size", "PIECEWISE", "FULL=",
           "To serve", "layer_tokens", "context_len", "non-default args", "ServerArgs")
MAX_LINE_CHARS = 1 << 16      # a start-up line is far shorter; a longer one is read cut here


@dataclass(slots=True)
class LogFacts:
    """What a start-up log states. printed: name -> number; flags: engine argument names."""

    engine: str
    version: str | None = None
    model: str | None = None
    architecture: str | None = None
    tp: int | None = None
    max_rank: int | None = None     # the highest TP rank a line prefix names (Worker_TP3, TP3)
    flags: dict = field(default_factory=dict)
    printed: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


# Printed numbers that must be positive (a 0 would divide or make an empty pool) and
# fractions that must lie in (0, 1].
_PRINTED_POSITIVE = {"dcp", "total_gib", "attention_block_size", "max_model_len",
                     "concurrency_len", "max_num_seqs", "max_num_batched_tokens"}
_FRACTIONS = {"gpu_memory_utilization", "mem_fraction_static"}
MAX_PRINTED = 2**63            # no count or size in a start-up log comes near this
_POSITIVE_INT_FLAGS = {"max_model_len", "max_num_seqs", "max_num_batched_tokens", "block_size",
                       "decode_context_parallel_size", "page_size", "max_running_requests",
                       "max_total_tokens", "context_length", "attn_dp_size", "max_mamba_cache_size",
                       "tensor_parallel_size", "tp_size", "kv_cache_memory_bytes"}
_INT_FLAGS = {"num_speculative_tokens": 0, "chunked_prefill_size": -1}    # name: minimum
_POSITIVE_FLAGS = {"swa_full_tokens_ratio", "mamba_full_memory_ratio"}


def _number(text: str):
    """A printed number (digits, commas, one '.'), or None when it is not one or not finite."""
    text = text.replace(",", "")
    try:
        value = float(text) if "." in text else int(text)
    except ValueError:        # '.', '1.2.3', more digits than Python converts
        return None
    if isinstance(value, int):
        return value if value <= MAX_PRINTED else None
    return value if math.isfinite(value) and value <= MAX_PRINTED else None


def _printed_ok(name: str, value) -> bool:
    if value is None:
        return False
    if name in _FRACTIONS:
        return 0 < value <= 1
    return value > 0 if name in _PRINTED_POSITIVE else value >= 0


def _scan(lines: list[str], table: dict, facts: LogFacts) -> None:
    for line in lines:
        for name, pattern in table.items():
            if not any(k in line for k in KEYS[name]):
                continue
            m = re.search(pattern, line)
            if not m:
                continue
            raw = next(g for g in m.groups() if g is not None)
            value = raw if name in ("version", "model", "architecture") else _number(raw)
            if not isinstance(value, str) and not _printed_ok(name, value):
                facts.notes.append(f"ignored the log's {name} value {raw[:40]!r}: not a usable "
                                   "number")
                continue
            if name == "available_gib" and name in facts.printed:
                value = min(value, facts.printed[name])
            if name not in facts.printed or name == "available_gib":
                facts.printed[name] = value


def _vllm_args(lines: list[str], facts: LogFacts) -> None:
    for line in lines:
        m = re.search(r"non-default args: (\{.*)$", line)
        if not m:
            continue
        try:
            args = ast.literal_eval(m.group(1).strip())
        except (ValueError, SyntaxError):
            facts.notes.append("the 'non-default args' line is cut off; read what it shows")
            args = {k: _literal(v) for k, v in re.findall(
                r"'(\w+)': ('[^']*'|True|False|-?\d+\.?\d*)", m.group(1))}
        if isinstance(args, dict):
            facts.flags |= {k: v for k, v in args.items() if k != "model_tag"}
        return


def _sglang_args(lines: list[str], facts: LogFacts) -> None:
    for line in lines:
        m = re.search(r"server_args=ServerArgs\((.*)\)", line)
        if m:
            for k, v in re.findall(r"(\w+)=('[^']*'|\"[^\"]*\"|[^,()]+)", m.group(1)):
                facts.flags[k] = _literal(v.strip())
            return


def _literal(text: str):
    """A Python literal from a log line, or the text itself when it is not one."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _check_flags(flags: dict) -> None:
    """Engine flags the prediction uses must be numbers in range; UsageError otherwise."""
    for name, value in list(flags.items()):
        if value is None:
            del flags[name]          # SGLang prints unset arguments as None
            continue
        if name in _FRACTIONS:
            ok, want = _real(value) and 0 < value <= 1, "a fraction in (0, 1]"
        elif name in _POSITIVE_FLAGS:
            ok, want = _real(value) and value > 0, "a number above 0"
        elif name in _POSITIVE_INT_FLAGS:
            ok, want = _whole(value) and 1 <= value <= MAX_PRINTED, "a whole number of at least 1"
        elif name in _INT_FLAGS:
            ok, want = _whole(value) and _INT_FLAGS[name] <= value <= MAX_PRINTED, \
                f"a whole number of at least {_INT_FLAGS[name]}"
        else:
            continue
        if not ok:
            raise UsageError(f"the log's engine arguments give {name} = {str(value)[:40]!r}, "
                             f"which is not {want}; kvfit will not predict from it.",
                             hint="Check the log, or pass the flag explicitly.")


def _real(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value) <= MAX_PRINTED and (isinstance(value, int) or math.isfinite(value))


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def detect(text: str, marks: tuple[int, int] | None = None) -> str:
    """'vllm' or 'sglang'; UsageError naming the lines looked for when it is neither.
    marks: (SGLang, vLLM) marks already counted (read_lines), instead of `text`."""
    s, v = marks or (sum(m in text for m in _SGLANG_MARKS), sum(m in text for m in _VLLM_MARKS))
    if not s and not v:
        raise UsageError("this is not a vLLM or SGLang start-up log kvfit can read: it has none "
                         f"of the lines {', '.join(repr(m) for m in _VLLM_MARKS[:4])} (vLLM) or "
                         f"{', '.join(repr(m) for m in _SGLANG_MARKS[:4])} (SGLang).",
                         hint="Pass the engine's start-up output from launch to the KV-cache lines.")
    return "sglang" if s > v else "vllm"


MAX_KEPT_LINES = 100_000       # lines that look like start-up lines; a start-up log has ~1,000


def _key_lines(chunk: str, keys: tuple[str, ...]) -> list[str]:
    """The lines of `chunk` holding any of `keys`, in order (str.find over the whole chunk:
    a line that holds none costs no Python work)."""
    spans = set()
    for key in keys:
        i = chunk.find(key)
        while i != -1:
            start = chunk.rfind("\n", 0, i) + 1
            end = chunk.find("\n", i)
            end = len(chunk) if end == -1 else end
            spans.add((start, end))
            i = chunk.find(key, end)
    return [chunk[a:min(b, a + MAX_LINE_CHARS)] for a, b in sorted(spans)]


def read_lines(chunks) -> tuple[list[str], tuple[int, int], int | None]:
    """One pass over a log given as text chunks, each a whole number of lines (a file is
    streamed): (the lines a pattern or the engine arguments may need, each cut at
    MAX_LINE_CHARS; how many of each engine's marks were seen (SGLang, vLLM); the highest TP
    rank a line prefix names). UsageError past MAX_KEPT_LINES such lines."""
    keys = tuple({k for ks in KEYS.values() for k in ks} | set(_ARGS_KEYS))
    kept, seen, rank = [], set(), None
    for chunk in chunks:
        kept += [line for line in _key_lines(chunk, ANCHORS) if any(k in line for k in keys)]
        if len(kept) > MAX_KEPT_LINES:
            raise UsageError(f"this log has more than {MAX_KEPT_LINES:,} lines that look like "
                             "engine start-up lines; a start-up log has about a thousand.",
                             hint="Pass the start-up part only: from the launch to the "
                                  "KV-cache lines.")
        seen.update(m for m in (*_SGLANG_MARKS, *_VLLM_MARKS) if m not in seen and m in chunk)
        for m in _RANK.finditer(chunk):
            before = chunk[max(0, m.start() - 7):m.start()]
            if before == "Worker_" or not (before[-1:].isascii() and before[-1:].isalnum()
                                           or before[-1:] == "_"):
                rank = int(m.group(1)) if rank is None else max(rank, int(m.group(1)))
    marks = (sum(m in seen for m in _SGLANG_MARKS), sum(m in seen for m in _VLLM_MARKS))
    return kept, marks, rank


def parse(text) -> LogFacts:
    """Parse a start-up log, given as text or as text chunks of whole lines (UsageError when
    it is not one, or has no capacity lines)."""
    lines, marks, rank = read_lines([text] if isinstance(text, str) else text)
    engine = detect("", marks)
    facts = LogFacts(engine, max_rank=rank)
    _scan(lines, VLLM if engine == "vllm" else SGLANG, facts)
    (_vllm_args if engine == "vllm" else _sglang_args)(lines, facts)
    _check_flags(facts.flags)
    p = facts.printed
    for key in ("version", "model", "architecture"):
        setattr(facts, key, p.pop(key, None))
    facts.model = facts.flags.get("model") or facts.flags.get("model_path") or facts.model
    tp = facts.flags.get("tensor_parallel_size") or facts.flags.get("tp_size")
    facts.tp = int(tp) if tp else (rank + 1 if rank and engine == "sglang" else None)
    _require(facts)
    return facts


def _require(facts: LogFacts) -> None:
    need = {"vllm": ("available_gib", "kv_tokens", "num_gpu_blocks", "refusal_len"),
            "sglang": ("pool_tokens", "max_total_num_tokens", "full_tokens")}[facts.engine]
    if not any(k in facts.printed for k in need):
        what = {"vllm": "'Available KV cache memory', 'GPU KV cache size' or 'num_gpu_blocks'",
                "sglang": "'KV Cache is allocated. #tokens' or 'max_total_num_tokens='"}
        raise UsageError(f"this {facts.engine} log has no KV-cache sizing line ({what[facts.engine]}"
                         "), so there is nothing to compare.",
                         hint="Include the start-up lines up to the KV-cache allocation.")
