"""`kvfit hardware detect [--json]`: the local GPUs NVML or nvidia-smi reports, and their preset."""

from __future__ import annotations

import json
import sys

from .plan_args import Parser, add_offline


def parser() -> Parser:
    p = Parser(prog="kvfit hardware", description="Local accelerators. `detect` reads NVML "
               "(with the optional nvidia-ml-py package) or nvidia-smi (name, total and free "
               "memory per GPU) and maps the GPUs to the hardware preset `--hardware auto` "
               "would plan on.")
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    d = sub.add_parser("detect", help="read the local GPUs and name their preset",
                       description="Read the local GPUs with NVML (nvidia-ml-py, when "
                       "installed) or nvidia-smi (name, total and free MiB) and name the preset "
                       "--hardware auto plans on; exit 2 when neither can see a GPU.")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    add_offline(d, "detection reads the local driver only; accepted so that every kvfit "
                "command takes it")
    return p


def run(argv: list[str]) -> int:
    from ..hardware.detect import describe, detect

    ns = parser().parse_args(argv)
    d = detect()
    d["summary"] = describe(d, d["count"], "", "--hardware auto plans on")
    if ns.json:
        sys.stdout.write(json.dumps(d, indent=2, sort_keys=True) + "\n")
        return 0
    lines = [d["summary"]]
    for g in d["gpus"]:
        total = f"{g['total_mib']:,} MiB" if g["total_mib"] is not None else "n/a"
        free = f"{g['free_mib']:,} MiB" if g["free_mib"] is not None else "n/a"
        lines.append(f"  GPU {g['index']}: {g['name']}  total {total}  free {free}  -> "
                     f"{g['preset']}")
    lines += d["notes"]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
