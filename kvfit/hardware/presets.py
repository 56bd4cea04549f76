"""Accelerator and system presets: load them, look one up by id or alias, and choose a memory
basis."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from ..errors import UsageError
from ..paths import specs_dir
from ..specs import cache as spec_cache
from ..specs.checked import load_checked

GIB, MIB = 1024**3, 1024**2


@dataclass(frozen=True, slots=True)
class Accelerator:
    """One accelerator type. Memory figures in GiB/MiB as the spec gives them (None if unknown)."""

    id: str
    name: str
    aliases: tuple[str, ...]
    nominal_gib: float
    visible_mib: int | None
    cuda_total_mib: int | None
    unified: bool
    unified_planning_gib: float | None
    notes: tuple[str, ...] = ()
    fp8: bool | None = None
    fp4: bool | None = None
    compute_capability: str | None = None

    def memory(self, basis: str, override_gib: float | None = None) -> tuple[int, str]:
        """(bytes per accelerator, description of the basis) for 'visible' or 'nominal'.

        override_gib (--device-memory-gib) replaces both with the user's figure.
        """
        if override_gib is not None:
            return round(override_gib * GIB), f"user: --device-memory-gib {override_gib:g}"
        if basis == "visible" and self.visible_mib:
            return self.visible_mib * MIB, f"visible: {self.visible_mib:,} MiB reported by the driver"
        if basis == "visible" and self.unified and self.unified_planning_gib:
            return (round(self.unified_planning_gib * GIB),
                    f"unified memory: {self.unified_planning_gib:g} GiB planning default")
        note = "" if basis == "nominal" else " (no visible figure known)"
        return round(self.nominal_gib * GIB), f"nominal: {self.nominal_gib:g} GiB{note}"


def _load(kind: str, schema: str, paths=None) -> list[dict]:
    """The validated data of the specs/<kind> files (`paths`: these of them); SpecError."""
    docs, problems = [], []
    for path in sorted(specs_dir(kind).glob("*.yaml")) if paths is None else paths:
        doc, probs, key = load_checked(path, schema, allow_null=True)
        problems += probs
        if doc is not None and not probs:
            docs.append(doc.data)
            if key is not None:
                spec_cache.put(key, doc.data)
    if problems:
        from ..errors import SpecError
        raise SpecError(problems)
    return docs


def _accelerator(d: dict) -> Accelerator:
    """The Accelerator of one validated hardware spec."""
    m = d["memory"]
    return Accelerator(d["id"], d["name"], tuple(d.get("aliases", ())), m["nominal_gib"],
                       m.get("visible_mib"), m.get("cuda_total_mib"), m.get("unified", False),
                       m.get("unified_planning_gib"), tuple(d.get("notes", ())),
                       d["dtypes"].get("fp8"), d["dtypes"].get("fp4"), d.get("compute_capability"))


@cache
def accelerators() -> dict[str, Accelerator]:
    """Every bundled accelerator, keyed by id and by alias."""
    out = {}
    for d in _load("hardware", "hardware.v1.schema.json"):
        acc = _accelerator(d)
        for key in (acc.id, *acc.aliases):
            out[key] = acc
    return out


@lru_cache(maxsize=64)
def _by_id(text: str) -> Accelerator | None:
    """The preset whose id is `text` in any letter case, read from its own file
    (specs/hardware/<id>.yaml) alone, so a plan naming a preset by its id reads one spec;
    None when no file is named so (an alias, a typo: the whole table answers). Kept per
    process like the table (a bounded cache: the texts are the user's)."""
    name = str(text).strip().casefold()
    paths = [p for p in specs_dir("hardware").glob("*.yaml") if p.stem == name]
    if not paths:
        return None
    docs = _load("hardware", "hardware.v1.schema.json", paths)
    return next((acc for acc in map(_accelerator, docs) if acc.id == name), None)


def find_accelerator(text: str) -> Accelerator:
    """Look up a preset id/alias, or build `custom:<GiB>`."""
    m = re.fullmatch(r"custom:(.*)", text.strip(), re.DOTALL)
    if m:
        from ..numbers import parse_real, shown

        gib = parse_real(m.group(1)) if re.fullmatch(r"[0-9.]+", m.group(1)) else None
        if gib is None or not 0 < gib <= 100_000:
            raise UsageError(f"--hardware {shown(text)}: the size must be a number of GiB "
                             "above 0 and at most 100000 (custom:96).")
        return Accelerator(text, f"custom accelerator with {gib:g} GiB", (), gib, None, None,
                           False, None)
    acc = _by_id(text)
    if acc is not None:
        return acc
    table = accelerators()
    key = _lookup(text, table)
    if key is None:
        from ..numbers import shown

        ids = ", ".join(sorted({a.id for a in table.values()}))
        raise UsageError(f"unknown hardware {shown(text)}.{_did_you_mean(text, table)}",
                         hint=f"Known presets: {ids}; or custom:<GiB>. `kvfit --list-hardware` "
                         "shows them with their memory.")
    return table[key]


def _lookup(text: str, table: dict) -> str | None:
    """The table key for an id or alias in any letter case (H100-80 = h100-80)."""
    if text in table:
        return text
    folded = {k.casefold(): k for k in table}
    return folded.get(str(text).strip().casefold())


def _did_you_mean(text: str, table: dict) -> str:
    """' Did you mean ...?' naming the close preset ids (ids, not aliases), or ''."""
    import difflib

    typed = str(text).strip().casefold()
    ids = sorted({v.id for v in table.values()})
    close = [v.id for k, v in table.items() if typed and (k.casefold().startswith(typed)
                                                           or typed.startswith(k.casefold()))]
    close += [table[k].id for k in difflib.get_close_matches(typed, list(table), n=4,
                                                                 cutoff=0.75)]
    close = [i for i in dict.fromkeys(close) if i in ids][:5]
    return f" Did you mean {' or '.join(close)}?" if close else ""


def alias_note(text: str | None) -> str | None:
    """For an alias shared by a family (h100 = h100-80, beside h100-pcie-80 and h100-nvl-94):
    which preset it was read as, and the close ones."""
    if not text or text.startswith("custom:") or _by_id(text) is not None:
        return None
    table = accelerators()
    key = _lookup(text, table)
    if key is None or table[key].id.casefold() == str(text).strip().casefold():
        return None
    acc, typed = table[key], str(text).strip().casefold()
    others = sorted({a.id for k, a in table.items() if a.id != acc.id and (
        a.id.startswith(typed + "-") or k.casefold().startswith(typed + "-"))})
    if not others:
        return None
    return (f"--hardware {text} is read as {acc.id} ({acc.name}); close presets: "
            f"{', '.join(others)}.")


@dataclass(frozen=True, slots=True)
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
        from ..numbers import shown
        ids = ", ".join(sorted({s.id for s in table.values()}))
        raise UsageError(f"unknown system {shown(text)}.{_did_you_mean(text, table)}",
                         hint=f"Known systems: {ids}. `kvfit --list-systems` shows their "
                         "accelerators and scale-up domains.")
    return table[key]
