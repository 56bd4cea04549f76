"""`kvfit specs diff BASE [HEAD]`: what a spec change moves, on one screen.

Each side is a git ref of the checkout or a folder holding specs (a checkout, its specs/
folder, or an architectures/ folder); HEAD defaults to the working tree. The models - every
case of tests/architectures/*/cases.yaml and every corpus config of
tests/fixtures/model-configs, from HEAD's tree - are planned under both spec sets by the
kvfit CLI (`kvfit ... --json`, one worker process per side: kvfit.cli.specs_plan). When
only architecture specs changed, only the models those specs match (on either side) are
planned. For every changed model the recorded engine views (tests/engine_probe: vLLM's
num_blocks and block size, SGLang's per-token cell bytes, each made by the engine's own
code) are checked on both sides.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from ..errors import UsageError
from ..paths import data_root, expand_user

CORPUS = "tests/fixtures/model-configs"
CORPUS_CONTEXT = "8192"
TOKEN_KINDS = ("full", "latent", "index", "sliding", "chunked", "draft", "compressed")


# ---------------------------------------------------------------- sides -----------------

def _git(repo: Path, *args: str, binary: bool = False):
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                          text=not binary, check=False)
    if done.returncode != 0:
        err = done.stderr if not binary else done.stderr.decode(errors="replace")
        raise UsageError(f"git {' '.join(args)}: {' '.join(err.split())[:300]}")
    return done.stdout


def _spec_folder(path: Path) -> Path | None:
    """The folder holding specs/ (and perhaps schemas/) for a checkout, specs/ or
    architectures/ folder; None when `path` holds none of them."""
    for root in (path, path.parent, path.parent.parent):
        if (root / "specs" / "architectures").is_dir():
            return root
    return None


def materialize(side: Path | None, work: Path, name: str) -> Path:
    """A data root (specs/ and schemas/) for one side: the side's own folders, and kvfit's
    bundled ones for any folder the side does not have."""
    root = work / name
    (root / "specs").mkdir(parents=True)
    own = data_root()
    for entry in sorted((own / "specs").iterdir()):
        if entry.is_dir():
            mine = side / "specs" / entry.name if side else None
            (root / "specs" / entry.name).symlink_to(mine if mine and mine.is_dir() else entry)
    schemas = side / "schemas" if side else None
    (root / "schemas").symlink_to(schemas if schemas and schemas.is_dir() else own / "schemas")
    return root


def _extract(repo: Path, ref: str, work: Path, name: str, paths: tuple[str, ...]) -> Path:
    sha = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    present = [p for p in paths if _git(repo, "ls-tree", "--name-only", sha, p).strip()]
    if "specs" not in present:
        raise UsageError(f"{ref} ({sha[:12]}) has no specs/ folder.")
    data = _git(repo, "archive", "--format=tar", sha, *present, binary=True)
    dest = work / f"{name}-tree"
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, **safe)
    return dest


def resolve_side(arg: str | None, repo: Path, work: Path, name: str, with_tests: bool
                 ) -> tuple[Path, Path, str]:
    """(data root, tree holding tests/, label) of one side."""
    if arg is None:
        return materialize(repo, work, name), repo, "working tree"
    path = expand_user(arg)
    if path.exists():
        folder = _spec_folder(path.resolve())
        if folder is None:
            raise UsageError(f"{arg}: no specs/architectures folder there (give a checkout, "
                             "its specs/ folder, or a git ref).")
        return materialize(folder, work, name), folder if (folder / "tests").is_dir() \
            else repo, str(arg)
    paths = ("specs", "schemas") + (("tests/architectures", CORPUS, "tests/engine_probe")
                                    if with_tests else ())
    tree = _extract(repo, arg, work, name, paths)
    sha = _git(repo, "rev-parse", "--short=12", f"{arg}^{{commit}}").strip()
    return materialize(tree, work, name), tree if with_tests else repo, f"{arg} ({sha})"


def _files(root: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under a data root's specs/ and schemas/."""
    out = {}
    folders = [(f"specs/{d.name}", d.resolve()) for d in (root / "specs").iterdir()]
    for name, folder in folders + [("schemas", (root / "schemas").resolve())]:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                rel = f"{name}/{p.relative_to(folder).as_posix()}"
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# ---------------------------------------------------------------- models ----------------

def _yaml(path: Path):
    from ruamel.yaml import YAML
    return YAML(typ="safe").load(path.read_text())


