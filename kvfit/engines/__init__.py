"""Engine-faithful capacity: what vLLM or SGLang will allocate, before any weight loads.

    section = predict("vllm", "0.33.0", {"max_model_len": 131072}, components, tp=1,
                      weights_bytes_per_rank=..., memory_bytes_per_gpu=..., context=131072,
                      quant=summary)   # kvfit.checkpoint.quant.summarize(meta).to_json()

Rules are data (specs/engines/<engine>.yaml, by version range); their meaning is code here:
pages.py (cache layers, groups, padding), vllm.py, sglang.py (budgets and capacity),
budget.py (fitted non-KV estimates). Every number in the result carries a `basis`.
"""

from __future__ import annotations

from .cli_args import engine_args, pop_engine_args

__all__ = ["Inputs", "engine_args", "pop_engine_args", "predict", "predict_inputs",
           "print_command", "resolve_rules", "resolve_version"]


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
    from . import sglang, vllm
    rules, how = resolve_rules(engine, version)
    body = (vllm if engine == "vllm" else sglang).predict(rules, dict(flags), inp)
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
