"""What every target raises when an answer breaks an invariant, and the checks they share."""

from __future__ import annotations


class Wrong(Exception):
    """An answer that breaks an invariant (a silent wrong answer)."""


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise Wrong(what)


def _whole(v) -> bool:
    return type(v) is int and v >= 0
