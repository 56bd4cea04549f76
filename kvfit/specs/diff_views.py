"""The recorded engine views `kvfit specs diff` checks for the models a change moves: vLLM
0.33.0's KV-cache plans (num_blocks, block size, refusal) and SGLang 0.5.23's per-token cell
bytes, each recorded by the engine's own code in tests/engine_probe."""

from __future__ import annotations

import json
from pathlib import Path

# The engines' own records: (file, label, the view it records). A file is named
# <engine>-<version>-kv.jsonl, so the engine a job plans with is read from the file name; the
# view is "blocks" (num_blocks, block size, refusal) or "cells" (bytes per token).
RECORDS = (("tests/engine_probe/vllm-0.33.0-kv.jsonl", "vLLM 0.33.0", "blocks"),
           ("tests/engine_probe/sglang-0.5.23-kv.jsonl", "SGLang 0.5.23", "cells"))


def record_engine(name: str) -> tuple[str, str]:
    """(engine id, version) of a record file named <engine>-<version>-kv.jsonl."""
    engine, version = Path(name).name.split("-")[:2]
    return engine, version


def _num(x) -> str:
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)


def _records(tree: Path, name: str) -> list[dict]:
    path = tree / name
    if not path.is_file():
        return []
    rows: dict = {}
    for line in path.read_text().splitlines()[1:]:
        if line.startswith("{"):
            r = json.loads(line)
            rows[(r["dir"], r.get("tp"), r.get("kv_cache_dtype"))] = r
    return list(rows.values())


def engine_jobs(tree: Path, dirs: set[str]) -> list[dict]:
    """One job per recorded (dir, TP, KV dtype) row of a changed model: its first planned
    point, asked as the record's own tests ask it."""
    jobs = []
    for name, _, view in RECORDS:
        engine, version = record_engine(name)
        jobs += (_block_jobs if view == "blocks" else _cell_jobs)(
            tree, dirs, name, engine, f"{engine}@{version}")
    return jobs


def _block_jobs(tree: Path, dirs: set[str], name: str, engine: str, at: str) -> list[dict]:
    jobs = []
    for r in _records(tree, name):
        plans = [p for p in r.get("plans", []) if "error" not in p]
        if r["dir"] not in dirs or "error" in r or not plans:
            continue
        p = plans[0]
        jobs.append({"id": f"{engine}/{Path(r['dir']).name}/tp{r['tp']}/{r['kv_cache_dtype']}",
                     "kind": "blocks", "engine": engine, "tp": r["tp"], "record": {
                         "refused": "refused" in p, "num_blocks": p.get("num_blocks"),
                         "block_size": p.get("block_size")},
                     "argv": [str(tree / r["dir"]), "--engine", at, "--hardware",
                              "h100-80", "--gpus", str(r["tp"]), "--tp", str(r["tp"]),
                              "--context", str(p["max_model_len"]), "--kv-dtype",
                              r["kv_cache_dtype"], "--kv-cache-memory-bytes",
                              str(p["available_bytes"])]})
    return jobs


def _cell_jobs(tree: Path, dirs: set[str], name: str, engine: str, at: str) -> list[dict]:
    jobs = []
    for r in _records(tree, name):
        if (r["dir"] not in dirs or "error" in r or r.get("cell_bytes") is None
                or r.get("is_hybrid_swa")):
            continue
        jobs.append({"id": f"{engine}/{Path(r['dir']).name}/tp{r['tp']}/{r['kv_cache_dtype']}",
                     "kind": "cells", "engine": engine, "tp": r["tp"],
                     "record": {"cell_bytes": r["cell_bytes"]},
                     "argv": [str(tree / r["dir"]), "--engine", at, "--hardware",
                              "h100-80", "--gpus", str(r["tp"]), "--tp", str(r["tp"]),
                              "--context", "4096", "--kv-dtype", r["kv_cache_dtype"]]})
    return jobs


def agrees(job: dict, got: dict) -> tuple[bool, str]:
    """(agrees, why) of kvfit's engine view with the recorded one."""
    rec = job["record"]
    if "error" in got:
        return False, f"kvfit: {got['error'][:120]}"
    if job["kind"] == "blocks":
        if rec["refused"] or got.get("refused"):
            ok = bool(rec["refused"]) == bool(got.get("refused"))
            return ok, f"refusal kvfit {bool(got.get('refused'))} vs vLLM {rec['refused']}"
        ok = (got["num_blocks"], got["block_size"]) == (rec["num_blocks"], rec["block_size"])
        return ok, (f"num_blocks kvfit {_num(got['num_blocks'])} vs vLLM "
                    f"{_num(rec['num_blocks'])}")
    ok = got.get("cell_bytes") == rec["cell_bytes"]
    return ok, (f"cell bytes/token kvfit {_num(got.get('cell_bytes'))} vs SGLang "
                f"{_num(rec['cell_bytes'])}")
