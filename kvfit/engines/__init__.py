"""Engine-faithful capacity: what a serving engine (vLLM, SGLang, ...) will allocate, before
any weight loads.

    section = predict("vllm", "0.33.0", {"max_model_len": 131072}, components, tp=1,
                      weights_bytes_per_rank=..., memory_bytes_per_gpu=..., context=131072,
                      quant=summary)   # kvfit.checkpoint.quant.summarize(meta).to_json()

Rules are data (specs/engines/<engine>.yaml, by version range); their meaning is code here:
pages.py (cache layers, groups, padding), vllm.py, sglang.py (budgets and capacity),
budget.py (fitted non-KV estimates). Every number in the result carries a `basis`.

The engine seam: everything outside this package asks an engine through the interface in
kvfit.engines.base (`Engine`), never by comparing its name. `get(name)` returns the engine a
request names, `names()` lists the known ones, `parallelism(name)` finds the engine mode behind
a `--parallelism` name.

Adding an engine is one spec file plus one module:
  1. specs/engines/<id>.yaml, valid against schemas/engine.v1.schema.json, whose `module` key
     names the Python module implementing it (e.g. `module: kvfit.engines.vllm_engine`);
  2. that module defines `ENGINE`, an instance of a kvfit.engines.base.Engine subclass whose
     `id` is the spec's id.
A spec file in specs/engines/ is discovered by its file name (`--engine <id>`); a spec kept
elsewhere (a plugin, a test) is added with `register(path)`, which validates it and makes its
id known to every front end of this process. Its module is imported when the engine is first
used.
"""

from __future__ import annotations

from .cli_args import engine_args, pop_engine_args

__all__ = ["Inputs", "engine_args", "get", "names", "parallelism", "parallelisms", "pop_engine_args",
           "predict", "predict_inputs", "print_command", "register", "resolve_rules",
           "resolve_version", "spec_path"]

REFERENCE = "vllm"      # whose rules the static bound's `--kv-dtype auto` follows, listed first
STATIC_DPA = "sglang-dpa"   # the attention-DP mode a plan without an engine suggests
_REGISTERED: dict = {}      # id -> spec path, added by register()
_ENGINES: dict = {}         # id -> Engine, once imported


def _builtin() -> dict:
    """id -> spec path of the bundled engine specs."""
    from ..paths import specs_dir
    return {p.stem: p for p in sorted(specs_dir("engines").glob("*.yaml"))
            if not p.name.startswith("_")}


def names() -> tuple[str, ...]:
    """The known engine ids: the reference engine, the other bundled specs by id, then the
    registered ones in registration order."""
    found = _builtin()
    first = [REFERENCE] if REFERENCE in found else []
    return (*first, *(n for n in found if n != REFERENCE),
            *(n for n in _REGISTERED if n not in found))


def engine_choices() -> str:
    """'--engine vllm or --engine sglang': every known engine, for hints."""
    return " or ".join(f"--engine {n}" for n in names())


def spec_path(name: str):
    """The spec file of engine `name`, or None when no such engine is known."""
    return _REGISTERED.get(name) or _builtin().get(name)


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
    _REGISTERED[name] = path
    _ENGINES.pop(name, None)
    from .spec import load_spec
    load_spec.cache_clear()
    return name


def unregister(name: str) -> None:
    """Forget an engine added by register()."""
    _REGISTERED.pop(name, None)
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


def __getattr__(name: str):
    """print_command loads the command spellings only when a command is printed, Inputs (the
    prediction's inputs) only when an engine predicts: the plan parser imports this package
    for its engine flags."""
    if name == "print_command":
        from .command import print_command
        return print_command
    if name == "Inputs":
        from .common import Inputs
        return Inputs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def predict_inputs(engine: str, version: str | None, flags: dict, inp) -> dict:
    """The `engine` section for one layout from prepared inputs (a kvfit.engines.common.Inputs)."""
    rules, how = resolve_rules(engine, version)
    body = get(engine).predict(rules, dict(flags), inp)
    return {"engine": engine, "version": rules.version, "version_basis": how,
            "rules_range": rules.label, "evidence": list(rules.evidence), "tp": inp.tp,
            "per": "one engine instance (one DP replica); every number is per GPU of it",
            "metrics": rules.metrics, **body}


def predict(engine: str, version: str | None, flags: dict, components: list, tp: int,
            weights_bytes_per_rank: int | None, memory_bytes_per_gpu: int, context: int,
            quant: dict | None, **extra) -> dict:
    """JSON-ready prediction of `engine` at `version` for one TP layout.

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
    return predict_inputs(engine, version or at, flags, inp)
