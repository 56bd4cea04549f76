"""The calibration document: assembled, redacted, validated, written atomically, rendered.

Schema: schemas/calibration.schema.json. Every measured number sits under `points[]` or
`result` with provenance "host measurement"; the plan's numbers stay under `plan` as
predictions.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import KvfitError, UsageError
from ..paths import schema_path

VERSION = 1


def redact(obj, secrets: dict):
    """`obj` with every secret value replaced by <redacted $ENV> (strings, lists, dicts)."""
    if isinstance(obj, str):
        for value, env in secrets.items():
            obj = obj.replace(value, f"<redacted ${env}>")
        return obj
    if isinstance(obj, list | tuple):
        return [redact(v, secrets) for v in obj]
    if isinstance(obj, dict):
        return {k: redact(v, secrets) for k, v in obj.items()}
    return obj


def plan_section(dep) -> dict:
    """The prediction under test, from the kvfit plan."""
    rep = dep.report
    return {"provenance": "kvfit plan (prediction)", "model": dep.model,
            "revision": dep.revision, "context_tokens": dep.context, "kv_dtype": dep.kv_dtype,
            "layout": dep.layout, "tp": dep.tp, "dp": dep.dp, "hardware": dep.hardware,
            "nodes": dep.nodes, "fits": rep.get("fits"),
            "predicted_boundary": dep.predicted,
            "predicted_basis": "the recommended layout's max resident sequences at the "
                               "context, summed over DP replicas (static counted-state bound)",
            "engine_prediction": dep.engine_prediction}


def workload(cal, dep) -> dict:
    """The exact random workload every point offers."""
    from .bench import SEED
    return {"dataset": "random", "input_tokens": dep.context - cal.output_tokens,
            "output_tokens": cal.output_tokens, "length_variation": 0,
            "requests_per_concurrency": cal.requests_per_concurrency, "seed": SEED}


def document(head: dict, body: dict, secrets: dict) -> dict:
    """The full, redacted document (head: status, preset, mode, engine ...; body: the rest)."""
    doc = {"calibration_version": VERSION} | head | body
    return redact(doc, secrets)


def validate(doc: dict) -> None:
    """Raise when the document does not match schemas/calibration.schema.json (a kvfit bug)."""
    import jsonschema
    schema = json.loads(schema_path("calibration.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)


def write_atomic(path: Path, doc: dict) -> None:
    """Write the JSON record through kvfit.atomic (a temporary file beside `path`, synced to
    disk, then renamed into place)."""
    from ..atomic import write_bytes

    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--output {path}: the folder {folder} does not exist.")
    data = render_json(doc).encode("utf-8")          # NaN / Infinity refused
    write_bytes(folder / path.name, data, fsync=True)


def render_json(doc: dict) -> str:
    """The document as stable JSON text."""
    try:
        return json.dumps(doc, indent=2, sort_keys=True, allow_nan=False) + "\n"
    except ValueError as exc:  # NaN or Infinity: JSON cannot carry them
        raise KvfitError(f"the calibration record holds a number JSON cannot carry ({exc}); a "
                         "measured input was not finite.") from None


def _precision(cal, dep, run: dict) -> dict:
    from ..engines.command import engine_spelling
    from .metrics import cache_dtype
    info = run["endpoint_meta"].get("server_info") or {}
    reported = cache_dtype(run["metrics_before"], cal.engine) or info.get("kv_cache_dtype")
    launched = cal.mode == "launch" and cal.server_command is None
    status = ("reported by the server" if reported else
              "set by the launch command" if launched else "unverified")
    try:
        names = {dep.kv_dtype, engine_spelling(run["rules"], dep.kv_dtype)}
    except KvfitError:
        names = {dep.kv_dtype}
    agrees = None if reported in (None, "auto") else reported in names
    if agrees is False:
        run["warnings"].append(f"the server reports KV cache dtype {reported}; the plan "
                               f"assumed {dep.kv_dtype}: the measurement is not of the plan.")
    return {"planned": dep.kv_dtype, "reported": reported, "status": status, "agrees": agrees}


def _topology(cal, dep, run: dict) -> dict:
    info = run["endpoint_meta"].get("server_info") or {}
    reported = {k: info[k] for k in ("tp_size", "dp_size") if isinstance(info.get(k), int)}
    launched = cal.mode == "launch" and cal.server_command is None
    status = ("reported by the server" if reported else
              "set by the launch command" if launched else "unverified")
    return {"planned": {"tp": dep.tp, "dp": dep.dp, "nodes": dep.nodes},
            "reported": reported or None, "status": status}


def endpoint_section(cal, dep, run: dict) -> dict:
    """What the endpoint reported about itself, and what stays unverified."""
    meta = run["endpoint_meta"]
    ready = (run.get("server") or {}).get("ready_after_s", run.get("ready_after_s"))
    return {"base_url": cal.base_url, "ready_after_s": ready, "models": meta["models"],
            "version": meta["version"], "version_source": meta["version_source"],
            "cache_precision": _precision(cal, dep, run), "topology": _topology(cal, dep, run)}
