"""One entry from a config to its matched spec, resolved fields and layer sets."""

from __future__ import annotations

from dataclasses import dataclass

from ..specs.architecture import Architecture
from ..specs.registry import builtin_architecture, builtin_matchers, watchlist
from .evaluate import check_requirements
from .fields import Resolved, resolve_fields
from .layers import evaluate_layers
from .match import reject_unhandled, select


@dataclass(frozen=True, slots=True)
class Resolution:
    """The matched spec, where its fields were read, their values, and the layer schedule."""

    arch: Architecture
    root: dict
    root_name: str
    fields: dict[str, Resolved]
    values: dict
    n_layers: int
    sets: dict[str, list[int]]
    # the whole config (root is the config_root part of it, when the spec names one)
    config: dict | None = None

    @property
    def prefix(self) -> str:
        return f"{self.root_name}." if self.root_name else ""


def resolve_architecture(config: dict) -> Resolution:
    """Match `config` to a spec (failing closed), resolve its fields and check its schedule."""
    arch, root, root_name = select(config, builtin_matchers(), watchlist(), builtin_architecture)
    reject_unhandled(arch, root, root_name, watchlist())
    fields = resolve_fields(arch, root, f"{root_name}." if root_name else "")
    check_requirements(arch, fields)
    values = {k: r.value for k, r in fields.items() if r.value is not None}
    n_layers, sets = evaluate_layers(arch, values)
    return Resolution(arch, root, root_name, fields, values, n_layers, sets, config)
