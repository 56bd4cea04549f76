"""Hostile inputs for the newer surfaces: command lines (plan flags, --sweep, --plot, kvfit
fit, kvfit catalog), nvidia-smi output and NVML readings, and whole explain-log files (a real
log cut mid-line, rank prefixes, hostile numbers)."""

from __future__ import annotations

import random
from pathlib import Path

from .generators import HOSTILE_NUMBERS, _pick

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "engine_logs"
# the hostile values every number reader must refuse, and some it must accept
NUMBERS = ["9" * 5000, "²", "nan", "inf", "-1", "0", "1e309", "", "١٢", "1_000", "0x10",
           " 4 ", "+2", "1e3", "2.5", "-0", "1", "2", "4", "8", "0.9", "32k", "1m", "128K"]
PLAN_NUMERIC = ["--gpus", "--nodes", "--tp", "--pp", "--utilization", "--runtime-reserve-gib",
                "--device-memory-gib", "--concurrent-users", "--active-sequences-per-user",
                "--weight-gib", "--timeout", "--context", "--max-model-len", "--max-num-seqs",
                "--block-size", "--kv-cache-memory-bytes", "--num-speculative-tokens",
                "--tensor-parallel-size", "--gpu-memory-utilization", "--mem-fraction-static",
                "--page-size", "--swa-full-tokens-ratio", "--engine-tp", "--engine-timeout"]
AXES = ["context", "gpus", "users", "nodes", "kv-dtype", "bogus", "", "CONTEXT", "gpus "]
DTYPES = ["bf16", "fp8", "auto", "fp4", "nope", "", "١٢"]
LONG_NAME = "a" * 300


VALID = ["1", "2", "4", "8", "1", "0.9", "0.5", "16"]


