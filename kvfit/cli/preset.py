"""Strict TOML presets: known keys with the right types, or exit 2 naming the key."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

from ..errors import UsageError

_NUM = (int, float)
ROOT_KEYS = {
    "model": str, "revision": str, "context": (int, str), "kv_dtype": str, "index_dtype": str,
    "weight_gib": _NUM, "allow_context_overflow": bool, "hardware": str, "gpus": int,
    "tp": (int, str), "pp": int, "pp_layer_partition": str, "utilization": _NUM, "runtime_reserve_gib": _NUM,
    "concurrent_users": int, "active_sequences_per_user": int, "memory_basis": str,
    "cache_layout": str, "mtp": bool, "offline": bool, "timeout": _NUM, "verify_headers": bool,
    "system": str, "nodes": int, "systems": list, "max_nodes": int, "parallelism": str,
    "device_memory_gib": _NUM, "max_context": bool, "min_gpus": bool, "rope_scaling": str,
}
TABLES = {"output": {"json": bool},
          "engine": {"check": (str, list), "python": str, "probe": str, "tp": int,
                     "timeout": _NUM, "require_pass": bool}}
CHECKS = ("vllm", "sglang")
# Table keys that become a differently named request key ([engine] check -> check_engine).
RENAMES = {"engine": {"check": "check_engine", "python": "engine_python",
                      "probe": "engine_probe", "tp": "engine_tp", "timeout": "engine_timeout",
                      "require_pass": "require_engine_pass"}}


def _check(table: dict, spec: dict, where: str) -> dict:
    out = {}
    for key, value in table.items():
        name = f"{where}{key}"
        if key not in spec:
            raise UsageError(f"unknown key '{name}' in the preset.",
                             hint="Known keys: " + ", ".join(sorted(spec)) + ".")
        want = spec[key]
        if isinstance(value, bool) and want is not bool and bool not in (
                want if isinstance(want, tuple) else (want,)):
            raise UsageError(f"preset key '{name}' has the wrong type (got a boolean).")
        if not isinstance(value, want):
            kinds = want if isinstance(want, tuple) else (want,)
            raise UsageError(f"preset key '{name}' should be {' or '.join(k.__name__ for k in kinds)}, "
                             f"got {type(value).__name__}.")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise UsageError(f"preset key '{name}' should be a list of strings.")
        out[key] = value
    return out


MAX_PRESET_BYTES = 1 << 20    # a preset is a few hundred bytes; /dev/zero is not one


def load_preset(path: Path, for_calibration: bool = False) -> dict:
    """Read a preset into flat request keys (output.json -> json, engine.check -> check_engine).

    A [calibration] table is checked as strictly (kvfit.calibrate.config) but never becomes a
    plan key; a plain plan notes on stderr that only `kvfit calibrate` reads it."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_PRESET_BYTES:
            raise UsageError(f"preset {path.name} is not a regular file of at most "
                             f"{MAX_PRESET_BYTES:,} bytes.")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read preset {path.name}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise UsageError(f"preset {path.name} is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"preset {path.name} is not valid TOML: {exc}.") from None
    except RecursionError:        # tomllib recurses per nested array or inline table
        raise UsageError(f"preset {path.name} nests arrays or tables too deeply to be a "
                         "preset.") from None
    except ValueError:            # tomllib's int() of a number over 4,300 digits
        raise UsageError(f"preset {path.name} holds a number too long to be a preset "
                         "value.") from None
    root = {k: v for k, v in data.items() if not isinstance(v, dict)}
    out = _check(root, ROOT_KEYS, "")
    for name, table in ((k, v) for k, v in data.items() if isinstance(v, dict)):
        if name == "rope_scaling":          # a [rope_scaling] table or an inline table
            out |= _rope(table)
            continue
        if name == "calibration":
            from ..calibrate.config import check_table
            check_table(table)
            if not for_calibration:
                print(f"kvfit: note: {path.name}: the [calibration] table is read by `kvfit "
                      "calibrate`; this run plans the deployment only.", file=sys.stderr)
            continue
        if name not in TABLES:
            raise UsageError(f"unknown table [{name}] in the preset.",
                             hint="Known tables: " + ", ".join(sorted([*TABLES, "calibration"]))
                             + ".")
        names = RENAMES.get(name, {})
        out |= {names.get(k, k): v for k, v in _check(table, TABLES[name], f"{name}.").items()}
    if isinstance(out.get("check_engine"), list):
        out["check_engine"] = _check_list(out["check_engine"])
    if isinstance(out.get("rope_scaling"), str):        # rope_scaling = '{"rope_type": ...}'
        out |= _rope(out["rope_scaling"])
    model = out.get("model")
    if model and not Path(model).is_absolute() and os.path.exists(path.parent / model):
        out["model"] = str(path.parent / model)
    python = out.get("engine_python")
    if python and ("/" in python or os.sep in python) and not Path(python).is_absolute():
        out["engine_python"] = str(path.parent / python)   # relative to the preset's folder
    return out


def _rope(value) -> dict:
    """rope_scaling as a table, an inline table or a JSON string -> the request's knob."""
    from ..plan.rope import parse_rope
    return {"rope_scaling": parse_rope(value, "preset rope_scaling"),
            "rope_scaling_source": "preset rope_scaling"}


def _check_list(names: list[str]) -> str:
    """[engine] check = ["vllm"] / ["vllm", "sglang"] (the brief's spelling) -> vllm / all."""
    bad = [n for n in names if n not in (*CHECKS, "all")]
    if bad or not names:
        raise UsageError(f"preset key 'engine.check' lists {bad or 'no engine'}: use vllm, "
                         "sglang or all (a string, or a list such as [\"vllm\"]).")
    chosen = set(names)
    return "all" if "all" in chosen or chosen == set(CHECKS) else names[0]
