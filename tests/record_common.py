"""What the vLLM and the SGLang record comparisons share (tests/engine_record_cases.py and
tests/sglang_record_cases.py, their CI tests and their benches): the known-miss lookup, the
judgement of one recorded row, and the bench's tally of checks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path


def read_record(path: Path) -> tuple[dict, ...]:
    """A record's rows after its header line, one per (dir, TP, KV dtype): records are
    append-only, so a row recorded again later (a config the probe could not build before)
    supersedes the earlier one."""
    rows: dict = {}
    for line in path.read_text().splitlines()[1:]:
        if line.startswith("{"):
            r = json.loads(line)
            key = (r["dir"], r.get("tp"), r.get("kv_cache_dtype"))
            rows.pop(key, None)
            rows[key] = r
    return tuple(rows.values())


def known_cause(known: dict[str, str], row: dict) -> str | None:
    """The listed cause of a recorded row's miss: keyed NAME/KV/tpN, NAME/KV or NAME."""
    name, kv, tp = Path(row["dir"]).name, row["kv_cache_dtype"], row["tp"]
    return known.get(f"{name}/{kv}/tp{tp}") or known.get(f"{name}/{kv}") or known.get(name)


def judge_row(cases, row: dict) -> None:
    """The CI check of one recorded row: every planned point matches, or the row is a listed
    known miss (a strict xfail: one that matches now fails, so KNOWN stays honest)."""
    import pytest

    known = cases.known_cause(row)
    pts = [p for p in cases.points() if (p.dir, p.tp, p.kv) == (row["dir"], row["tp"],
                                                                 row["kv_cache_dtype"])]
    assert pts, "a built row has planned points"
    bad = {p.id: cases.misses(cases.compare(p)) for p in pts}
    bad = {k: v for k, v in bad.items() if v}
    if known:
        if not bad:
            pytest.fail(f"listed as a known miss ({known}) but matches now: drop it from KNOWN")
        pytest.xfail(known)
    assert not bad, bad


class Tally:
    """Checks seen and matched over a bench's points, and the points where every check held."""

    def __init__(self):
        self.ok, self.seen, self.whole, self.points = Counter(), Counter(), 0, 0

    def add(self, checks: dict, bad: list) -> None:
        """checks: {name: (kvfit, engine, matched)}; bad: the point's misses."""
        for check, (_, _, good) in checks.items():
            self.seen[check] += 1
            self.ok[check] += good
        self.points += 1
        self.whole += not bad

    def headline(self) -> str:
        return (f"\n{self.points} points; all checks match on {self.whole} "
                f"({100 * self.whole / max(self.points, 1):.1f} %)")

    def lines(self, width: int) -> list[str]:
        return [f"  {c:<{width}} {self.ok[c]:>5} / {self.seen[c]:<5} "
                f"{100 * self.ok[c] / self.seen[c]:.1f} %" for c in self.seen]


def not_built_lines(rows: list[dict], only: str | None) -> list[str]:
    """One line per recorded row the engine's own code could not build here."""
    return [f"NOT BUILT {Path(r['dir']).name} tp{r.get('tp')} {r.get('kv_cache_dtype')}: "
            f"{r['error'][:160]}" for r in rows if not only or only in r["dir"]]
