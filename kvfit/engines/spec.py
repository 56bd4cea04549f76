"""Engine specs: load specs/engines/<id>.yaml, pick the rules for one engine version.

A spec has top-level `rules` and `estimates`, then `versions:` blocks with a range such as
">=0.21,<0.34". For a version, every block whose range contains it is applied in file order
(later blocks override earlier ones), so the rules of 0.33 are the base rules, overridden by
each block that covers 0.33. Every rule value keeps the `source` it was written with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError
from ..specs import cache as spec_cache
from ..specs.checked import load_checked
from ..textsafe import one_line


def parse_version(text: str) -> Version | None:
    """The PEP 440 version of an engine release ('0.33.0', 'v0.33.0rc1', '0.33.0+cu128',
    '0.11.1.dev42+g1a2b3c'), or None when it is not one. Ordering is PEP 440's: a dev build or
    release candidate of 0.34 comes after 0.33 and before 0.34.0."""
    try:
        return Version(str(text).strip())
    except (InvalidVersion, ValueError):   # ValueError: a part of over 4,300 digits
        return None


def in_range(version: Version, spec: str) -> bool:
    """True when `version` satisfies the PEP 440 specifier `spec` (">=0.21,<0.34"); engine dev
    builds and release candidates count as the versions they are (prereleases allowed)."""
    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        raise UsageError(f"bad version range {spec!r}") from None


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules and estimates that apply to one engine version.

    values: rule name -> {"value", "source", ["note"]}; estimates: name -> fitted constant.
    version: the version string used; assumed: True when it was not given or installed.
    """

    engine: str
    version: str
    assumed: bool
    label: str
    values: dict
    estimates: dict
    dtypes: tuple
    metrics: dict = field(default_factory=dict)
    commands: dict = field(default_factory=dict)
    evidence: tuple = ()
    layouts: tuple = ()
    extrapolated_from: str | None = None   # the newest known version whose rules stand in
    constraints: tuple = ()

    def __getitem__(self, name: str):
        """The value of rule `name`."""
        return self.values[name]["value"]

    def basis(self, name: str) -> str:
        """'engine rule <source>' for rule `name`."""
        return f"engine rule {self.values[name]['source']}"

    def est(self, name: str) -> float:
        """The value of fitted constant `name`."""
        return self.estimates[name]["value"]

    def est_basis(self, *names: str) -> str:
        """'estimate (fitted to N logs of <versions> on <hardware>, TP ..; constants ..)'."""
        logs = sorted({s for n in names for s in self.estimates[n]["fitted_on"]})
        reg = self.regime(*names)
        where = ""
        if reg["engines"] or reg["hardware"]:
            where = (f" of {', '.join(reg['engines']) or 'a hardware spec'} on "
                     f"{', '.join(reg['hardware'])}" +
                     (f", TP {'/'.join(map(str, reg['tp']))}" if reg["tp"] else ""))
        return f"estimate (fitted to {len(logs)} logs{where}; constants {', '.join(names)})"

    def regime(self, *names: str) -> dict:
        """The union of the fitted regimes (engine versions, hardware, TP and the engine
        settings a constant depends on) of `names`."""
        out: dict = {"engines": set(), "hardware": set(), "tp": set()}
        settings: dict = {}
        for n in names:
            reg = self.estimates[n].get("regime", {})
            for k in out:
                out[k] |= set(reg.get(k, ()))
            for k, v in reg.get("settings", {}).items():
                settings.setdefault(k, set()).update(v)
        res = {k: sorted(v) for k, v in out.items()}
        if settings:
            res["settings"] = {k: sorted(v) for k, v in sorted(settings.items())}
        return res


@cache
def load_spec(engine: str) -> dict:
    """The validated spec document of `engine` (SpecError with file:line:col if invalid)."""
    from .known import names, spec_path

    path = spec_path(engine)
    if path is None:
        raise UsageError(f"unknown engine {engine!r}.", hint=f"Choose {' or '.join(names())}.")
    doc, problems, key = load_checked(path, "engine.v1.schema.json")   # cached when valid
    if doc is None or problems:
        from ..errors import SpecError
        raise SpecError(problems)
    if key is not None:
        spec_cache.put(key, doc.data)
    return doc.data


def parse_engine(text: str) -> tuple[str, str | None]:
    """'vllm@0.33.0' -> ('vllm', '0.33.0'); 'sglang' -> ('sglang', None)."""
    name, _, version = str(text).partition("@")
    name = name.strip().lower()
    from .known import spec_path

    if spec_path(name) is None:
        raise UsageError(f"--engine {text!r}: unknown engine.", hint="Use vllm or sglang, "
                         "optionally with @VERSION (vllm@0.33.0).")
    return name, (version.strip() or None)


def installed_version(engine: str) -> str | None:
    """The engine's installed distribution version in this environment, without importing it.

    When no module of that name can be found, nothing is installed to ask about, and the
    distribution metadata is not read."""
    from importlib.util import find_spec

    package = load_spec(engine)["package"]
    if find_spec(package.replace("-", "_")) is None:
        return None
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def rules_for(engine: str, version: str | None, strict: bool = False) -> Rules:
    """Rules for `engine` at `version` (None: the spec's default version, marked assumed).

    A version newer than every range kvfit knows gets the newest rules (the spec's default
    version), marked `extrapolated_from`, unless `strict`; an older unknown one is refused."""
    spec = load_spec(engine)
    assumed = version is None
    version = version or spec["default_version"]
    vt, newest = parse_version(version), spec["default_version"]
    newest_vt = parse_version(newest)
    blocks = [b for b in spec["versions"] if vt is not None and in_range(vt, b["versions"])]
    extrapolated, applies = None, vt     # `applies`: the version whose rules are used
    if not blocks and not strict and vt is not None and vt > newest_vt:
        blocks = [b for b in spec["versions"] if in_range(newest_vt, b["versions"])]
        extrapolated, applies = newest, newest_vt
    if not blocks:
        ranges = ", ".join(b["versions"] for b in spec["versions"])
        newer = vt is not None and vt > newest_vt
        shown = one_line(version if len(str(version)) <= 64 else f"{str(version)[:48]}... (too long)")
        raise UsageError(f"{engine} {shown}: kvfit has no rules for this version"
                         + (" (--engine-strict refuses to extrapolate)." if newer else "."),
                         hint=f"Known ranges: {ranges}. Pass --engine {engine}@VERSION inside one"
                         + ("" if newer else "; a version newer than all of them is planned "
                            f"with the {newest} rules, labelled extrapolated") + ".")
    values, metrics, commands = dict(spec["rules"]), {}, {}
    for b in blocks:
        values |= b.get("rules", {})
        metrics = b.get("metrics", metrics)
        commands = b.get("commands", commands)
    layouts = tuple(c for c in spec.get("cache_layouts", ())
                    if "versions" not in c or in_range(applies, c["versions"]))
    constraints: dict = {}           # by id: a later entry for this version replaces one
    for c in spec.get("layout_constraints", ()):
        if "versions" not in c or in_range(applies, c["versions"]):
            constraints[c["id"]] = c
    label = blocks[-1].get("label", version)
    if extrapolated:
        label = f"{label}, extrapolated to {version}"
    return Rules(engine, version, assumed, label, values,
                 spec["estimates"], tuple(spec["kv_cache_dtypes"]), metrics, commands,
                 tuple(b["evidence"] for b in blocks), layouts, extrapolated,
                 tuple(constraints.values()))
