"""The layering written in pyproject.toml ([tool.importlinter]) holds, and kvfit's modules form
no import cycle, counting imports inside functions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def test_lint_imports_passes_the_contracts():
    exe = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(exe), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def _cycles(graph) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(
                        child)))))
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        top = stack.pop()
                        on.discard(top)
                        group.append(top)
                        if top == node:
                            break
                    if len(group) > 1:
                        out.append(sorted(group))
    return out


def test_no_import_cycles_counting_function_level_imports():
    graph = grimp.build_graph("kvfit", include_external_packages=False, cache_dir=None)
    cycles = _cycles(graph)
    lines = []
    for group in cycles:
        members = set(group)
        lines.append(" <-> ".join(group))
        for m in group:
            for t in sorted(graph.find_modules_directly_imported_by(m) & members):
                lines.append(f"    {m} -> {t}")
    assert cycles == [], "import cycles:\n" + "\n".join(lines)


def test_the_cycle_finder_finds_a_cycle():
    class Toy:
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.edges.get(m, set())

    assert _cycles(Toy()) == [["a", "b", "c"]]
