"""kvfit's `--engine vllm` prediction against vLLM 0.33's own recorded KV-cache plan.

Shared by tests/test_vllm_kv_record.py and bench/engine_record_diff.py. The record
(tests/engine_probe/vllm-0.33.0-kv.jsonl) was made by vLLM's own code
(tests/engine_probe/record_vllm_kv.py); nothing in it comes from kvfit.

A point is one (config dir, TP, --kv-cache-dtype, max_model_len, available KV bytes). kvfit
plans it as a user would: the same directory, `--engine vllm@0.33.0 --hardware h100-80
--gpus TP --tp TP --context L --kv-dtype KV --kv-cache-memory-bytes AVAIL` (the record
emulates 8 x H100 80GB). A config without weight bytes is planned the same way: with the pool
stated, vLLM needs no weights, and neither does kvfit's engine section. Compared: attention
bytes per token on one rank (vLLM: every non-Mamba layer spec's page bytes / block size;
kvfit: its groups' layers x page bytes / block tokens), block size, num_blocks (exact), "GPU
KV cache size" tokens and max concurrency (within 0.5 %), and whether the engine refuses to
start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, lru_cache
from pathlib import Path

import record_common

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "engine_probe" / "vllm-0.33.0-kv.jsonl"
# Further records of the same recorder on emulated Blackwell GPUs (record_vllm_kv.py --gpu):
# the record's GPU -> (kvfit's hardware preset, the device name and compute capability vLLM
# saw, as tests/engine_probe/vllm_gpu_emulation.py GPUS gives them).
GPU_RECORDS = {"b200": ("b200-180", "NVIDIA B200", "10.0"),
               "rtx-pro-6000": ("rtx-pro-6000-96",
                                "NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0")}


def gpu_record(gpu: str) -> Path:
    return ROOT / "tests" / "engine_probe" / f"vllm-0.33.0-kv-{gpu}.jsonl"
TOLERANCE = 0.005
# Known causes of a miss: listed by the bench and xfailed by the test. Keys: a config dir
# name, or "name/kv" for one --kv-cache-dtype, or "name/kv/tpN". None since GLM-5.3-Flash's
# packed pool (tests/test_vllm_glm5_next_record.py).
KNOWN: dict[str, str] = {}


def known_cause(row: dict) -> str | None:
    return record_common.known_cause(KNOWN, row)


@dataclass
class Point:
    dir: str
    tp: int
    kv: str
    length: int
    avail: int
    vllm: dict
    row: dict = field(repr=False, default_factory=dict)
    hardware: str = "h100-80"       # kvfit's preset for the GPU the record emulated

    @property
    def id(self) -> str:
        return f"{Path(self.dir).name}-tp{self.tp}-{self.kv}-{self.length}-{self.avail >> 30}g"


@cache
def record_rows(record: Path = RECORD) -> tuple[dict, ...]:
    return record_common.read_record(record)


def points(record: Path = RECORD, hardware: str = "h100-80") -> list[Point]:
    """Every recorded point where vLLM built its specs."""
    out = []
    for row in record_rows(record):
        for plan in row.get("plans", []):
            if "error" in plan:
                continue
            out.append(Point(row["dir"], row["tp"], row["kv_cache_dtype"], plan["max_model_len"],
                             plan["available_bytes"], plan, row, hardware))
    return out


def not_built(record: Path = RECORD) -> list[dict]:
    """Recorded (dir, TP, dtype) rows where vLLM itself could not build the specs here (on the
    Blackwell records: the nvfp4 rows it refuses)."""
    return [r for r in record_rows(record) if "error" in r]


def _attention_token_bytes(groups, layers_key, page_key, block_key, kind_of) -> Fraction:
    return sum((Fraction(g[layers_key] * g[page_key], g[block_key]) for g in groups
                if kind_of(g) != "recurrent"), Fraction(0))


def vllm_token_bytes(row: dict) -> Fraction:
    """Attention bytes per token on one rank: every non-Mamba layer spec's page / block size."""
    return _attention_token_bytes(row["specs"], "layers", "page_size_bytes", "block_size",
                                  lambda s: "recurrent" if s["type"] == "MambaSpec" else "attn")


@lru_cache(maxsize=8)
def _checkpoint(directory: str):
    """The config dir read once for all of its points and the plans' own re-reads of it."""
    from kvfit.checkpoint.local import load_local
    return load_local(ROOT / directory)


@cache
def _parser():
    """The plan's argument parser, built once (parse_args leaves it as it was)."""
    from kvfit.cli.plan_args import build_parser
    return build_parser()


def _run(args: list, directory: str) -> tuple[int, str, str]:
    """`kvfit ARGS` as the CLI parses and answers it, on the checkpoint read once."""
    import io
    from contextlib import redirect_stderr
    from unittest import mock

    from kvfit.cli.request import request_from, verdict_code
    from kvfit.errors import KvfitError
    from kvfit.planner import build
    from kvfit.report.jsonout import render_json

    here, read = (ROOT / directory).resolve(), build.load_metadata

    def load_metadata(req):
        """The suggestions' re-plans (--pp, --parallelism) read the checkpoint again: the same
        folder gives the read made once (the same config and quantization objects, so the
        per-checkpoint work of kvfit.checkpoint.metadata.once is shared too); the same JSON, byte for
        byte (checked on ten MiniMax-M3-NVFP4 points: 1.5 s -> 0.02 s a plan)."""
        same = req.model is not None and Path(str(req.model)).resolve() == here
        return _checkpoint(directory) if same else read(req)

    err = io.StringIO()
    ns = vars(_parser().parse_args([str(a) for a in args]))
    try:
        with redirect_stderr(err), mock.patch.object(build, "load_metadata", load_metadata):
            report = build.plan(request_from(ns), meta=_checkpoint(directory))
    except KvfitError as exc:
        return 2, "", exc.message
    return verdict_code(report), render_json(report.to_json()), err.getvalue()