def _value(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return _pick(rng, VALID)
    return _pick(rng, NUMBERS) if roll < 0.9 else _pick(rng, HOSTILE_NUMBERS)


def _plot(rng: random.Random, root: str) -> str:
    return _pick(rng, [f"{root}/p.png", f"{root}/p.svg", f"{root}/p.gif", f"{root}/{LONG_NAME}.png",
                       f"{root}/missing/p.png", root, "", f"{root}/p\0.png",
                       f"{root}/" + "b/" * 2100 + "p.png"])


def flags_case(rng: random.Random) -> tuple[list[str], str]:
    """(plan argv after the model, a mode: plan | sweep | plot)."""
    argv = ["--hardware", _pick(rng, ["h100-80"] * 6 + ["b200-180", "custom:96", "custom:nan",
                                                       "custom:" + "9" * 5000, "dgx-spark",
                                                       "auto"])]
    for flag in rng.sample(PLAN_NUMERIC, rng.randint(1, 3)):
        argv += [flag, _value(rng)]
    mode = _pick(rng, ["plan", "plan", "sweep", "plot"])
    if mode in ("sweep", "plot"):
        for _ in range(rng.randint(1, 2) if mode == "sweep" else rng.randint(0, 1)):
            axis = _pick(rng, AXES)
            values = [(_pick(rng, DTYPES) if axis == "kv-dtype" else _value(rng))
                      for _ in range(rng.randint(1, 4))]
            argv += ["--sweep", f"{axis}=" + ",".join(values)]
    return argv, mode


def fit_args_case(rng: random.Random) -> list[str]:
    """kvfit fit flags (the local checkpoint planned alone: --no-catalog)."""
    argv = ["--context", _value(rng) if rng.random() < 0.7 else "4k"]
    if rng.random() < 0.8:
        argv += ["--hardware", _pick(rng, ["h100-80", "rtx-5090-32", "custom:48", "nope"])]
    else:
        argv += ["--system", _pick(rng, ["dgx-h100", "dgx-spark", "nope"])]
    for flag in rng.sample(["--gpus", "--nodes", "--tp", "--users", "--utilization"],
                           rng.randint(0, 3)):
        argv += [flag, _value(rng)]
    if rng.random() < 0.2:
        argv += ["--kv-dtype", _pick(rng, DTYPES)]
    if rng.random() < 0.2:
        argv += ["--engine", _pick(rng, ["vllm", "sglang"])]
    return argv


def catalog_args_case(rng: random.Random) -> list[str]:
    ids = ["Qwen/Qwen3-32B", "qwen/qwen3-32b", "Qwen/Qwen3-3", "nope/nope", "", "a" * 5000,
           "../../etc/passwd", "Qwen/Qwen3-32B\0", "١٢/٣٤", "meta-llama/Llama-3.1-8B-Instruct"]
    if rng.random() < 0.8:
        return ["show", _pick(rng, ids)] + (["--json"] if rng.random() < 0.5 else [])
    argv = ["list"]
    for _ in range(rng.randint(0, 2)):
        argv += ["--family", _pick(rng, ["qwen3", "Qwen", "nvidia", "", "x" * 300, "١٢"])]
    return argv + (["--json"] if rng.random() < 0.5 else [])


NAMES = ["NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 5090", "NVIDIA B200", "NVIDIA GB10",
         "Tesla T4", "", "x" * 300, "NVIDIA H100, 80GB", "NVIDIA \u202e H100"]
MIB = ["81559", "80000", "0", "[N/A]", "[Not Supported]", "9" * 400, "-1", "1e5", "١٢٣",
       "81559.5", "nan", "", "102400001", "32607", "31500"]


def nvidia_smi_case(rng: random.Random) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) as nvidia-smi might print them."""
    lines = []
    name = _pick(rng, NAMES)
    for _ in range(rng.choice([0, 1, 1, 2, 8, rng.randint(0, 5000)])):
        if rng.random() < 0.2:
            name = _pick(rng, NAMES)
        parts = [name, _pick(rng, MIB), _pick(rng, MIB)]
        if rng.random() < 0.05:
            parts.append("extra")
        lines.append(", ".join(parts).encode())
    out = b"\n".join(lines) + b"\n"
    if rng.random() < 0.1:
        i = rng.randrange(len(out))
        out = out[:i] + bytes([rng.choice([0xff, 0xfe, 0xc3, 0x80])]) + out[i:]
    err = _pick(rng, [b"", b"NVIDIA-SMI has failed", b"\xff\xfe", b"x" * 5000])
    return rng.choice([0, 0, 0, 0, 6, 9, 255]), out, err


def nvml_case(rng: random.Random) -> tuple:
    """(count, [(name, total bytes, free bytes)]) as a fake NVML reports them."""
    count = rng.choice([0, 1, 2, 8, -1, 2**40, "8"])
    big = [0, 1, 85520809984, 2**63, 2**64 + 1, 10**400, -1, 1.5, None, "80"]
    gpus = []
    for _ in range(min(count, 12) if isinstance(count, int) and count > 0 else 0):
        name = _pick(rng, [n.encode() for n in NAMES] + [b"\xff\xfe", NAMES[0]])
        total = _pick(rng, big) if rng.random() < 0.4 else 85520809984
        free = _pick(rng, big) if rng.random() < 0.4 else 80000000000
        gpus.append((name, total, free))
    return count, gpus


RANKS = ["Worker_TP0", "Worker_TP1", "Worker_TP3", "Worker_TP7", "Worker_TP" + "9" * 5000,
         "Worker_TP١٢", "Worker_TP²", "Worker_TP-1", "TP5", "EngineCore"]


def explain_file_case(rng: random.Random) -> tuple[str, str, list[str]]:
    """(a fixture log's slug, the log text mutated, extra explain-log flags)."""
    from .generators import explain_log_case

    logs = sorted(p.stem for p in LOGS.glob("*.log"))
    slug = _pick(rng, logs)
    lines = (LOGS / f"{slug}.log").read_text().splitlines()
    text = explain_log_case(rng, lines) if rng.random() < 0.5 else "\n".join(lines)
    if rng.random() < 0.3:                                 # rank prefixes
        prefix = _pick(rng, RANKS)
        text = "\n".join(f"({prefix} pid=9) {x}" if rng.random() < 0.3 else x
                         for x in text.splitlines())
    if rng.random() < 0.4:                                 # cut short, often mid-line
        text = text[:rng.randrange(len(text) + 1)]
    if rng.random() < 0.1:
        text += "\n" + _pick(rng, text.splitlines() or [""]) * rng.randint(1, 2000)
    flags = []
    if rng.random() < 0.6:
        flags += ["--tp", _pick(rng, ["1", "2", "4", "8", "0", "3", "١٢", "9" * 5000])]
    if rng.random() < 0.3:
        flags += ["--hardware", _pick(rng, ["h100-80", "h200-141", "custom:24", "nope"])]
    if rng.random() < 0.1:
        flags += ["--predict-weights"]
    return slug, text, flags
