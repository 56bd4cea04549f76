"""`kvfit catalog list|show`: what kvfit's offline catalog holds and where each file came from."""

from __future__ import annotations

import json
import sys
import textwrap

from ..api.catalog import describe
from ..errors import UsageError
from .plan_args import Formatter, Parser, add_offline

GIB = 1024**3


def parser() -> Parser:
    p = Parser(prog="kvfit catalog", formatter_class=Formatter,
               description=textwrap.fill("kvfit's offline catalog: the pinned metadata (config.json, "
               "quantization config, safetensors index) that answers --offline plans and "
               "`kvfit fit`. Nothing in it is invented: a weight size is known only from a "
               "real index's total_size or a pinned tensor split, otherwise it is the plan's "
               "labelled config estimate or unknown; a config pinned from a GitHub mirror has "
               "no Hub revision.", 79),
               epilog="examples:\n  kvfit catalog list --family qwen3\n"
               "  kvfit catalog show Qwen/Qwen3-32B\n  kvfit catalog show nvidia/MiniMax-M3-NVFP4 "
               "--json")
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    ls = sub.add_parser("list", help="every catalogued checkpoint, one line each",
                        description="Every catalogued checkpoint: repo id, model_type, "
                        "declared quantization, weights and their basis (index bytes, "
                        "tensor split, config estimate, unknown) and the Hub revision; then the checkpoints "
                        "known to be missing and why.")
    ls.add_argument("--family", action="append", metavar="F", help="only this organisation or "
                    "model_type (e.g. Qwen, nvidia, qwen3, deepseek_v3; repeatable)")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    add_offline(ls, "the catalog is read offline anyway; accepted so that every kvfit command "
                "takes it")
    sh = sub.add_parser("show", help="one entry: its files and where each was pinned from",
                        description="One catalog entry: architecture, quantization, weights "
                        "and their basis, quantized siblings, and every stored file with its "
                        "size, sha256, fidelity and source (host/repo/path@commit). An unknown "
                        "id exits 2 and names the nearest catalog ids.")
    sh.add_argument("id", help="repo id, org/name (any letter case; former ids accepted)")
    sh.add_argument("--json", action="store_true", help="machine-readable output")
    add_offline(sh, "the catalog is read offline anyway; accepted so that every kvfit command "
                "takes it")
    return p


def _gib(w: dict) -> str:
    return "-" if w["bytes"] is None else f"{w['bytes'] / GIB:,.1f} GiB"


def _list(ns) -> int:
    from ..hub.catalog import catalog_repo_ids
    from ..hub.catalog_info import family_keys, missing_ids

    ids = catalog_repo_ids()
    if ns.family:
        wanted = {f.casefold() for f in ns.family}
        ids = [r for r in ids if family_keys(r) & wanted]
        if not ids:
            raise UsageError(f"--family {', '.join(ns.family)}: no catalog checkpoint has that "
                             "organisation or model_type.", hint="See `kvfit catalog list`.")
    rows = [describe(r) for r in ids]
    missing = missing_ids()
    if ns.json:
        sys.stdout.write(json.dumps({"catalog_version": 1, "entries": rows,
                                     "missing": missing}, indent=2) + "\n")
        return 0
    width = max(len(r["repo_id"]) for r in rows)
    out = [f"{len(rows)} catalog checkpoints (offline; `kvfit catalog show ID` for sources):",
           f"  {'repo id':<{width}}  {'model_type':<18}  {'weights':>11}  {'basis':<13}  "
           "quantization; revision"]
    for r in rows:
        kind = r["model_type"] + (f"/{r['text_model_type']}" if r["text_model_type"] else "")
        out.append(f"  {r['repo_id']:<{width}}  {kind[:18]:<18}  {_gib(r['weights']):>11}  "
                   f"{r['weights']['basis']:<13}  {r['quantization']}; {r['revision']}")
    if missing and not ns.family:
        out += ["", "Named in kvfit's examples or by users but not in the catalog (no real pinned "
                "source):"]
        out += [f"  {m['id']}: {m['reason']}" for m in missing]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _show(ns) -> int:
    from ..hub.catalog import load_entry
    from ..hub.catalog_info import known_missing, nearest_ids

    if load_entry(ns.id) is None:
        gone = known_missing(ns.id)
        why = f" It is known to be missing: {gone['reason']}." if gone else ""
        close = nearest_ids(ns.id)
        raise UsageError(f"{ns.id} is not in kvfit's offline catalog.{why}",
                         hint=(f"Did you mean {' or '.join(close)}? " if close else "")
                         + "See `kvfit catalog list`.")
    r = describe(ns.id)
    if ns.json:
        sys.stdout.write(json.dumps(r, indent=2) + "\n")
        return 0
    w = r["weights"]
    out = [f"{r['repo_id']}" + (f" (formerly {', '.join(r['aliases'])})" if r["aliases"] else ""),
           f"  architecture: {r['architecture']} (model_type {r['model_type']}"
           + (f", text {r['text_model_type']})" if r["text_model_type"] else ")"),
           f"  quantization: {r['quantization']}",
           f"  weights: {_gib(w)} ({w['basis']}: {w['detail']})",
           f"  revision: {r['revision']}",
           f"  quantized siblings: {', '.join(r['siblings']) or 'none in the catalog'}",
           "  files:"]
    for f in r["files"]:
        out.append(f"    {f['file']}  {f['bytes']:,} bytes  sha256 {f['sha256'][:16]}...  "
                   f"{f['fidelity']}")
        out.append(f"      pinned from {f['source']}")
    out += [f"  note: {n}" for n in r["notes"]]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def run(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    return _list(ns) if ns.action == "list" else _show(ns)
