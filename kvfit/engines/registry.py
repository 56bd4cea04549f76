"""An engine by its id (the Engine its spec's module defines), registering one more, and its
prediction for one layout through the Engine interface (kvfit.engines.base)."""

from __future__ import annotations

from . import known
from .known import names

_ENGINES: dict = {}         # id -> Engine, once imported


def register(path) -> str:
    """Make the engine specified by the spec file `path` known (its module is imported on first
    use); returns its id. A spec that is not valid raises SpecError."""
    from pathlib import Path

    from ..specs.checked import load_checked

    path = Path(path)
    doc, problems, _ = load_checked(path, "engine.v1.schema.json")
    if doc is None or problems:
        from ..errors import SpecError
        raise SpecError(problems)
    name = doc.data["id"]
    known.add(name, path)
    _ENGINES.pop(name, None)
    from .spec import load_spec
    load_spec.cache_clear()
    return name


def unregister(name: str) -> None:
    """Forget an engine added by register()."""
    known.remove(name)
    _ENGINES.pop(name, None)
    from .spec import load_spec
    load_spec.cache_clear()


def get(name: str):
    """The Engine (kvfit.engines.base) with spec id `name`; UsageError for an unknown one."""
    if name not in _ENGINES:
        from importlib import import_module

        from ..errors import UsageError
        from .spec import load_spec

        module = load_spec(name)["module"]          # UsageError when no spec has that id
        try:
            engine = import_module(module).ENGINE
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"engine {name!r}: its spec's module {module} cannot be used "
                             f"({exc}).", hint="The module must import and define ENGINE, an "
                             "instance of kvfit.engines.base.Engine.") from None
        if getattr(engine, "id", None) != name:
            raise UsageError(f"engine {name!r}: the ENGINE of {module} has id "
                             f"{getattr(engine, 'id', None)!r}, not the spec's id.")
        _ENGINES[name] = engine
    return _ENGINES[name]


def engines() -> list:
    """Every known engine, in names() order."""
    return [get(n) for n in names()]


def parallelism(name: str):
    """The DpaProfile of `--parallelism name`, or None (plain TP, or no engine has it)."""
    for n in names():
        profile = get(n).dpa
        if profile is not None and profile.name == name:
            return profile
    return None


def parallelisms() -> tuple[str, ...]:
    """Every engine's attention-DP mode name, sorted."""
    return tuple(sorted(e.dpa.name for e in engines() if e.dpa is not None))


def resolve_version(engine: str, version: str | None) -> tuple[str | None, str]:
    """(version, how it was chosen): requested, installed, or the spec default (assumed)."""
    from .spec import installed_version
    if version:
        return version, "requested"
    found = installed_version(engine)
    if found:
        return found, "installed"
    return None, "assumed: not requested and not installed; the spec's newest range"


def resolve_rules(engine: str, version: str | None, strict: bool = False):
    """(Rules, how the version was chosen) for `engine` at `version`: requested, installed or
    the spec default, and "extrapolated" when newer than every range kvfit knows."""
    from .spec import rules_for

    chosen, how = resolve_version(engine, version)
    rules = rules_for(engine, chosen, strict)
    if rules.extrapolated_from:
        how += (f"; extrapolated: newer than every range kvfit knows, the "
                f"{rules.extrapolated_from} rules")
    return rules, how


def predict_inputs(engine: str, version: str | None, flags: dict, inp):
    """The engine's prediction (kvfit.model.engine.EnginePrediction) for one layout from
    prepared inputs (a kvfit.engines.common.Inputs), with how its version was chosen."""
    from dataclasses import replace

    rules, how = resolve_rules(engine, version)
    return replace(get(engine).predict(rules, dict(flags), inp), version_basis=how)


def predict(engine: str, version: str | None, flags: dict, components: list, tp: int,
            weights_bytes_per_rank: int | None, memory_bytes_per_gpu: int, context: int,
            quant: dict | None, **extra) -> dict:
    """The JSON-ready prediction of `engine` at `version` for one TP layout (the typed one is
    predict_inputs').

    components: kvfit ComponentState list (evaluate them with the engine's KV dtype: see
      kvfit.engines.state.engine_state); weights_bytes_per_rank: checkpoint bytes one rank
      loads (None: unknown); memory_bytes_per_gpu: driver-visible bytes per GPU; context:
      the planned max_model_len; quant: the report's quantization summary.
    extra (optional): total_bytes/total_basis (torch-visible total, e.g. the hardware spec's
      CUDA total), vocab, weights_basis, weights_packed, overrides {activation, cudagraph,
      non_torch} in GiB, free_before_load_bytes, max_context (the config's declared maximum:
      a longer max_model_len is refused as the engines do).
    """
    from .common import Inputs
    from .spec import parse_engine

    engine, at = parse_engine(engine)
    inp = Inputs(list(components), tp, context, weights_bytes_per_rank, memory_bytes_per_gpu,
                 quant=quant, **extra)
    from ..model.base import to_plain
    return to_plain(predict_inputs(engine, version or at, flags, inp))
