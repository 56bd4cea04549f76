"""kvfit's `--engine sglang` prediction against SGLang 0.5.23's own recorded KV-pool sizing.

Shared by tests/test_sglang_kv_record.py and bench/sglang_record_diff.py. The record
(tests/engine_probe/sglang-0.5.23-kv.jsonl) was made by SGLang's own code
(tests/engine_probe/record_sglang_kv.py); nothing in it comes from kvfit.

A point is one (config dir, TP, --kv-cache-dtype, context length, KV budget). kvfit answers it
with the engine model every `--engine sglang` plan uses (kvfit.engines.predict_inputs on the
components kvfit.engines.state.engine_state evaluates in SGLang's KV dtype), on an H100 80GB
(the record emulates 8 x H100 80GB), given the same stated inputs the record states: free
memory before loading (the header's free_before_gib) and weights such that the budget
SGLang's _profile_available_bytes computes, free after loading - free before x (1 -
mem_fraction_static), is the record's available_bytes.

Compared:
  mem_fraction: kvfit's own default mem_fraction_static against SGLang's resolved one
    (within 0.002: SGLang rounds it to 3 decimals);
  with SGLang's mem_fraction_static stated (so both budgets are the same bytes): per-token
    cell bytes of the full pool and of the SWA pool where the record states them (DeepSeek-V4's
    DSV4PoolConfigurator has no single cell, its rows say null), Mamba state bytes per request (exact),
    max_total_num_tokens and the SWA pool's tokens (within 0.5 %), the Mamba pool size and
    max_running_requests
    (exact), and whether SGLang refuses to start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

import record_common

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "engine_probe" / "sglang-0.5.23-kv.jsonl"
VERSION = "0.5.23"
TOLERANCE = 0.005
MIB, GIB = 1 << 20, 1 << 30
# Known causes of a miss: listed by the bench and xfailed by the test. Keys: a config dir
# name, or "name/kv" for one --kv-cache-dtype, or "name/kv/tpN".
KNOWN: dict[str, str] = {}


def known_cause(row: dict) -> str | None:
    return record_common.known_cause(KNOWN, row)


@dataclass
class Point:
    dir: str
    tp: int
    kv: str
    context: int
    avail: int
    sglang: dict
    row: dict = field(repr=False, default_factory=dict)

    @property
    def id(self) -> str:
        return f"{Path(self.dir).name}-tp{self.tp}-{self.kv}-{self.context}-{self.avail >> 30}g"


@cache
def header() -> dict:
    return json.loads(RECORD.read_text().splitlines()[0])


@cache
def record_rows() -> tuple[dict, ...]:
    return record_common.read_record(RECORD)


def built_rows() -> list[dict]:
    return [r for r in record_rows() if "error" not in r]


def not_built() -> list[dict]:
    """Recorded (dir, TP, dtype) rows where SGLang itself could not size the pools here."""
    return [r for r in record_rows() if "error" in r]


def points() -> list[Point]:
    """Every recorded point where SGLang sized its pools (or refused to)."""
    return [Point(row["dir"], row["tp"], row["kv_cache_dtype"], plan["context_len"],
                  plan["available_bytes"], plan, row)
            for row in built_rows() for plan in row["plans"] if "error" not in plan]


@lru_cache(maxsize=8)
def _checkpoint(directory: str):
    from kvfit.checkpoint.local import load_local
    return load_local(ROOT / directory)


@lru_cache(maxsize=64)
def _state(directory: str, kv: str, context: int):
    from kvfit.engines.spec import rules_for
    from kvfit.engines.state import engine_state
    from kvfit.hardware.presets import find_accelerator
    return engine_state(_checkpoint(directory), rules_for("sglang", VERSION), kv, context,
                        capability=find_accelerator("h100-80").compute_capability)


def _inputs(p_dir: str, tp: int, kv: str, context: int, weights: int):
    from kvfit.engines.common import Inputs
    from kvfit.engines.state import architectures
    from kvfit.hardware.presets import find_accelerator
    acc = find_accelerator("h100-80")
    state = _state(p_dir, kv, context)
    return Inputs(list(state.components), tp, context, weights, acc.memory("visible")[0],
                  weights_basis="stated: the record's budget", total_bytes=acc.cuda_total_mib * MIB,
                  total_basis="hardware spec h100-80: CUDA total", quant=state.quant,
                  vocab=state.vocab, max_context=state.max_context, device=acc.id,
                  capability=acc.compute_capability, kv_bytes=float(state.kv.bytes),
                  free_before_load_bytes=int(header()["free_before_gib"] * GIB),
                  architectures=architectures(_checkpoint(p_dir).config),
                  model_config=_checkpoint(p_dir).config, config=state.resolution.root)


def kvfit_engine(p: Point, mem_fraction: float | None) -> dict:
    """kvfit's SGLang section for the point (as JSON); SGLang's mem_fraction_static stated
    unless None."""
    from kvfit.engines import predict_inputs
    from kvfit.model.base import to_plain
    mfs = p.row["resolved"]["mem_fraction_static"]
    free = int(header()["free_before_gib"] * GIB)     # the bytes _inputs states
    weights = int(mfs * free) - p.avail                # so mfs x free - weights >= the budget
    flags = {"kv_cache_dtype": p.kv}
    if mem_fraction is not None:
        flags["mem_fraction_static"] = mem_fraction
    return to_plain(predict_inputs("sglang", VERSION, flags,
                                   _inputs(p.dir, p.tp, p.kv, p.context, weights)))


def _close(a, b) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= TOLERANCE * max(abs(b), 1e-9)


def _v(x):
    return x["value"] if isinstance(x, dict) else x


def compare(p: Point) -> dict:
    """{check: (kvfit, sglang, ok)} for one point."""
    from kvfit.errors import KvfitError
    s, row = p.sglang, p.row
    mfs = row["resolved"]["mem_fraction_static"]
    try:
        own = _v(kvfit_engine(p, None)["mem_fraction_static"])
        e = kvfit_engine(p, mfs)
    except KvfitError as exc:             # kvfit refuses the checkpoint: a miss, with why
        return {"answered": (f"{type(exc).__name__}: {exc.message}"[:200], "sized", False)}
    out = {"mem_fraction": (own, mfs, own is not None and abs(own - mfs) <= 0.002)}
    refused_k, refused_s = e.get("refusal") is not None, "refused" in s
    out["refusal"] = (refused_k, refused_s, refused_k == refused_s)
    if refused_k or refused_s:
        return out
    c = e["cells"]
    full = row.get("full_cell_bytes", row.get("cell_bytes"))
    if full is not None:      # DSV4PoolConfigurator has no single cell: the record states none
        out["cell_bytes"] = (_v(c["full_bytes_per_token"]), full, _v(c["full_bytes_per_token"]) == full)
    if "swa_cell_bytes" in row:
        out["swa_cell_bytes"] = (_v(c["swa_bytes_per_token"]), row["swa_cell_bytes"],
                                 _v(c["swa_bytes_per_token"]) == row["swa_cell_bytes"])
    if "mamba_cache_per_req" in row:
        k = _v(c["recurrent_bytes_per_slot"])
        out["mamba_bytes"] = (k, row["mamba_cache_per_req"], k == row["mamba_cache_per_req"])
        k = _v(e["mamba_cache_size"])
        out["mamba_slots"] = (k, s["max_mamba_cache_size"], k == s["max_mamba_cache_size"])
    if s.get("swa_max_total_num_tokens") is not None:
        k = _v(e["swa_tokens"])
        out["swa_tokens"] = (k, s["swa_max_total_num_tokens"], _close(k, s["swa_max_total_num_tokens"]))
    k = _v(e["max_total_num_tokens"])
    out["tokens"] = (k, s["max_total_num_tokens"], _close(k, s["max_total_num_tokens"]))
    k = _v(e["max_running_requests"])
    out["running"] = (k, s["max_running_requests"], k == s["max_running_requests"])
    return out


def misses(result: dict) -> list[str]:
    return [f"{k}: kvfit {a} vs SGLang {b}" for k, (a, b, ok) in result.items() if not ok]
