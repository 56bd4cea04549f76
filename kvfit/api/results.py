"""The API's typed results other than a plan's Report (kvfit.model): frozen, and
to_json() is the JSON the CLI prints for the same question (`kvfit fit --json`,
`kvfit explain-log --json`, `--list-hardware --json`, `--list-systems --json`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ..model.base import ABSENT, Frozen, freeze, to_plain

RESULT = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**RESULT)
class Result:
    """A JSON-shaped answer: its fields are the JSON's keys, in the CLI's order; `more` holds
    keys a newer kvfit adds (inline in the JSON)."""

    more: Frozen = field(default_factory=Frozen)

    @classmethod
    def of(cls, data: dict):
        """The result holding `data` (dicts frozen, lists made tuples)."""
        names = {f.name for f in fields(cls)} - {"more"}
        return cls(**{k: freeze(v) for k, v in data.items() if k in names},
                   more=Frozen({k: v for k, v in data.items() if k not in names}))

    def to_json(self) -> dict:
        plain = to_plain(self)                      # `more` inline, first
        order = [f.name for f in fields(self) if f.name != "more"] + list(self.more)
        return {k: plain[k] for k in order if k in plain}


@dataclass(**RESULT)
class FitResult(Result):
    """`kvfit fit`: which checkpoints meet the target on the hardware. rows: status ->
    rows (fits best first; does_not_fit, not_judged, refused); counts: status -> count;
    plan_flags: the single-plan flags each row was planned with (verify: that command)."""

    fit_version: int = ABSENT
    plan_flags: tuple[str, ...] = ABSENT
    detected_hardware: str | None = ABSENT
    verify: str = ABSENT
    target: Frozen | None = ABSENT
    planned: int = ABSENT
    counts: Frozen = ABSENT
    rows: Frozen = ABSENT

    @property
    def exit_code(self) -> int:
        """0 some checkpoint fits, 1 none does."""
        return 0 if self.counts["fits"] else 1


@dataclass(**RESULT)
class ExplainResult(Result):
    """`kvfit explain-log`: the engine, version and model a start-up log names, and each
    printed number beside kvfit's prediction (rows), with notes."""

    engine: str = ABSENT
    version: str = ABSENT
    version_basis: str = ABSENT
    rules_range: str = ABSENT
    model: str | None = ABSENT
    architecture: str = ABSENT
    config: str = ABSENT
    tp: int = ABSENT
    tp_basis: str = ABSENT
    kv_dtype: str = ABSENT
    max_model_len: int = ABSENT
    rows: tuple[Frozen, ...] = ABSENT
    notes: tuple[str, ...] = ABSENT

    @property
    def exit_code(self) -> int:
        """0: the log was compared (a log that cannot be is an error)."""
        return 0


@dataclass(**RESULT)
class Listing:
    """Rows of a listing (accelerators, systems, catalog entries): iterable; to_json() is
    the list of their JSON objects."""

    rows: tuple[Frozen, ...]

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    @property
    def exit_code(self) -> int:
        return 0

    def to_json(self) -> list:
        return to_plain(self.rows)
