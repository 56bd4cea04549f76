"""The suggestions' re-plans of a local checkpoint reuse the plan's one read of it (--pp and
--parallelism keep the model: a local folder reads the same for either), so the per-checkpoint
work (kvfit.checkpoint.metadata.once: the spec match, the config-shape weight estimate) is done once.
A MiniMax-M3-NVFP4 folder, whose estimate walks 22,422 declared modules, planned 1.4 s before
and ~0.5 s after, with the same report (compared below against fresh reads)."""

from __future__ import annotations

from pathlib import Path

from kvfit.planner import build
from kvfit.planner.request import PlanRequest

MINIMAX = Path(__file__).resolve().parent / "architectures" / "minimax_m3" / "configs" / \
    "nvidia--MiniMax-M3-NVFP4"


def test_suggestions_reuse_the_local_read_and_answer_the_same(monkeypatch):
    reads = []
    real = build.load_metadata

    def counting(req):
        reads.append(req.model)
        return real(req)

    from kvfit.planner import suggest

    fresh_replanner, asked_for = suggest._replanner, []

    def noting(plan):
        replan = fresh_replanner(plan)

        def note(asked, meta=None, **changes):
            asked_for.append(sorted(changes))
            return replan(asked, meta, **changes)
        return note

    req = PlanRequest(model=str(MINIMAX), context="1m", hardware="h100-80", gpus=2)
    monkeypatch.setattr(build, "load_metadata", counting)
    monkeypatch.setattr(suggest, "_replanner", noting)
    shared = build.plan(req)
    # the plan's own read only; its re-plans (--pp 2 among them) took it as given
    assert reads == [str(MINIMAX)]
    assert ["pp", "tp"] in asked_for
    assert shared.fits is False and shared.suggestions

    def always_fresh(plan):                               # the re-plans as they were
        replan = fresh_replanner(plan)
        return lambda asked, meta=None, **changes: replan(asked, None, **changes)

    monkeypatch.setattr(suggest, "_replanner", always_fresh)
    reads.clear()
    again = build.plan(req)
    assert len(reads) > 1                                 # each re-plan read the folder again
    assert again == shared
