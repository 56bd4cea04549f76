"""Stored bytes of quantized linear weights by format (specs/quant/weight_storage.yaml)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import KvfitError
from ..expr import Expr, ExprError, compile_expr
from ..paths import data_root

_FILE = Path("specs") / "quant" / "weight_storage.yaml"
NAMES = frozenset({"rows", "cols", "group", "block_rows", "block_cols", "bits"})


@lru_cache(maxsize=1)
def formats() -> dict[str, tuple[Expr, tuple[str, ...], str]]:
    """weight_algorithm -> (bytes expression, needed declarations, basis)."""
    from ..specs import cache as spec_cache
    from ..specs.checked import load_checked

    path = data_root() / _FILE
    if not path.is_file():
        raise KvfitError(f"kvfit data file {_FILE.as_posix()} is missing; reinstall kvfit.")
    doc, problems, key = load_checked(path, "weight-storage.v1.schema.json")
    if doc is None or problems:
        from ..errors import SpecError
        raise SpecError(problems)
    out = {}
    for name, raw in doc.data["formats"].items():
        try:
            expr = compile_expr(raw["bytes"], NAMES)
        except ExprError as exc:
            raise KvfitError(f"{_FILE.as_posix()}: format {name}: {exc.message}.") from None
        out[name] = (expr, tuple(raw.get("needs", ())), raw["basis"])
    if key is not None:
        spec_cache.put(key, doc.data)
    return out


def source() -> str:
    return _FILE.as_posix()
