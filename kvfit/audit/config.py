"""The strict audit TOML: [audit], [[models]], [[hardware]], [[systems]]."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..textsafe import one_line

_NUM = (int, float)
AUDIT_KEYS = {"name": str, "offline": bool, "min_coverage": _NUM, "min_family_coverage": _NUM,
              "engine": str}
MODEL_KEYS = {"family": str, "model": str, "contexts": list, "kv_dtype": str, "required": bool,
              "weight_gib": _NUM}
HARDWARE_KEYS = {"preset": str, "counts": list}
SYSTEM_KEYS = {"preset": str, "node_counts": list}


@dataclass(frozen=True, slots=True)
class Frontier:
    """What to audit. Thresholds are fractions 0-1; contexts as written ('32k', 131072)."""

    name: str
    offline: bool
    min_coverage: float
    min_family_coverage: float
    models: tuple[dict, ...]
    hardware: tuple[dict, ...]
    systems: tuple[dict, ...]
    engine: str | None = None      # "vllm[@VERSION]" / "sglang": the engine answers every fleet


def _typed(table: dict, spec: dict, where: str) -> dict:
    for key, value in table.items():
        if key not in spec:
            raise UsageError(f"unknown key '{one_line(f'{where}.{key}')}' in the audit file.",
                             hint="Known keys: " + ", ".join(sorted(spec)) + ".")
        want = spec[key]
        kinds = want if isinstance(want, tuple) else (want,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, want):
            raise UsageError(f"audit key '{one_line(f'{where}.{key}')}' should be "
                             f"{' or '.join(k.__name__ for k in kinds)}.")
    return table


def _entries(data: dict, name: str, spec: dict, required: tuple[str, ...]) -> tuple[dict, ...]:
    rows = data.get(name, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise UsageError(f"'{name}' must be an array of tables ([[{name}]]).")
    for i, row in enumerate(rows):
        _typed(row, spec, f"{name}[{i}]")
        missing = [k for k in required if k not in row]
        if missing:
            raise UsageError(f"[[{name}]] entry {i} lacks {', '.join(missing)}.")
    return tuple(rows)


def _counts(rows: tuple[dict, ...], key: str, where: str) -> None:
    for row in rows:
        values = row[key]
        if not values or not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 4096
                                 for v in values):
            raise UsageError(f"[[{where}]] {row['preset']}: {key} must be whole numbers 1-4096.")


MAX_AUDIT_BYTES = 1 << 20     # an audit file is a few kilobytes; /dev/zero is not one


def load_frontier(path: Path) -> Frontier:
    """Parse and validate an audit file; relative model paths resolve from its folder."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_AUDIT_BYTES:
            raise UsageError(f"audit file {path.name} is not a regular file of at most "
                             f"{MAX_AUDIT_BYTES:,} bytes.")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read audit file {path.name}: {exc.strerror}.") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"audit file {path.name} is not valid TOML: {exc}.") from None
    except RecursionError:        # tomllib recurses per nested array or inline table
        raise UsageError(f"audit file {path.name} nests arrays or tables too deeply.") from None
    except ValueError:            # tomllib's int() of a number over 4,300 digits
        raise UsageError(f"audit file {path.name} holds a number too long to read.") from None
    unknown = sorted(set(data) - {"audit", "models", "hardware", "systems"})
    if unknown:
        raise UsageError(f"unknown table(s) {one_line(', '.join(unknown))} in the audit file.")
    head = _typed(data.get("audit", {}), AUDIT_KEYS, "audit")
    models = _entries(data, "models", MODEL_KEYS, ("family", "model", "contexts"))
    for m in models:
        if not m["contexts"]:
            raise UsageError(f"[[models]] {m['model']}: contexts is empty.")
        local = path.parent / m["model"]
        if os.path.exists(local):            # False for a name the file system refuses
            m["model"] = str(local)
    hardware = _entries(data, "hardware", HARDWARE_KEYS, ("preset", "counts"))
    systems = _entries(data, "systems", SYSTEM_KEYS, ("preset", "node_counts"))
    _counts(hardware, "counts", "hardware")
    _counts(systems, "node_counts", "systems")
    for key in ("min_coverage", "min_family_coverage"):
        if not 0 <= head.get(key, 1.0) <= 1:
            raise UsageError(f"audit.{key} must be between 0 and 1.")
    if not models:
        raise UsageError("the audit file names no [[models]].")
    engine = head.get("engine")
    if engine is not None:
        from ..engines.spec import parse_engine
        parse_engine(engine)                    # a bad engine name exits 2 here
    return Frontier(head.get("name", path.stem), head.get("offline", True),
                    float(head.get("min_coverage", 1.0)),
                    float(head.get("min_family_coverage", 1.0)), models, hardware, systems,
                    engine)
