"""Developer tool: regenerate the README's support table from the specs and their tests.

    uv run python tests/tools/support_table.py          # rewrite README.md in place
    uv run python tests/tools/support_table.py --check  # exit 1 if README.md is stale

One row per architecture spec: the matchers, what state it counts, and its evidence —
pinned real configs, hand-derived cases, and whether an engine start-up log checks it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- support-table:start -->", "<!-- support-table:end -->"


def _evidence(spec_id: str) -> tuple[int, int, int, int]:
    folder = ROOT / "tests" / "architectures" / spec_id
    configs = list(folder.glob("configs/*"))
    real = sum(1 for c in configs if not c.name.startswith("synthetic--"))
    synthetic = len(configs) - real
    cases = YAML(typ="safe").load((folder / "cases.yaml").read_text()) if (
        folder / "cases.yaml").is_file() else {}
    derived = sum(1 for c in (cases or {}).values() if "expect" in c)
    refused = sum(1 for c in (cases or {}).values() if "error" in c)
    return real, synthetic, derived, refused


def _vllm_parsed() -> dict[str, int]:
    """Pinned configs per spec that vLLM 0.33 parsed in the recorded cross-check."""
    import json
    path = ROOT / "tests" / "engine_probe" / "vllm-0.33.0.jsonl"
    counts: dict[str, int] = {}
    for line in path.read_text().splitlines()[1:]:
        row = json.loads(line)
        if "error" not in row:
            spec = row["dir"].split("/")[2]
            counts[spec] = counts.get(spec, 0) + 1
    return counts


def table() -> str:
    from kvfit.specs.registry import builtin_architectures

    rows = ["| spec | model_type | state counted | pinned configs | hand-derived cases | "
            "rejection cases | vLLM 0.33 cross-check | weights from config |",
            "|---|---|---|---|---|---|---|---|"]
    parsed = _vllm_parsed()
    for a in sorted(builtin_architectures(), key=lambda a: a.id):
        real, synthetic, derived, refused = _evidence(a.id)
        pinned = f"{real}" + (f" (+{synthetic} synthetic)" if synthetic else "")
        vllm = f"{parsed[a.id]} config(s)" if a.id in parsed else "-"
        shapes = f"{len(a.parameters.tensors)} tensor rows" if a.parameters else "-"
        rows.append(f"| `{a.id}` | {', '.join(a.model_types)} | {a.summary} | {pinned} | "
                    f"{derived} | {refused} | {vllm} | {shapes} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    readme = (ROOT / "README.md").read_text()
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    fresh = f"{head}{START}\n{table()}\n{END}{tail}"
    if args.check:
        return 0 if fresh == readme else 1
    (ROOT / "README.md").write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
