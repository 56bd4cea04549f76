"""Which concurrency points the sweep offers, and why."""

from __future__ import annotations

from ..errors import UsageError

LIMIT = 4096          # more points or concurrency than this is a typo, not a sweep


def _powers(top: int) -> list[int]:
    out, n = [], 1
    while n <= top:
        out.append(n)
        n *= 2
    return out


def choose(explicit: tuple | None, max_concurrency: int | None,
           predicted: int | None) -> tuple[list[int], str, list[str]]:
    """(points ascending, how they were chosen, notes).

    explicit: calibration.concurrency (used as given). Otherwise powers of two up to
    max_concurrency plus the predicted boundary when it is within the cap; without
    max_concurrency the cap is the first power of two above the predicted boundary, so the
    sweep offers more than the plan says fits.
    """
    notes: list[str] = []
    if explicit:
        points = sorted(set(explicit))
        if points[-1] > LIMIT:
            raise UsageError(f"calibration.concurrency {points[-1]} is above {LIMIT}.")
        if max_concurrency is not None and points[-1] > max_concurrency:
            raise UsageError(f"calibration.concurrency {points[-1]} is above max_concurrency "
                             f"{max_concurrency}.")
        return points, "explicit list (calibration.concurrency)", notes
    top = max_concurrency
    if top is None:
        if not predicted:
            raise UsageError("the plan predicts no resident sequence, so there is no boundary "
                             "to sweep to; set calibration.max_concurrency or concurrency.")
        top = 1 << predicted.bit_length()        # first power of two above the boundary
        notes.append(f"max_concurrency defaulted to {top}, the first power of two above the "
                     f"predicted boundary {predicted}.")
    if top > LIMIT:
        raise UsageError(f"calibration.max_concurrency {top} is above {LIMIT}.")
    points = set(_powers(top))
    how = f"powers of two up to max_concurrency {top}"
    if predicted and predicted <= top:
        points.add(predicted)
        how += f" plus the predicted boundary {predicted}"
    elif predicted:
        notes.append(f"the predicted boundary {predicted} is above max_concurrency {top}; it "
                     "is not offered.")
    return sorted(points), how, notes
