"""Plan an architecture spec's pinned cases through the CLI (`kvfit MODEL ... --json`), for
`kvfit specs check --plan` and `kvfit specs diff`."""

from __future__ import annotations

import io
import json
import re
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from ..errors import Problem
from .specs_lint import case_argv as argv

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]+)\])?")


def run_json(args: list[str]) -> tuple[int, dict | None, str]:
    """(exit code, the JSON report or error, stderr) of `kvfit ARGS --json`, in process."""
    from .main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*args, "--json"])
    try:
        doc = json.loads(out.getvalue())
    except ValueError:
        doc = None
    return code, doc, err.getvalue()


def get(data, path: str):
    """Follow `layouts[tp=8].per_rank.state_bytes_per_sequence` (a case's expect key)."""
    node = data
    for part in path.split("."):
        m = _STEP.fullmatch(part)
        if not m:
            raise KeyError(f"bad path step {part!r}")
        node = node[m.group(1)]
        sel = m.group(2)
        if sel is None:
            continue
        if sel.isdigit():
            node = node[int(sel)]
            continue
        key, _, want = sel.partition("=")
        hits = [x for x in node if str(x.get(key)) == want]
        if len(hits) != 1:
            raise KeyError(f"{path}: {len(hits)} entries with {key}={want}")
        node = hits[0]
    return node


def _line_of(lines: list[str], case: str, key: str | None) -> tuple[int, str]:
    start = next((i for i, t in enumerate(lines) if t.rstrip() == f"{case}:"), 0)
    if key is not None:
        for i in range(start + 1, len(lines)):
            if re.match(r"^[a-z0-9_]+:", lines[i]):
                break
            if lines[i].strip().startswith(f"{key}:"):
                return i + 1, lines[i]
    return start + 1, lines[start] if lines else ""


def check_cases(items: list[tuple[Path, str, dict]]) -> list[Problem]:
    """Plan every case of each (cases.yaml, its display name, its cases) with the specs of the
    checkout holding it (a worker process, kvfit.cli.specs_diff.run_worker); a problem at
    cases.yaml's line for every expectation that fails."""
    import tempfile

    from .specs_diff import collect, materialize, run_worker

    problems: list[Problem] = []
    by_root: dict[Path, list] = {}
    for cases_path, display, cases in items:
        by_root.setdefault(cases_path.resolve().parents[3], []).append((cases_path, display,
                                                                        cases))
    for root, group in by_root.items():
        jobs = [{"id": f"{display}::{name}", "argv": argv(cases_path.parent, case),
                 "kind": "raw"}
                for cases_path, display, cases in group for name, case in cases.items()
                if isinstance(case, dict) and "model" in case]
        with tempfile.TemporaryDirectory(prefix="kvfit-specs-check-") as tmp:
            results = collect(run_worker(materialize(root, Path(tmp), "check"), jobs))
        for cases_path, display, cases in group:
            problems += _judge(cases_path, display, cases, results)
    return problems


def _judge(cases_path: Path, display: str, cases: dict, results: dict) -> list[Problem]:
    lines = cases_path.read_text().splitlines()
    problems = []

    def problem(case, key, message, help_=None):
        n, text = _line_of(lines, case, key)
        col = len(text) - len(text.lstrip()) + 1
        problems.append(Problem("KV136", display, n, col, message, help_, None, text,
                                len(key) if key else 1))

    for name, case in cases.items():
        if not isinstance(case, dict) or "model" not in case:
            continue
        r = results[f"{display}::{name}"]
        code, doc, err = r["code"], r["doc"], r["err"]
        if "error" in case:
            want = case["error"]
            if code != want.get("exit", 2) or want.get("contains", "") not in err:
                problem(name, None, f"case {name}: expected a refusal containing "
                        f"{want.get('contains')!r}; got exit {code}: {err.strip()[:200]}")
            continue
        if doc is None or "error" in doc:
            problem(name, None, f"case {name}: the plan failed (exit {code}): "
                    f"{' '.join(err.split())[:300]}")
            continue
        for key, expected in (case.get("expect") or {}).items():
            if expected == "TODO" or expected is None:
                problem(name, key, f"case {name}: {key} is not derived yet",
                        "derive it by hand from the pinned config and write the arithmetic "
                        "in a comment above it")
                continue
            try:
                got = get(doc, key)
            except (KeyError, IndexError, TypeError) as exc:
                problem(name, key, f"case {name}: the report has no {key} ({exc})")
                continue
            if got != expected:
                problem(name, key, f"case {name}: {key} expects {expected!r}, the plan gives "
                        f"{got!r}", "recheck the hand arithmetic, then the spec")
    return problems


def summary(job: dict, code: int, doc: dict | None, err: str) -> dict:
    """What `kvfit specs diff` compares of one plan: the state per component, per token and
    per sequence, each layout's verdict and sequence count; or an engine view of one TP."""
    if job.get("kind") == "raw":
        return {"code": code, "doc": doc, "err": err}
    if doc is None or "error" in doc:
        msg = (doc or {}).get("error", {}).get("message") if isinstance(doc, dict) else None
        return {"error": " ".join((msg or err or f"exit {code}").split())[:300]}
    kind = job.get("kind", "plan")
    if kind == "raw":
        return {"code": code, "doc": doc, "err": err}
    if kind != "plan":
        layout = next((x for x in doc.get("layouts", []) if x.get("tp") == job["tp"]), {})
        eng = layout.get("engine") or {}
        if kind == "blocks":
            blocks, size = (eng.get(k) or {} for k in ("num_gpu_blocks", "block_size"))
            return {"refused": eng.get("refusal") is not None,
                    "num_blocks": blocks.get("value"), "block_size": size.get("value")}
        cell = ((eng.get("cells") or {}).get("full_bytes_per_token") or {}).get("value")
        return {"cell_bytes": cell}
    comps = [{"name": c["name"], "kind": c["kind"], "bytes_per_entry": c["bytes_per_entry"],
              "layers": c["layers"], "bytes_per_sequence": c["bytes_per_sequence"]}
             for c in doc["state"]["components"]]
    token_kinds = ("full", "latent", "index", "sliding", "chunked", "draft", "compressed")
    return {"arch": doc["architecture"]["id"], "components": comps,
            "per_token": sum(c["bytes_per_entry"] * c["layers"] for c in comps
                             if c["kind"] in token_kinds),
            "per_sequence": doc["state"]["bytes_per_sequence"],
            "layouts": [{"id": x.get("id") or x.get("label"), "fits": x.get("fits"),
                         "max_sequences": x.get("max_sequences")}
                        for x in doc.get("layouts") or []]}


def worker(root: Path) -> None:
    """Plan the jobs on stdin (JSON [{id, argv, kind?, tp?}]) with the specs and schemas of
    `root`; print {id: summary} as JSON. A worker process serves one side of a spec diff."""
    from .. import paths

    # This process plans one side only: its data root is that side's (set before any
    # module reads it).
    paths.data_root = lambda: root
    jobs = json.load(sys.stdin)
    out = {}
    for job in jobs:
        try:
            code, doc, err = run_json(job["argv"])
        except Exception as exc:     # a kvfit bug on one model: say so, keep comparing the rest
            code, doc, err = 70, None, f"internal error: {type(exc).__name__}: {exc}"
        out[job["id"]] = summary(job, code, doc, err)
    print(json.dumps(out))


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(prog="python -m kvfit.cli.specs_plan")
    ap.add_argument("--root", required=True, type=Path)
    worker(ap.parse_args().root.resolve())