def kvfit_layout(p: Point, engine: str = "vllm@0.33.0") -> tuple[int, dict | None, str]:
    """(exit code, the planner's JSON layout for the TP size or None, stderr) under
    `--engine ENGINE` (the record's version unless told)."""
    args = [ROOT / p.dir, "--engine", engine, "--hardware", p.hardware, "--gpus", str(p.tp),
            "--tp", str(p.tp), "--context", str(p.length), "--kv-dtype", p.kv,
            "--kv-cache-memory-bytes", str(p.avail), "--json"]
    code, out, err = _run(args, p.dir)
    if code not in (0, 1, 5):
        return code, None, err
    layout = next((x for x in json.loads(out)["layouts"] if x["tp"] == p.tp), {})
    return code, layout, err


def kvfit_plan(p: Point) -> tuple[int, dict | None, str]:
    """(exit code, kvfit's engine section for the TP layout or None, stderr)."""
    code, layout, err = kvfit_layout(p)
    return code, (layout or {}).get("engine"), err


def kvfit_token_bytes(p: Point) -> Fraction:
    """kvfit's engine cache layers on one rank (kvfit.engines.pages, the engine model's own
    pages): attention bytes per token (compressed entries per `ratio` tokens; a layer with its
    own engine block counts its padded page per block token, as vLLM's specs do)."""
    from kvfit.engines.pages import layer_pages, page_bytes
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    rules = rules_for("vllm", "0.33.0")
    spelling = "auto" if p.kv == "auto" else p.kv
    from kvfit.hardware.presets import find_accelerator
    cc = find_accelerator(p.hardware).compute_capability    # the GPU the record emulated
    state = engine_state(_checkpoint(p.dir), rules, spelling, p.length, capability=cc)
    total = Fraction(0)
    for page in layer_pages(state.components, p.tp):
        if page.block_tokens:     # a layer with its own engine block: its padded page
            total += Fraction(page.layers * page_bytes(page, page.block_tokens), page.block_tokens)
        elif page.family != "recurrent":
            total += page.layers * page.token_bytes / (page.ratio or 1)
    return total


def _close(a, b) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= TOLERANCE * max(abs(b), 1e-9)


def compare(p: Point) -> dict:
    """{check: (kvfit, vllm, ok)} for one point, plus "cause" when kvfit could not answer."""
    code, eng, err = kvfit_plan(p)
    v = p.vllm
    if eng is None:
        return {"answered": (f"exit {code}", "plan", False), "cause": err.strip()[:300]}
    refused_k = eng.get("refusal") is not None
    refused_v = "refused" in v
    out = {"refusal": (refused_k, refused_v, refused_k == refused_v)}
    if refused_v or refused_k:
        return out
    k_tok = kvfit_token_bytes(p)
    v_tok = vllm_token_bytes(p.row)
    out["token_bytes"] = (float(k_tok), float(v_tok), k_tok == v_tok)
    out["block_size"] = (eng["block_size"]["value"], v["block_size"],
                         eng["block_size"]["value"] == v["block_size"])
    out["num_blocks"] = (eng["num_gpu_blocks"]["value"], v["num_blocks"],
                         eng["num_gpu_blocks"]["value"] == v["num_blocks"])
    out["tokens"] = (eng["kv_cache_tokens"]["value"], v["kv_cache_tokens"],
                     _close(eng["kv_cache_tokens"]["value"], v["kv_cache_tokens"]))
    out["concurrency"] = (eng["max_concurrency"]["value"], round(v["max_concurrency"], 4),
                          _close(eng["max_concurrency"]["value"], v["max_concurrency"]))
    return out


def misses(result: dict) -> list[str]:
    return [f"{k}: kvfit {a} vs vLLM {b}" for k, val in result.items() if k not in ("cause", "note")
            for a, b, ok in [val] if not ok]


def tp_refusals() -> list[dict]:
    """Recorded rows where vLLM itself refuses the TP size (heads not divisible)."""
    return [r for r in record_rows() if "divisible by tensor parallel size" in r.get("error", "")]


def kvfit_refuses_tp(row: dict) -> bool:
    """True when kvfit also refuses this TP size for the config (exit 2 or no valid layout)."""
    from conftest import run_cli
    code, out, _ = run_cli(ROOT / row["dir"], "--engine", "vllm@0.33.0", "--hardware", "h100-80",
                           "--gpus", str(row["tp"]), "--tp", str(row["tp"]), "--context", "4096",
                           "--kv-cache-memory-bytes", str(40 << 30), "--json")
    if code == 2:
        return True
    return not any(x["tp"] == row["tp"] and x["valid"] for x in json.loads(out)["layouts"])
