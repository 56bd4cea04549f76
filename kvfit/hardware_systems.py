"""System presets (one 'node' each): load them and look one up by id or alias."""

from __future__ import annotations

from functools import cache

from .errors import UsageError
from .hardware import _did_you_mean, _load, _lookup
from .records import record


@record(frozen=True)
class System:
    """A complete system (one 'node'): accelerators and its scale-up domain."""

    id: str
    name: str
    aliases: tuple[str, ...]
    hardware: str
    accelerators: int
    domain_accelerators: int
    memory_domains: int
    fabric: str | None
    hosts: int = 1
    scale_out: str | None = None
    notes: tuple[str, ...] = ()


@cache
def systems() -> dict[str, System]:
    """Every bundled system, keyed by id and by alias."""
    out = {}
    for d in _load("systems", "system.v1.schema.json"):
        su = d["scale_up"]
        s = System(d["id"], d["name"], tuple(d.get("aliases", ())), d["hardware"],
                   d["accelerators"], su["domain_accelerators"], d.get("memory_domains", 1),
                   su.get("fabric"), d.get("hosts", 1), (d.get("scale_out") or {}).get("fabric"),
                   tuple(d.get("notes", ())))
        for key in (s.id, *s.aliases):
            out[key] = s
    return out


def find_system(text: str) -> System:
    """Look up a system preset by id or alias (`kvfit --list-systems`)."""
    table = systems()
    key = _lookup(text, table)
    if key is None:
        ids = ", ".join(sorted({s.id for s in table.values()}))
        raise UsageError(f"unknown system '{text}'.{_did_you_mean(text, table)}",
                         hint=f"Known systems: {ids}. `kvfit --list-systems` shows their "
                         "accelerators and scale-up domains.")
    return table[key]
