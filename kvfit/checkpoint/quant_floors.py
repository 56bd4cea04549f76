"""Published runtime planning floors (specs/quant/runtime_floors.yaml), e.g. gpt-oss MXFP4."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import KvfitError
from ..paths import data_root

_FLOORS = Path("specs") / "quant" / "runtime_floors.yaml"


def _data_path() -> Path:
    """specs/quant/runtime_floors.yaml under the data root (the wheel's bundle or the repo)."""
    path = data_root() / _FLOORS
    if not path.is_file():
        raise KvfitError(f"kvfit data file {_FLOORS.as_posix()} is missing; reinstall kvfit.")
    return path


@lru_cache(maxsize=1)
def _floors() -> tuple[tuple[str, dict, float, str], ...]:
    """Runtime-floor rules (id, match, floor in GiB, basis) from the YAML data file."""
    from ..specs import cache as spec_cache
    from ..specs.checked import load_checked

    doc, problems, key = load_checked(_data_path(), "runtime-floors.v1.schema.json")
    if doc is None or problems:
        from ..errors import SpecError
        raise SpecError(problems)
    if key is not None:
        spec_cache.put(key, doc.data)
    data = doc.data
    try:
        return tuple((r["id"], dict(r["match"]), float(r["floor_gib"]), str(r["basis"]))
                     for r in data["floors"])
    except (KeyError, TypeError, ValueError) as exc:
        raise KvfitError(f"{_FLOORS.as_posix()} is malformed ({exc!r}): every entry of "
                         "`floors` needs id, match, floor_gib and basis.") from None


def runtime_floor(config: dict, qc: dict | None, quantized: bool) -> tuple:
    """(floor in GiB, basis text) from the first rule whose match keys all hold exactly."""
    facts = {"model_type": config.get("model_type"), "quantized": quantized,
             "num_hidden_layers": config.get("num_hidden_layers"),
             "quant_method": qc.get("quant_method") if qc else None}
    for rule_id, match, floor_gib, basis in _floors():
        if all(k in facts and facts[k] == v and type(facts[k]) is type(v)
               for k, v in match.items()):
            why = ", ".join(f"{k}={v}" for k, v in sorted(match.items()))
            return floor_gib, f"{_FLOORS.as_posix()} {rule_id}: {why} -> {floor_gib:g} GiB; {basis}"
    return None, None
