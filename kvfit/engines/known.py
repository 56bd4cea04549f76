"""Which engines kvfit knows: the bundled specs (specs/engines/<id>.yaml) and the ones added by
kvfit.engines.register, by id."""

from __future__ import annotations

REFERENCE = "vllm"      # whose rules the static bound's `--kv-dtype auto` follows, listed first
STATIC_DPA = "sglang-dpa"   # the attention-DP mode a plan without an engine suggests
_REGISTERED: dict = {}      # id -> spec path, added by add()


def _builtin() -> dict:
    """id -> spec path of the bundled engine specs."""
    from ..paths import specs_dir
    return {p.stem: p for p in sorted(specs_dir("engines").glob("*.yaml"))
            if not p.name.startswith("_")}


def names() -> tuple[str, ...]:
    """The known engine ids: the reference engine, the other bundled specs by id, then the
    registered ones in registration order."""
    found = _builtin()
    first = [REFERENCE] if REFERENCE in found else []
    return (*first, *(n for n in found if n != REFERENCE),
            *(n for n in _REGISTERED if n not in found))


def engine_choices() -> str:
    """'--engine vllm or --engine sglang': every known engine, for hints."""
    return " or ".join(f"--engine {n}" for n in names())


def spec_path(name: str):
    """The spec file of engine `name`, or None when no such engine is known."""
    return _REGISTERED.get(name) or _builtin().get(name)


def add(name: str, path) -> None:
    """Know engine `name` by its spec file `path` (kvfit.engines.register validates it first)."""
    _REGISTERED[name] = path


def remove(name: str) -> None:
    """Forget an engine added by add()."""
    _REGISTERED.pop(name, None)
