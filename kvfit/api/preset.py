"""Strict TOML presets: known keys with the right types, or exit 2 naming the key and its
file:line; merged under the command line (merge), which says in one line each preset value it
replaces (a note: on stderr for the CLI, to the caller's `note` function for the API), and
refuses a model-specific key with another model."""

from __future__ import annotations

import os
import re
import sys
import tomllib
from contextlib import contextmanager
from pathlib import Path

from ..errors import KvfitError, UsageError
from ..paths import expand_user
from ..textsafe import one_line

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
# Table keys that become a differently named request key ([engine] check -> check_engine).
RENAMES = {"engine": {"check": "check_engine", "python": "engine_python",
                      "probe": "engine_probe", "tp": "engine_tp", "timeout": "engine_timeout",
                      "require_pass": "require_engine_pass"}}
# Request key -> the preset key that sets it ("engine_tp" -> "engine.tp", "json" -> "output.json").
PRESET_KEY = {"json": "output.json", "rope_scaling_source": "rope_scaling",
              **{v: f"engine.{k}" for k, v in RENAMES["engine"].items()}}
# Keys that describe one checkpoint: with another model on the command line they are refused.
MODEL_SPECIFIC = ("weight_gib", "revision", "rope_scaling")
# Ways to name the accelerators: a command-line choice of one replaces the preset's others.
TARGETS = (("hardware", "gpus", "device_memory_gib"), ("system", "nodes"),
           ("systems", "max_nodes"))


def shown(path: Path) -> str:
    """The preset's path as messages show it: resolved, so a relative path cannot mislead."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError, ValueError):     # ValueError: a NUL byte in the path
        return repr(str(path))


def key_lines(text: str) -> dict[str, int]:
    """Line of each key ("context", "engine.tp") in a preset's TOML text (first occurrence)."""
    lines: dict[str, int] = {}
    table = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        head = re.match(r"\[\s*([A-Za-z0-9_.\"-]+)\s*\]", line)
        if head and not line.startswith("[["):
            table = head.group(1).replace('"', "") + "."
            lines.setdefault(table[:-1], n)
            continue
        key = re.match(r'"?([A-Za-z0-9_.-]+)"?\s*=', line)
        if key:
            lines.setdefault(table + key.group(1), n)
    return lines


def flag_of(name: str) -> str:
    """The command-line flag of a request key (engine_tp -> --engine-tp)."""
    return "--" + name.replace("_", "-")


def _check(table: dict, spec: dict, where: str, at) -> dict:
    """`at(name)`: the key's "file:line" for messages."""
    out = {}
    for key, value in table.items():
        name = f"{where}{key}"
        if key not in spec:
            raise UsageError(f"unknown key '{one_line(name)}' in the preset {at(name)}.",
                             hint="Known keys: " + ", ".join(sorted(spec)) + ".")
        want = spec[key]
        if isinstance(value, bool) and want is not bool and bool not in (
                want if isinstance(want, tuple) else (want,)):
            raise UsageError(f"preset key '{one_line(name)}' has the wrong type (got a boolean; "
                             f"{at(name)}).")
        if not isinstance(value, want):
            kinds = want if isinstance(want, tuple) else (want,)
            raise UsageError(f"preset key '{one_line(name)}' should be "
                             f"{' or '.join(k.__name__ for k in kinds)}, got "
                             f"{type(value).__name__} ({at(name)}).")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise UsageError(f"preset key '{one_line(name)}' should be a list of strings ({at(name)}).")
        out[key] = value
    return out


MAX_PRESET_BYTES = 1 << 20    # a preset is a few hundred bytes; /dev/zero is not one


def load_preset(path: Path, for_calibration: bool = False, note=None) -> dict:
    """Read a preset into flat request keys (output.json -> json, engine.check -> check_engine).

    A [calibration] table is checked as strictly (kvfit.calibrate.config) but never becomes a
    plan key; a plain plan notes (through `note`, default stderr) that only `kvfit calibrate`
    reads it."""
    return read_preset(path, for_calibration, note)[0]


