"""Plan an architecture spec's pinned cases through the CLI (`kvfit MODEL ... --json`), for
`kvfit specs check --plan` and `kvfit specs diff`."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from ..errors import Problem

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]+)\])?")


def argv(folder: Path, case: dict) -> list[str]:
    """The kvfit command line of one case (flags as tests/test_architectures.py spells them)."""
    out = [str(folder / case["model"])]
    for key, value in (case.get("args") or {}).items():
        flag = "--" + key.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


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
            raise KeyError(f"{len(hits)} entries with {key}={want}")
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


def check_cases(cases_path: Path, display: str, cases: dict) -> list[Problem]:
    """Plan each case; a problem at cases.yaml's line for every expectation that fails."""
    folder = cases_path.parent
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
        code, doc, err = run_json(argv(folder, case))
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
