"""`kvfit specs check [PATH...]` and `kvfit specs list`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import SpecError, UsageError
from ..specs.registry import builtin_architectures, load_paths, spec_files
from .plan_args import Parser, add_offline


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="kvfit specs", description="Validate and list architecture specs.")
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    c = sub.add_parser("check", help="validate spec files (default: the built-in corpus); "
                       "every problem in every file is reported, exit 2 on any")
    c.add_argument("paths", nargs="*", help="spec files or directories")
    c.add_argument("--json", action="store_true", help="problems as JSON")
    add_offline(c, "specs are local files; accepted so that every kvfit command takes it")
    ls = sub.add_parser("list", help="supported architectures and their matchers")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--markdown", action="store_true", help="a Markdown table (the README's)")
    add_offline(ls, "specs are local files; accepted so that every kvfit command takes it")
    return p


def _expand(paths: list[str]) -> list[Path]:
    out = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(x for x in p.glob("*.yaml") if not x.name.startswith("_"))
        elif p.is_file():
            out.append(p)
        else:
            raise UsageError(f"no such spec file or directory: {raw}")
    return out


# Data specs validated by schema alone, by the folder they live in.
DATA_KINDS = {"hardware": "hardware.v1.schema.json", "systems": "system.v1.schema.json",
              "engines": "engine.v1.schema.json"}


def _data_problems(path: Path) -> list:
    """Schema problems of one hardware/system/engine spec, plus its id matching the stem."""
    from ..specs import cache
    from ..specs.checked import load_checked

    doc, problems, key = load_checked(path, DATA_KINDS[path.parent.name], allow_null=True)
    if doc is not None and not problems and doc.data.get("id", path.stem) != path.stem:
        doc, _, _ = load_checked(path, DATA_KINDS[path.parent.name], True, fresh=True)
        problems.append(doc.problem("KV301", ("id",), f"id '{doc.data['id']}' does not match "
                                    f"the file name '{path.name}'"))
    elif doc is not None and not problems and key is not None:
        cache.put(key, doc.data)
    return problems


def check(args) -> int:
    paths = _expand(args.paths) if args.paths else spec_files() + [
        p for kind in DATA_KINDS for p in spec_files(kind)]
    data = [p for p in paths if p.parent.name in DATA_KINDS]
    problems = [pr for p in data for pr in _data_problems(p)]
    archs = []
    try:
        archs = load_paths([p for p in paths if p not in data])
    except SpecError as err:
        problems = err.problems + problems
    if problems:
        if args.json:
            print(json.dumps({"ok": False, "problems": [p.to_json() for p in problems]},
                             indent=2))
        else:
            print(SpecError(problems).render())
        return 2
    if args.json:
        print(json.dumps({"ok": True, "specs": [a.id for a in archs] + [p.stem for p in data]},
                         indent=2))
    else:
        from ..report.words import count
        print(f"ok: {count(len(archs), 'architecture spec')} and "
              f"{count(len(data), 'hardware/system/engine spec')} valid")
    return 0


def listing(args) -> int:
    archs = builtin_architectures()
    rows = [{"id": a.id, "summary": a.summary, "model_type": list(a.model_types),
             "architectures": list(a.architectures), "spec": a.file} for a in archs]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif args.markdown:
        print("| spec | model_type | architectures | state |\n|---|---|---|---|")
        for r in rows:
            print(f"| {r['id']} | {', '.join(r['model_type'])} | "
                  f"{', '.join(r['architectures'])} | {r['summary']} |")
    else:
        for r in rows:
            print(f"{r['id']:<16} model_type: {', '.join(r['model_type'])}")
            print(f"{'':<16} {r['summary']}")
    return 0


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return check(args) if args.action == "check" else listing(args)
