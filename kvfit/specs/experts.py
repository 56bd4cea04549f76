"""The routed experts of an architecture spec (its optional `experts:` block), compiled."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..expr import Expr


@dataclass(frozen=True, slots=True)
class Experts:
    """Routed-expert tensors: a name pattern whose group `expert` is the expert index."""

    pattern: re.Pattern
    count: Expr