def read_preset(path: Path, for_calibration: bool = False, note=None
                ) -> tuple[dict, dict[str, str]]:
    """(request keys, where each came from: request key -> "preset key 'engine.tp' (file:line)").
    note: where a note goes (a function of its text; default: a line on stderr)."""
    where = shown(path)
    try:
        if not path.is_file() or path.stat().st_size > MAX_PRESET_BYTES:
            raise UsageError(f"preset {where} is not a regular file of at most "
                             f"{MAX_PRESET_BYTES:,} bytes.")
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise UsageError(f"cannot read preset {where}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise UsageError(f"preset {where} is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"preset {where} is not valid TOML: {exc}.") from None
    except RecursionError:        # tomllib recurses per nested array or inline table
        raise UsageError(f"preset {where} nests arrays or tables too deeply to be a "
                         "preset.") from None
    except ValueError:            # tomllib's int() of a number over 4,300 digits
        raise UsageError(f"preset {where} holds a number too long to be a preset "
                         "value.") from None
    lines = key_lines(text)

    def at(name: str) -> str:
        line = lines.get(name) or lines.get(name.partition(".")[0])
        return f"{where}:{line}" if line else where

    root = {k: v for k, v in data.items() if not isinstance(v, dict)}
    out = _check(root, ROOT_KEYS, "", at)
    for name, table in ((k, v) for k, v in data.items() if isinstance(v, dict)):
        if name == "rope_scaling":          # a [rope_scaling] table or an inline table
            out |= _rope(table, at(name))
            continue
        if name == "calibration":
            from ..calibrate.config import check_table
            check_table(table)
            if not for_calibration:
                (note or _stderr_note)(f"{path.name}: the [calibration] table is read by `kvfit "
                                "calibrate`; this run plans the deployment only.")
            continue
        if name not in TABLES:
            raise UsageError(f"unknown table [{one_line(name)}] in the preset {at(name)}.",
                             hint="Known tables: " + ", ".join(sorted([*TABLES, "calibration"]))
                             + ".")
        names = RENAMES.get(name, {})
        out |= {names.get(k, k): v
                for k, v in _check(table, TABLES[name], f"{name}.", at).items()}
    if isinstance(out.get("check_engine"), list):
        out["check_engine"] = _check_list(out["check_engine"], at("engine.check"))
    if isinstance(out.get("rope_scaling"), str):        # rope_scaling = '{"rope_type": ...}'
        out |= _rope(out["rope_scaling"], at("rope_scaling"))
    origins = {k: f"preset key '{PRESET_KEY.get(k, k)}' ({at(PRESET_KEY.get(k, k))})"
               for k in out}
    model = out.get("model")
    if model and not expand_user(model).is_absolute():
        local = path.parent / model
        if os.path.exists(local) or _looks_local(model):
            out["model"] = str(local.resolve() if os.path.exists(local) else local.absolute())
    python = out.get("engine_python")
    if python and ("/" in python or os.sep in python) and not Path(python).is_absolute():
        out["engine_python"] = str((path.parent / python).absolute())  # from the preset's folder
    return out, origins


def _looks_local(model: str) -> bool:
    """A preset's model that can only be a path (./x, ../x, x/y/z, x.json), not a Hub id."""
    return (model.startswith((".", "~")) or model.count("/") > 1 or os.sep != "/" and os.sep
            in model or model.endswith((".json", ".gguf")))


def merge(path: Path, preset: dict, origins: dict[str, str], cli: dict, note=None) -> dict:
    """The preset's values under the command line's (`cli`: the keys given there).

    Each preset value the command line replaces is said in one line on stderr; a
    model-specific key (weight_gib, revision, rope_scaling) of the preset's own model with
    another model on the command line is a UsageError naming it and how to override it.
    note: where those lines go (a function of the text; default: stderr)."""
    _note = note or _stderr_note
    out = dict(preset)
    model = cli.get("model")
    if model is not None and preset.get("model") and not _same_model(model, preset["model"]):
        for key in MODEL_SPECIFIC:
            if key in preset and key not in cli:
                value = preset[key] if key != "rope_scaling" else "{...}"
                raise UsageError(
                    f"{origins[key]} = {value!r} belongs to the preset's model "
                    f"{preset['model']}, but the command line plans {model}: {key} describes "
                    "one checkpoint and would be applied to another.",
                    hint=f"Give {flag_of(key)} for {model} on the command line (it overrides "
                         f"the preset), drop {key} from a copy of {shown(path)}, or plan the "
                         "preset's own model.", fields=(key,))
    typed = {k for k in cli if k not in ("model", "config")}
    for group in TARGETS:                    # --system on the command line replaces hardware
        if typed & set(group):
            for other in (g for g in TARGETS if g is not group):
                for key in other:
                    if key in out and key not in cli:
                        flags = ", ".join(flag_of(k) for k in group if k in cli)
                        _note(f"{origins[key]} = {out.pop(key)!r} is not used: the command "
                              f"line names the accelerators ({flags}).")
    if "tp" in cli and "engine_tp" in out and "engine_tp" not in cli:
        _note(f"{flag_of('tp')} {cli['tp']} on the command line replaces {origins['engine_tp']} "
              f"= {out.pop('engine_tp')} for the engine check too.")
    for key, value in cli.items():
        if key in out and key != "config" and not _same(key, out[key], value):
            what = "model" if key == "model" else f"{flag_of(key)} {value}"
            _note(f"{what} on the command line replaces {origins.get(key, key)} = {out[key]!r}.")
    return out


