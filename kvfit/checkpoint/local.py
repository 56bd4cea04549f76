"""A checkpoint on local disk: a directory with config.json, or a path to a config.json."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, UsageError
from .jsonfile import read_json
from .metadata import FileEntry, Metadata

WEIGHT_SUFFIXES = (".safetensors", ".gguf", ".bin", ".pt", ".pth")
MAX_FILES = 20_000


def _optional_json(directory: Path, name: str):
    path = directory / name
    if not path.is_file():
        return None
    data = read_json(path, name)
    if not isinstance(data, dict):
        raise ConfigError(f"{name} must hold a JSON object.")
    return data


def _files(directory: Path) -> tuple[FileEntry, ...]:
    out = []
    for p in sorted(directory.rglob("*")):
        if len(out) >= MAX_FILES:
            break
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(directory).parts):
            out.append(FileEntry(p.relative_to(directory).as_posix(), p.stat().st_size))
    return tuple(out)


def load_local(path: Path) -> Metadata:
    """Metadata for a local directory (or config.json path); sizes from the files themselves."""
    if path.is_file():
        if path.suffix != ".json":
            raise UsageError(f"'{path.name}' is neither a directory nor a config.json.",
                             hint="Pass the checkpoint directory, its config.json, or a Hub id.")
        directory, config_path = path.parent, path
    elif path.is_dir():
        directory, config_path = path, path / "config.json"
    elif path.exists():                  # a device, a pipe or a socket (/dev/zero)
        raise UsageError(f"'{path}' is not a regular file or a directory.",
                         hint="Pass the checkpoint directory, its config.json, or a Hub id.")
    else:
        raise UsageError(f"no such file or directory: {path}")
    if not config_path.is_file():
        raise ConfigError(f"'{directory.name or directory}' has no config.json.",
                          hint="kvfit reads the checkpoint's config.json to identify its architecture.")
    config = read_json(config_path, config_path.name)
    if not isinstance(config, dict):
        raise ConfigError(f"{config_path.name} must hold a JSON object.")
    name = directory.resolve().name
    return Metadata(
        source=name, origin="local", config=config,
        quant_config=_optional_json(directory, "hf_quant_config.json"),
        safetensors_index=_optional_json(directory, "model.safetensors.index.json"),
        files=_files(directory) if path.is_dir() else (),
        notes=(f"local directory '{name}'",))
