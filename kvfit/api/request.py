"""The PlanRequest a plan's parsed options (and an optional preset) make, and a plan's exit
code: shared by the single plan, --sweep and `kvfit fit`, from the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path


def request_from(ns: dict, note=None):
    """The PlanRequest from the parsed flags (engine spellings resolved) and an optional preset
    (kvfit.api.preset.merge: the command line wins, and says so through `note`, a function of
    the text; default: a line on stderr)."""
    from ..planner.request import PlanRequest, normalize_tp
    from ..planner.spellings import resolve

    knobs = resolve(ns)
    values: dict = {}
    preset = ns.pop("config", None)
    model = ns.get("model")
    if preset is None and model and model.endswith(".toml"):
        preset = ns.pop("model")
    origins: dict = {}
    if preset:
        from . import preset as presets
        loaded, origins = presets.read_preset(Path(preset), note=note)
        cli = ns | {k: v for k, v in knobs.items() if v not in (None, {}, [])}
        values |= presets.merge(Path(preset), loaded, origins, cli, note)
        values["input_config"] = preset
        with presets.explained(origins, cli, values):
            return _build(PlanRequest, normalize_tp, values, ns, knobs, origins)
    return _build(PlanRequest, normalize_tp, values, ns, knobs, origins)


def _build(request, normalize_tp, values: dict, ns: dict, knobs: dict, origins: dict):
    values |= ns
    values |= {k: v for k, v in knobs.items() if v is not None or k not in values}
    req = request(**normalize_tp(values))
    req.origins = {k: v for k, v in origins.items() if k not in ns}
    return req


def planned(req, run):
    """run() with errors about a preset's value naming its key and file:line."""
    if not req.origins:
        return run()
    from .preset import explained
    with explained(req.origins, {}, vars(req)):
        return run()


# Exit codes of a plan (documented in the README and `kvfit --help`).
FITS, NOT_MET, NOT_JUDGED = 0, 1, 5


def verdict_code(report) -> int:
    """0 the target fits; 1 it does not (or nothing fits); 5 the fit could not be judged
    (weights unknown, or no hardware given: a state-only report)."""
    return {True: FITS, False: NOT_MET}.get(report.fits, NOT_JUDGED)