def _same_model(a: str, b: str) -> bool:
    try:
        return a == b or expand_user(a).resolve() == expand_user(b).resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def _same(key: str, a, b) -> bool:
    if key == "context":
        from ..planner.context import parse_context
        try:
            return parse_context(a) == parse_context(b)
        except KvfitError:
            return False
    if key == "model":
        return _same_model(str(a), str(b))
    return a == b or str(a) == str(b)


def _stderr_note(text: str) -> None:
    """A note as the CLI shows it: one line on stderr."""
    from ..textsafe import safe
    print(safe(f"kvfit: note: {text}", keep_newlines=False), file=sys.stderr)


@contextmanager
def explained(origins: dict[str, str], cli: dict, values: dict):
    """Errors about a value the preset gave (named by its flag, or quoted) name the preset key
    and file:line as well: the user never typed that flag."""
    try:
        yield
    except KvfitError as err:
        from ..numbers import shown as quote

        found = []
        for key, origin in origins.items():
            if key in cli or key not in values or origin in err.message:
                continue
            value = values[key]
            flag = re.search(re.escape(flag_of(key)) + r"(?![\w-])", err.message)
            quoted = isinstance(value, (str, int, float)) and not isinstance(value, bool) and \
                len(str(value)) > 1 and f"'{value}'" in err.message
            if flag or quoted:
                found.append(f"{origin} = {quote(value)}"
                             + (f" (read as {flag_of(key)})" if flag else ""))
        if found:
            err.message = f"{'; '.join(found)}: {err.message}"
        raise


def wants_json(argv: list[str]) -> bool:
    """Does the plan's preset (a *.toml model or --config FILE) set [output] json = true? Read
    again, quietly, only to shape an error."""
    for i, arg in enumerate(argv):
        name = arg.partition("=")[2] if arg.startswith("--config=") else (
            argv[i + 1] if arg == "--config" and i + 1 < len(argv) else
            arg if arg.endswith(".toml") and (i == 0 or argv[i - 1] != "--config") else None)
        if not name:
            continue
        try:
            path = Path(name)
            if path.is_file() and path.stat().st_size <= MAX_PRESET_BYTES:
                out = tomllib.loads(path.read_text(encoding="utf-8")).get("output")
                return isinstance(out, dict) and out.get("json") is True
        except (OSError, ValueError, tomllib.TOMLDecodeError, RecursionError):
            return False
    return False


def _rope(value, at: str) -> dict:
    """rope_scaling as a table, an inline table or a JSON string -> the request's knob."""
    from ..planner.rope import parse_rope
    return {"rope_scaling": parse_rope(value, f"preset rope_scaling ({at})"),
            "rope_scaling_source": "preset rope_scaling"}


def _check_list(names: list[str], at: str) -> str:
    """[engine] check = ["vllm"] / ["vllm", "sglang"] -> vllm / all."""
    from ..preflight.options import probed

    checks = probed()
    bad = [n for n in names if n not in (*checks, "all")]
    if bad or not names:
        raise UsageError(f"preset key 'engine.check' ({at}) lists {bad or 'no engine'}: use vllm, "
                         "sglang or all (a string, or a list such as [\"vllm\"]).")
    chosen = set(names)
    return "all" if "all" in chosen or chosen == set(checks) else names[0]
