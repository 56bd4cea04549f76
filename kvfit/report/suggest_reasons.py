"""The suggestions' facts (kvfit.planner.suggest) and their sentences: what a change to a
plan that does not fit would then hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from .words import count, number, tokens


@dataclass(frozen=True, slots=True)
class LayoutHolds:
    """A change and what the re-planned layout then holds: `{what}: {label} holds N
    sequences` (`what` names the change)."""

    what: str
    label: str
    sequences: int
    because: str = ""

    def __str__(self) -> str:
        out = f"{self.what}: {self.label} holds {count(self.sequences, 'sequence')}"
        return f"{out} ({self.because})" if self.because else out


@dataclass(frozen=True, slots=True)
class LongestContext:
    """The longest context at which `sequences` fit (`fp8`: with an fp8 KV cache)."""

    context: int
    sequences: int
    fp8: bool = False

    def __str__(self) -> str:
        if self.fp8:
            return (f"an fp8 KV cache with a context of {tokens(self.context)} (the longest at "
                    f"which {count(self.sequences, 'sequence')} then fit)")
        return (f"a context of {tokens(self.context)} (the longest at which "
                f"{count(self.sequences, 'sequence')} fit on these GPUs)")


@dataclass(frozen=True, slots=True)
class FewerUsers:
    """`users` users at `per_user` sequences each fit the `label` layout's `sequences`."""

    users: int
    per_user: int
    label: str
    sequences: int

    def __str__(self) -> str:
        return (f"{count(self.users, 'user')} at {count(self.per_user, 'sequence')} each: "
                f"{self.label} holds {number(self.sequences)}")


@dataclass(frozen=True, slots=True)
class FewerPerUser:
    """`per_user` resident sequences per user for `users` users."""

    per_user: int
    users: int

    def __str__(self) -> str:
        return (f"{count(self.per_user, 'resident sequence')} per user for "
                f"{count(self.users, 'user')}")
