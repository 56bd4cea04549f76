"""Select the architecture spec for a config by exact aliases, failing closed."""

from __future__ import annotations

from ..errors import ConfigError, UnsupportedArchitecture
from ..specs.architecture import Architecture


def _meaningful(value) -> bool:
    return value not in (None, False, 0, "", [], {})


def _state_keys(config: dict, watch: dict[str, str]) -> list[str]:
    roots = [("", config)] + [(f"{k}.", v) for k, v in config.items()
                              if k.endswith("_config") and isinstance(v, dict)]
    return sorted(f"{p}{k}" for p, d in roots for k in watch if _meaningful(d.get(k)))


def _by_model_type(config: dict, archs, watch: dict[str, str]) -> Architecture:
    mt = config["model_type"]
    for a in archs:
        if mt in a.model_types:
            return a
    state = _state_keys(config, watch)
    extra = (f" It declares state-changing fields ({', '.join(state)}) that no checked spec "
             "models for this type." if state else "")
    if isinstance(config.get("auto_map"), dict):
        classes = ", ".join(sorted(str(v) for v in config["auto_map"].values()))
        extra += (f" It declares custom remote code (auto_map: {classes}), which kvfit never "
                 "runs; no checked spec covers that class.")
    raise UnsupportedArchitecture(
        f"model_type '{mt}' is not covered by any architecture spec.{extra} kvfit does not "
        "apply the textbook KV formula to an architecture it has not checked.",
        hint="See `kvfit specs list` for supported families, or add a spec (README: "
             "'Adding an architecture').", fields=("model_type",) + (
            ("auto_map",) if "auto_map" in config else ()) + tuple(state))


def _by_architectures(config: dict, archs) -> Architecture:
    classes = config.get("architectures")
    if not isinstance(classes, list) or not classes:
        raise UnsupportedArchitecture(
            "the config has neither model_type nor architectures, so no spec can be chosen.",
            fields=("model_type", "architectures"))
    hits = {a.id: a for a in archs for c in classes if c in a.architectures}
    if len(hits) != 1:
        several = f"matches several specs ({', '.join(sorted(hits))})"
        what = several if hits else "is not covered by any spec"
        remote = " It declares custom remote code (auto_map), which kvfit never runs." if (
            "auto_map" in config) else ""
        raise UnsupportedArchitecture(
            f"the config has no model_type and its architectures {classes} {what}.{remote}",
            fields=("architectures",) + (("auto_map",) if remote else ()))
    return next(iter(hits.values()))


def select(config: dict, archs, watch: dict[str, str], load=None
           ) -> tuple[Architecture, dict, str]:
    """Return (spec, root dict fields are read from, root name or '') for a config.

    archs: compiled specs, or light matchers (id, model_types, architectures) together with
    `load(id)` that compiles the chosen one.
    """
    if not isinstance(config, dict):
        raise ConfigError("config.json must hold a JSON object.")
    mt = config.get("model_type")
    if mt is not None and not isinstance(mt, str):
        raise ConfigError(f"model_type must be a string, got {mt!r}.", fields=("model_type",))
    arch = _by_model_type(config, archs, watch) if mt else _by_architectures(config, archs)
    if load is not None:
        arch = load(arch.id)
    root, root_name = config, ""
    if arch.config_root and isinstance(config.get(arch.config_root), dict):
        root, root_name = config[arch.config_root], arch.config_root
        inner = root.get("model_type")
        if arch.text_model_types and inner not in arch.text_model_types:
            raise UnsupportedArchitecture(
                f"{root_name}.model_type is {inner!r}, which spec '{arch.id}' does not cover "
                f"(it accepts {', '.join(arch.text_model_types)}).",
                fields=(f"{root_name}.model_type",))
    return arch, root, root_name


def unhandled_state_keys(arch: Architecture, root: dict, watch: dict[str, str]) -> list[str]:
    """Watched state-changing keys present in the config that the spec neither reads nor ignores."""
    known = arch.read_keys()
    return sorted(k for k in watch if k in root and _meaningful(root[k]) and k not in known)


def reject_unhandled(arch: Architecture, root: dict, root_name: str, watch: dict[str, str]):
    """Fail closed when the config carries state fields the spec does not model."""
    keys = unhandled_state_keys(arch, root, watch)
    if keys:
        prefix = f"{root_name}." if root_name else ""
        detail = "; ".join(f"{prefix}{k} ({watch[k]})" for k in keys)
        raise UnsupportedArchitecture(
            f"spec '{arch.id}' matched, but the config declares state it does not model: "
            f"{detail}. kvfit refuses rather than guess.",
            hint="Extend the spec to read these fields, or list them under `ignores:` with a reason.",
            fields=tuple(prefix + k for k in keys))
