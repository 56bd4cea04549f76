"""Discover, validate and compile the architecture spec corpus (or a contributor's files)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import display_path, specs_dir
from . import cache as spec_cache
from .architecture import Architecture, compile_architecture
from .checked import load_checked

if TYPE_CHECKING:
    from ..errors import Problem

ARCH_SCHEMA = "architecture.v1.schema.json"


def spec_files(kind: str = "architectures") -> list[Path]:
    """The spec files of one kind, sorted; files starting with '_' are templates/data."""
    return sorted(p for p in specs_dir(kind).glob("*.yaml") if not p.name.startswith("_"))


def load_architecture_file(path: Path, fresh: bool = False, defer_parameters: bool = False
                           ) -> tuple[Architecture | None, list[Problem]]:
    """Load, validate and compile one architecture spec file (defer_parameters: see
    compile_architecture; a plan's spec, never `specs check`)."""
    doc, problems, key = load_checked(path, ARCH_SCHEMA, fresh=fresh)
    return _compile(path, doc, problems, key, defer_parameters)


def _compile(path: Path, doc, problems: list[Problem], key: str | None,
             defer_parameters: bool = False) -> tuple[Architecture | None, list[Problem]]:
    """Compile a loaded spec; store its data in the cache once every check has passed."""
    if doc is None or problems:
        return None, problems
    merged, more = _extended(path, doc)
    if more:
        if doc.tree is None:               # cached data has no positions: locate the problems
            return load_architecture_file(path, fresh=True)
        return None, more
    arch, more = compile_architecture(merged, defer_parameters)
    if arch and arch.id != path.stem:
        more.append(doc.problem("KV301", ("id",), f"id '{arch.id}' does not match the file "
                                f"name '{path.name}'", f"rename the file to {arch.id}.yaml "
                                "or set `id: " + path.stem + "`"))
        arch = None
    if more and doc.tree is None:          # cached data has no positions: locate the problems
        return load_architecture_file(path, fresh=True)
    if arch is not None and key is not None:
        spec_cache.put(key, doc.data)
    if arch is not None:
        _valid_data[_stamp(path)] = doc.data
    return arch, problems + more


_valid_data: dict[tuple, object] = {}    # specs compiled in this process: base specs reused


def _stamp(path: Path) -> tuple:
    st = path.stat()
    return (str(path.resolve()), st.st_mtime_ns, st.st_size)


NOT_INHERITED = ("id", "aliases", "summary", "match", "sources", "parameters", "extends")


def _extended(path: Path, doc):
    """(the document to compile, problems): a spec with `extends: BASE` gets BASE's content
    (BASE.yaml beside it) under its own; `fields` merge by name, other keys replace."""
    from .loader import Doc

    data = doc.data
    base_id = data.get("extends") if isinstance(data, dict) else None
    if base_id is None:
        return doc, []
    base_path = path.parent / f"{base_id}.yaml"
    where = ("extends",)
    if base_id == data.get("id") or not base_path.is_file():
        known = ", ".join(p.stem for p in sorted(path.parent.glob("*.yaml"))
                          if not p.name.startswith("_") and p != path)
        return doc, [doc.problem("KV127", where, f"`extends: {base_id}`: no spec "
                                 f"{base_id}.yaml beside this one", f"known specs: {known}")]
    known_data = _valid_data.get(_stamp(base_path))
    if known_data is not None:
        base, problems = Doc(str(base_path), known_data, None, []), []
    else:
        base, problems, _ = load_checked(base_path, ARCH_SCHEMA)
    if base is None or problems:
        return doc, [doc.problem("KV127", where, f"the base spec {base_id}.yaml has problems "
                                 "of its own: run `kvfit specs check` on it")]
    if "extends" in base.data:
        return doc, [doc.problem("KV127", where, f"{base_id}.yaml extends "
                                 f"{base.data['extends']} itself: extend that spec directly")]
    merged = {k: v for k, v in base.data.items() if k not in NOT_INHERITED}
    for k, v in data.items():
        merged[k] = {**merged.get(k, {}), **v} if k == "fields" else v
    return Doc(doc.file, merged, doc.tree, doc.lines), []


def corpus_problems(archs: list[Architecture]) -> list[Problem]:
    """Cross-spec checks: no two specs claim the same model_type or architecture class."""
    from ..errors import Problem

    problems, claimed = [], {}
    for a in archs:
        for kind, values in (("model_type", a.model_types), ("architectures", a.architectures)):
            for v in values:
                other = claimed.setdefault((kind, v), a)
                if other is not a:
                    problems.append(Problem("KV302", a.file, 1, 1, f"{kind} '{v}' is claimed by "
                                            f"both '{other.id}' and '{a.id}'",
                                            "each matcher belongs to exactly one spec"))
    return problems


def load_paths(paths: list[Path]) -> list[Architecture]:
    """Load the given spec files; raise SpecError listing every problem in every file."""
    from ..errors import SpecError

    archs, problems = [], []
    for p in paths:
        arch, probs = load_architecture_file(p)
        problems += probs
        if arch:
            archs.append(arch)
    problems += corpus_problems(archs)
    if problems:
        raise SpecError(problems)
    return archs


@dataclass(frozen=True, slots=True)
class Matcher:
    """A spec's exact aliases, read without compiling the spec (for fast matching)."""

    id: str
    path: Path
    model_types: tuple[str, ...]
    architectures: tuple[str, ...]


_compiled: dict[Path, Architecture] = {}      # specs compiled while reading the matchers


@cache
def builtin_matchers() -> tuple[Matcher, ...]:
    """Every bundled spec's matchers, from validated (usually cached) data: the shipped index
    of a spec whose file is the one shipped (kvfit.specs.cache.matcher, by the same key), else
    the spec's own validated data."""
    out = []
    for path in spec_files():
        try:
            shipped = spec_cache.matcher(spec_cache.key(path.read_bytes(), ARCH_SCHEMA))
        except OSError:
            shipped = None                       # unreadable: load_checked says why
        if shipped is not None:
            out.append(Matcher(shipped[0], path, tuple(shipped[1]), tuple(shipped[2])))
            continue
        doc, problems, key = load_checked(path, ARCH_SCHEMA)
        if problems or key is not None:          # invalid, or not cached yet: compile it now
            arch, problems = _compile(path, doc, problems, key)
            if problems:
                from ..errors import SpecError
                raise SpecError(problems)
            _compiled[path] = arch               # parsed once: builtin_architecture reuses it
        m = doc.data["match"]
        out.append(Matcher(doc.data["id"], path, tuple(m["model_type"]),
                           tuple(m.get("architectures", ()))))
    return tuple(out)


@cache
def builtin_architecture(spec_id: str) -> Architecture:
    """Compile one bundled spec by id."""
    path = next(m.path for m in builtin_matchers() if m.id == spec_id)
    if path in _compiled:
        return _compiled[path]
    arch, problems = load_architecture_file(path, defer_parameters=True)
    if problems:
        from ..errors import SpecError
        raise SpecError(problems)
    return arch


@cache
def builtin_architectures() -> tuple[Architecture, ...]:
    """The bundled corpus, loaded once per process."""
    return tuple(load_paths(spec_files()))


@cache
def watchlist() -> dict[str, str]:
    """Config keys that change per-sequence state; a spec must read or ignore each it meets."""
    path = specs_dir("architectures") / "_watchlist.yaml"
    doc, problems, key = load_checked(path, "watchlist.v1.schema.json")
    if doc is None or problems:
        from ..errors import Problem, SpecError
        raise SpecError(problems or [Problem("KV100", display_path(path), 1, 1, "unreadable")])
    if key is not None:
        spec_cache.put(key, doc.data)
    return doc.data["keys"]
