"""What the vLLM and SGLang KV records share (standard library only: the recorders run under
any python3, the probes under the engine's own interpreter).

record side: pinned_dirs() lists the configs a record covers; run_probe() runs one probe
interpreter over some dirs and returns its JSON lines, with an error row for each dir it gave
no row for (a crash, a timeout). probe side: probe_main() is the probe scripts' command line
(DIR ... [--tp 1,2,8] [--kv ...]), one JSON line per (dir, TP, KV dtype)."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def pinned_dirs() -> list[str]:
    """Every pinned config dir under tests/architectures/*/configs (synthetic ones excluded)."""
    return sorted(str(p.parent.relative_to(ROOT)) for p in
                  (ROOT / "tests" / "architectures").glob("*/configs/*/config.json")
                  if not p.parent.name.startswith("synthetic"))


def run_probe(python: str, script: str, dirs: list[str], timeout: int,
              options: tuple = ()) -> list[str]:
    """The probe's JSON lines for `dirs` (probe `options` such as --kv after them), plus an
    error row for each dir without one."""
    try:
        proc = subprocess.run([python, str(HERE / script), *dirs, *options], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout, check=False)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        done = {json.loads(x)["dir"] for x in lines}
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        why = f"probe exited {proc.returncode}: {tail[0][:300]}"
    except subprocess.TimeoutExpired:
        lines, done, why = [], set(), f"probe timed out after {timeout} s"
    return lines + [json.dumps({"dir": d, "error": why}) for d in dirs if d not in done]


def probe_main(description: str, probe, default_kv: str, out) -> None:
    """Parse DIR ... [--tp] [--kv] and print probe(dir, tp, kv) as one JSON line each."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--tp", default="1,2,8")
    ap.add_argument("--kv", default=default_kv)
    a = ap.parse_args()
    for path in a.dirs:
        for tp in (int(t) for t in a.tp.split(",")):
            for kv in a.kv.split(","):
                print(json.dumps(probe(path, tp, kv)), file=out, flush=True)
