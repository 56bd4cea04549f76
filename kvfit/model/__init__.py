"""The typed report model: frozen, slotted, keyword-only dataclasses whose attribute names are
the JSON keys of `schemas/report.schema.json`. Pure data: no sentences, no rendering.

Split by seam so that a plan imports only the parts it builds; import the submodule you use:
  base      ABSENT, Frozen, freeze, to_plain, Part
  plan      the plan core: model, architecture, state, hardware, layouts, Report
  summary   a layout's short form (recommended, best_*), shared with search and sweep
  layout    a layout's optional parts: pipeline, engine layout rules, static bound, copies
  sections  optional report sections: RoPE, detected GPUs, expert parallelism, headers, draft
  engine    an engine's prediction (built by kvfit.engines) and the launch command
  search    the --systems search and the inverse questions
  sweep     a --sweep's cells and the memory bars
  tune      --tune's settings

This package imports none of them; `part(name)` finds a part's class by name (the report's
annotations are strings naming classes of other submodules), importing only its submodule.
"""

from __future__ import annotations

from importlib import import_module

# {class name: the submodule defining it}; tests/test_model_package.py keeps it complete
HOME = {
    **dict.fromkeys(("ModelInfo", "ArchField", "LayerSet", "Architecture", "Dtype", "Dtypes",
                     "StateComponent", "State", "WeightBytes", "Quantization", "Target",
                     "Hardware", "PerRank", "Layout", "BasisComparison",
                     "CapacityModel", "Suggestion", "Report"), "plan"),
    "LayoutSummary": "summary",
    **dict.fromkeys(("PipelineStage", "Pipeline", "EngineConstraint", "StaticBound",
                     "StateCopies"), "layout"),
    **dict.fromkeys(("RopeScaling", "DetectedGpu", "DetectedHardware", "ExpertParallel",
                     "Headers", "SpeculativeDraft"), "sections"),
    **dict.fromkeys(("Quantity", "Refusal", "BlockGroup", "HybridPages", "FittedRegime",
                     "EngineMemory", "EngineStage", "EngineStages", "PoolCells", "EnginePrediction",
                     "HostLaunch", "EngineCommand"), "engine"),
    **dict.fromkeys(("OtherBasis", "SearchCandidate", "Search", "ContextRow", "Inverse"),
                    "search"),
    **dict.fromkeys(("MemoryBars", "SweepLayout", "SweepCell", "SweepAxis", "Sweep"), "sweep"),
    **dict.fromkeys(("TuneValue", "TuneSetting", "Tune"), "tune"),
}
SUBMODULES = ("base", "plan", "summary", "layout", "sections", "engine", "search", "sweep", "tune")


def part(name: str):
    """The model class called `name` (its submodule imported on first use)."""
    return getattr(import_module(f"{__name__}.{HOME[name]}"), name)
