"""`kvfit specs check [PATH...]` and `kvfit specs list`."""

from __future__ import annotations

import argparse
import json
import sys
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
    c.add_argument("--plan", action="store_true", help="also plan every case of "
                   "tests/architectures/<id>/cases.yaml and check its expected values")
    nw = sub.add_parser("new", help="a spec skeleton from a real config, the config pinned, "
                        "and a cases.yaml stub for the hand-derived numbers")
    nw.add_argument("model_type", help="the config's model_type (the new spec's id)")
    nw.add_argument("--from", dest="source", required=True, metavar="CONFIG",
                    help="a config.json or the folder holding it (with its SOURCE.txt / "
                    "SOURCES.yaml provenance when it has one)")
    nw.add_argument("--root", help="the checkout to write into (default: the one holding the "
                    "current directory)")
    nw.add_argument("--force", action="store_true", help="write over an existing spec")
    add_offline(nw, "the config is a local file; accepted so that every kvfit command takes it")
    pn = sub.add_parser("pin", help="copy a real config into tests/architectures/SPEC/configs/ "
                        "with its provenance (repo, commit, sha256)")
    pn.add_argument("spec", help="the spec id the config is a test case for")
    pn.add_argument("source", help="a local folder or config.json (offline), or a Hub repo id "
                    "org/name[@revision]")
    pn.add_argument("--name", help="the pinned folder's name (default: ORG--NAME of the repo)")
    pn.add_argument("--hf-repo", help="the Hub repo a local copy mirrors (org/name)")
    pn.add_argument("--source-repo", help="where a local copy came from (e.g. a GitHub "
                    "owner/name that vendors it)")
    pn.add_argument("--source-path", help="the folder in --source-repo holding the files")
    pn.add_argument("--source-commit", help="the full commit sha of --source-repo they were "
                    "read at")
    pn.add_argument("--root", help="the checkout to pin into (default: the one holding the "
                    "current directory)")
    df = sub.add_parser("diff", help="what a spec change moves: every pinned case and corpus "
                        "config planned under BASE's and HEAD's specs; exit 1 when a model "
                        "changed, 0 when none did")
    df.add_argument("base", help="a git ref, or a folder holding specs (a checkout, its specs/ "
                    "or an architectures/ folder)")
    df.add_argument("head", nargs="?", help="the same; default: the working tree")
    df.add_argument("--json", action="store_true", help="the comparison as JSON")
    add_offline(df, "both spec sets are local; accepted so that every kvfit command takes it")
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


def _lint(archs, paths: list[Path], plan: bool) -> tuple[list, list, list]:
    """(errors, warnings, notes) from each architecture spec's pinned configs and cases."""
    from ..paths import display_path
    from ..specs.checked import load_checked
    from ..specs.lint import check_against_pins, load_cases, stale_derivations, tests_folder
    from ..specs.registry import ARCH_SCHEMA

    errors, warnings, notes, planned = [], [], [], []
    by_id = {p.stem: p for p in paths}
    for arch in archs:
        path = by_id.get(arch.id)
        if path is None:
            continue
        doc, _, _ = load_checked(path, ARCH_SCHEMA, fresh=True)
        found = check_against_pins(arch, doc, path)
        errors += found.errors
        warnings += found.warnings
        notes += found.notes
        cases_path = tests_folder(path, arch.id) / "cases.yaml"
        if cases_path.is_file():
            shown = display_path(cases_path)
            errors += stale_derivations(cases_path, shown)
            planned.append((cases_path, shown, load_cases(cases_path.parent)))
    if plan and planned:
        from .specs_plan import check_cases
        errors += check_cases(planned)
    return errors, warnings, notes


def _render(problems, label: str) -> str:
    return "\n\n".join(p.render().replace("error[", f"{label}[", 1) for p in problems)


def check(args) -> int:
    paths = _expand(args.paths) if args.paths else spec_files() + [
        p for kind in DATA_KINDS for p in spec_files(kind)]
    data = [p for p in paths if p.parent.name in DATA_KINDS]
    problems = [pr for p in data for pr in _data_problems(p)]
    archs, warnings, notes = [], [], []
    arch_paths = [p for p in paths if p not in data]
    try:
        archs = load_paths(arch_paths)
    except SpecError as err:
        problems = err.problems + problems
    if not problems:
        problems, warnings, notes = _lint(archs, arch_paths, args.plan)
    if args.json:
        print(json.dumps({"ok": not problems, "problems": [p.to_json() for p in problems],
                          "warnings": [p.to_json() for p in warnings],
                          "notes": [p.to_json() for p in notes]}
                         | ({} if problems else {"specs": [a.id for a in archs] +
                                                 [p.stem for p in data]}), indent=2))
        return 2 if problems else 0
    for items, label in ((notes, "note"), (warnings, "warning")):
        if items:                                 # on stderr: stdout keeps the verdict
            print(_render(items, label) + "\n", file=sys.stderr)
    if problems:
        print(SpecError(problems).render())
        return 2
    from ..report.words import count
    extra = "".join(f", {count(len(x), w)}" for x, w in ((warnings, "warning"), (notes, "note"))
                    if x)
    print(f"ok: {count(len(archs), 'architecture spec')} and "
          f"{count(len(data), 'hardware/system/engine spec')} valid{extra}"
          + (" (every pinned case planned as expected)" if args.plan else ""))
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


def pin(args) -> int:
    from ..specs.pin import pin as do_pin

    dest = do_pin(args.spec, args.source, name=args.name,
                  root=Path(args.root) if args.root else None, hf_repo=args.hf_repo,
                  source_repo=args.source_repo, source_path=args.source_path,
                  source_commit=args.source_commit)
    print(f"pinned {args.source} -> {dest} (provenance in SOURCES.yaml)")
    return 0


def new(args) -> int:
    from ..specs.scaffold import new_spec

    spec, pinned, cases = new_spec(args.model_type, args.source,
                                   Path(args.root) if args.root else None, args.force)
    print(f"wrote {spec}\npinned {pinned}\nwrote {cases}\n"
          "next: derive the TODO numbers in cases.yaml by hand (arithmetic in comments), then "
          "`kvfit specs check --plan` and `kvfit specs diff main`")
    return 0


def diff(args) -> int:
    from ..specs.diff import diff as compare
    from ..specs.diff import render

    result = compare(args.base, args.head)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 1 if result["changed"] else 0


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return {"check": check, "list": listing, "pin": pin, "new": new, "diff": diff}[args.action](args)