def _matchers(root: Path) -> tuple[dict, dict, dict]:
    """(model_type -> id, architecture class -> id, id -> extends) of a side's specs."""
    by_type, by_class, extends = {}, {}, {}
    for p in sorted((root / "specs" / "architectures").glob("*.yaml")):
        if p.name.startswith("_"):
            continue
        try:
            d = _yaml(p)
            m = d["match"]
        except Exception:                                # a broken spec: its plans say why
            continue
        for t in m.get("model_type", ()):
            by_type[t] = d.get("id", p.stem)
        for c in m.get("architectures", ()):
            by_class[c] = d.get("id", p.stem)
        if d.get("extends"):
            extends[d.get("id", p.stem)] = d["extends"]
    return by_type, by_class, extends


def _spec_of(model: Path, matchers) -> str | None:
    by_type, by_class, _ = matchers
    cfg = model / "config.json" if model.is_dir() else model
    try:
        config = json.loads(cfg.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    if config.get("model_type"):
        return by_type.get(config["model_type"])
    return next((by_class[c] for c in config.get("architectures") or () if c in by_class), None)


def changed_specs(before: dict[str, str], after: dict[str, str], sides) -> set[str] | None:
    """Spec ids whose file differs (or that extend one that does); None when anything but
    architecture specs differs (then every model is planned)."""
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    ids = set()
    for path in changed:
        parts = path.split("/")
        if parts[:2] != ["specs", "architectures"] or parts[-1].startswith("_"):
            return None
        ids.add(Path(path).stem)
    for m in sides:
        ids |= {i for i, base in m[2].items() if base in ids}
    return ids


def models(tree: Path) -> list[dict]:
    """Every case and corpus config, as {id, model (path), argv, label}."""
    from .specs_lint import case_argv as argv

    out = []
    for cases_file in sorted((tree / "tests" / "architectures").glob("*/cases.yaml")):
        try:
            cases = _yaml(cases_file) or {}
        except Exception:
            continue
        for name, case in cases.items():
            if isinstance(case, dict) and "model" in case and "error" not in case:
                folder = cases_file.parent
                out.append({"id": f"{folder.name}/{name}", "model": str(folder / case["model"]),
                            "argv": argv(folder, case), "label": case["model"].split("/")[-1]})
    corpus = tree / CORPUS
    for d in sorted(corpus.glob("*/config.json")) if corpus.is_dir() else ():
        out.append({"id": f"corpus/{d.parent.name}", "model": str(d.parent),
                    "argv": [str(d.parent), "--context", CORPUS_CONTEXT,
                             "--allow-context-overflow"], "label": d.parent.name})
    return out


# ---------------------------------------------------------------- planning --------------

def run_worker(root: Path, jobs: list[dict]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "kvfit.cli.specs_plan", "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps([{k: j[k] for k in ("id", "argv", "kind", "tp") if k in j}
                                 for j in jobs]))
    proc.stdin.close()
    return proc


def collect(proc: subprocess.Popen) -> dict:
    out = proc.stdout.read()
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise UsageError(f"the planning worker failed: {' '.join(err.split())[-400:]}")
    return json.loads(out)


def plan_both(base_root: Path, head_root: Path, jobs: list[dict]) -> tuple[dict, dict]:
    if not jobs:
        return {}, {}
    a, b = run_worker(base_root, jobs), run_worker(head_root, jobs)
    return collect(a), collect(b)


# ---------------------------------------------------------------- comparing -------------

def _pct(a, b) -> str:
    if not a:
        return "new"
    return f"{100 * (b - a) / a:+.2f} %"


def _num(x) -> str:
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)


def model_changes(a: dict, b: dict) -> list[str]:
    """What moved between two plan summaries (empty: nothing did): the state's bytes first,
    then each layout whose verdict or sequence count changed."""
    if a == b:
        return []
    if "error" in a or "error" in b:
        return [f"answer: {a.get('error') or 'planned'} -> {b.get('error') or 'planned'}"]
    state, layouts = [], []
    ca = {c["name"]: c for c in a["components"]}
    cb = {c["name"]: c for c in b["components"]}
    for name in list(ca) + [n for n in cb if n not in ca]:
        x, y = ca.get(name), cb.get(name)
        if x is None or y is None:
            state.append(f"{name} {'added' if x is None else 'removed'}")
            continue
        unit = "B/token/layer" if x["kind"] in TOKEN_KINDS else "B/sequence/layer"
        if x["bytes_per_entry"] != y["bytes_per_entry"]:
            state.append(f"{name} {_num(x['bytes_per_entry'])} -> {_num(y['bytes_per_entry'])} "
                         f"{unit} ({_pct(x['bytes_per_entry'], y['bytes_per_entry'])})")
        if x["layers"] != y["layers"]:
            state.append(f"{name} {x['layers']} -> {y['layers']} layers")
    if a["per_sequence"] != b["per_sequence"]:
        state.append(f"per sequence {_num(a['per_sequence'])} -> {_num(b['per_sequence'])} B "
                     f"({_pct(a['per_sequence'], b['per_sequence'])})")
    la = {x["id"]: x for x in a["layouts"]}
    for y in b["layouts"]:
        x = la.get(y["id"])
        if x is None:
            layouts.append(f"{y['id']} new")
            continue
        if x["fits"] != y["fits"]:
            layouts.append(f"{y['id']} fits {x['fits']} -> {y['fits']}")
        if x["max_sequences"] != y["max_sequences"]:
            layouts.append(f"{y['id']} max sequences {_num(x['max_sequences'])} -> "
                           f"{_num(y['max_sequences'])}")
    lines = ["; ".join(state)] if state else []
    if layouts:
        lines.append("layouts: " + ", ".join(layouts))
    return lines or ["report changed (no byte, verdict or sequence count moved)"]


