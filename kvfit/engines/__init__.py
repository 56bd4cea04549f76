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
     `id` is the spec's id; its `predict` builds the typed prediction
     (kvfit.model.engine.EnginePrediction, via kvfit.engines.common.prediction and `num`),
     its own numbers beyond the model's fields in `more`.
A spec file in specs/engines/ is discovered by its file name (`--engine <id>`); a spec kept
elsewhere (a plugin, a test) is added with `register(path)`, which validates it and makes its
id known to every front end of this process. Its module is imported when the engine is first
used.
"""

from __future__ import annotations

from .cli_args import engine_args, pop_engine_args
from .known import REFERENCE, STATIC_DPA, engine_choices, names, spec_path
from .registry import (
    engines,
    get,
    parallelism,
    parallelisms,
    predict,
    predict_inputs,
    register,
    resolve_rules,
    resolve_version,
    unregister,
)

__all__ = ["REFERENCE", "STATIC_DPA", "Inputs", "engine_args", "engine_choices", "engines", "get",
           "names", "parallelism", "parallelisms", "pop_engine_args", "predict", "predict_inputs",
           "print_command", "register", "resolve_rules", "resolve_version", "spec_path",
           "unregister"]


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