def diff(base: str, head: str | None = None, repo: Path | None = None) -> dict:
    """The comparison, as JSON-ready data."""
    from .specs_pin import project_root

    repo = repo or project_root()
    with tempfile.TemporaryDirectory(prefix="kvfit-specs-diff-") as tmp:
        work = Path(tmp)
        base_root, _, base_label = resolve_side(base, repo, work, "base", False)
        head_root, tree, head_label = resolve_side(head, repo, work, "head", True)
        before, after = _files(base_root), _files(head_root)
        out = {"base": base_label, "head": head_label, "changed": False,
               "changed_files": sorted(k for k in before.keys() | after.keys()
                                       if before.get(k) != after.get(k)),
               "changed_specs": [], "planned": 0, "models": [], "engine_views": []}
        if before == after:
            return out
        sides = (_matchers(base_root), _matchers(head_root))
        ids = changed_specs(before, after, sides)
        jobs = models(tree)
        if ids is not None:
            jobs = [j for j in jobs if {_spec_of(Path(j["model"]), m) for m in sides} & ids]
        out["changed_specs"] = sorted(ids) if ids is not None else "all"
        a, b = plan_both(base_root, head_root, jobs)
        out["planned"] = len(jobs)
        moved_dirs = set()
        for j in jobs:
            lines = model_changes(a[j["id"]], b[j["id"]])
            if lines:
                out["models"].append({"id": j["id"], "model": j["label"],
                                      "before": a[j["id"]], "after": b[j["id"]],
                                      "changes": lines})
                moved_dirs.add(Path(j["model"]).resolve().relative_to(tree.resolve()).as_posix()
                               if Path(j["model"]).resolve().is_relative_to(tree.resolve())
                               else j["model"])
        from .specs_diff_views import agrees, engine_jobs

        ejobs = engine_jobs(tree, moved_dirs)
        ea, eb = plan_both(base_root, head_root, ejobs)
        for j in ejobs:
            ok_a, why_a = agrees(j, ea[j["id"]])
            ok_b, why_b = agrees(j, eb[j["id"]])
            out["engine_views"].append({"id": j["id"], "engine": j["engine"], "agreed": ok_a,
                                        "agrees": ok_b, "before": why_a, "after": why_b})
        out["changed"] = bool(out["models"])
        return out


def render(d: dict) -> str:
    head = f"kvfit specs diff: {d['base']} -> {d['head']}"
    if not d["changed_files"]:
        return f"{head}\nno change (the spec sets are identical)"
    specs = d["changed_specs"]
    specs = specs if isinstance(specs, str) else ", ".join(specs) or "-"
    lines = [head, f"spec files changed: {len(d['changed_files'])}; specs: {specs}; "
             f"models planned on both sides: {d['planned']}"]
    if not d["models"]:
        return "\n".join(lines + ["no change (no planned model moved)"])
    lines.append(f"{len(d['models'])} model(s) changed:")
    for m in d["models"]:
        lines.append(f"  {m['id']}: {m['changes'][0]}")
        lines += [f"      {x}" for x in m["changes"][1:]]
    views = d["engine_views"]
    if views:
        lines.append("recorded engine views of the changed models:")
        from .specs_diff_views import RECORDS, record_engine

        for record, name, _ in RECORDS:
            engine = record_engine(record)[0]
            rows = [v for v in views if v["engine"] == engine]
            if not rows:
                continue
            before = sum(v["agreed"] for v in rows)
            now = sum(v["agrees"] for v in rows)
            lines.append(f"  {name}: {len(rows)} recorded points; agreed before {before}, "
                         f"agree now {now}")
            flipped = [v for v in rows if v["agreed"] != v["agrees"]]
            for v in flipped[:8]:
                state = "disagrees now" if v["agreed"] else "agrees now"
                lines.append(f"      {v['id']}: {state} ({v['after']})")
            if len(flipped) > 8:
                lines.append(f"      ... and {len(flipped) - 8} more")
    return "\n".join(lines)
