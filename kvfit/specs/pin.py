"""`kvfit specs pin`: copy a real model config into tests/architectures/<spec>/configs/ with
its provenance (SOURCES.yaml: where it came from, at which commit, and each file's sha256).

A source is a local folder or file (offline), or a Hugging Face repo id (`org/name`,
optionally `@revision`) read through the Hub client. Provenance is only ever what a source
states: the Hub's resolved commit, a folder's SOURCE.txt / SOURCES.yaml, a MANIFEST.json
beside it (the shared fixture set's), or --source-repo/--source-commit given by the user.
Nothing is guessed; a file whose origin is not stated is recorded as such.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..errors import UsageError
from ..paths import data_root

# The metadata files a plan reads; weights and tokenizers are never copied.
PINNED_FILES = ("config.json", "hf_quant_config.json", "quantization_config.json",
                "model.safetensors.index.json", "params.json", "original/config.json")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")
SHA = re.compile(r"^[0-9a-f]{40}$")


def project_root(start: Path | None = None) -> Path:
    """The checkout being edited: the nearest folder (from `start`, else the current
    directory) holding specs/architectures and tests/, else kvfit's own data root."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "specs" / "architectures").is_dir() and (folder / "tests").is_dir():
            return folder
    return data_root()


def folder_name(repo_id: str) -> str:
    return repo_id.replace("/", "--")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _local_files(src: Path) -> dict[str, bytes]:
    if src.is_file():
        if src.suffix != ".json":
            raise UsageError(f"{src} is not a JSON config file.")
        return {"config.json": src.read_bytes()}
    files = {rel: (src / rel).read_bytes() for rel in PINNED_FILES if (src / rel).is_file()}
    if "config.json" not in files:
        raise UsageError(f"{src} has no config.json to pin.")
    return files


def _stated_provenance(src: Path) -> tuple[str | None, dict[str, dict], str | None]:
    """(hf repo, {file: provenance fields}, SOURCE.txt text) stated by a local folder: its own
    SOURCES.yaml (a pinned copy), else MANIFEST.json beside it (the shared fixture set)."""
    folder = src if src.is_dir() else src.parent
    text = (folder / "SOURCE.txt").read_text() if (folder / "SOURCE.txt").is_file() else None
    sources = folder / "SOURCES.yaml"
    if sources.is_file():
        from ruamel.yaml import YAML
        doc = YAML(typ="safe").load(sources.read_text()) or {}
        files = {k: {x: y for x, y in v.items() if x != "sha256"}
                 for k, v in (doc.get("files") or {}).items() if isinstance(v, dict)}
        return doc.get("hf_repo"), files, text
    manifest = folder.parent / "MANIFEST.json"
    if manifest.is_file():
        rows = [m for m in json.loads(manifest.read_text()) if m.get("dir") == folder.name]
        files = {m["dest"]: {"source_repo": m["repo"], "source_path": m["path"],
                             "source_commit": m["commit"], "fidelity": m["fidelity"]}
                 for m in rows}
        return (rows[0]["hf"] if rows else None), files, text
    return None, {}, text


def _from_hub(ref: str) -> tuple[str, str, dict[str, bytes]]:
    """(repo id, resolved commit, files) of a Hub repo's pinned metadata files."""
    from ..hub.transport import HubClient

    repo_id, _, revision = ref.partition("@")
    with HubClient() as client:
        info = client.repo_info(repo_id, revision or None)
        present = {f.path for f in info.files}
        files = {rel: client.fetch(repo_id, info.sha, rel) for rel in PINNED_FILES
                 if rel in present}
    if "config.json" not in files:
        raise UsageError(f"{repo_id}@{info.sha[:12]} has no config.json to pin.")
    return repo_id, info.sha, files


def pin(spec_id: str, source: str, name: str | None = None, root: Path | None = None,
        hf_repo: str | None = None, source_repo: str | None = None,
        source_path: str | None = None, source_commit: str | None = None) -> Path:
    """Pin `source` for `spec_id`; returns the pinned folder."""
    if source_commit is not None and not SHA.fullmatch(source_commit):
        raise UsageError(f"--source-commit {source_commit!r} is not a full 40-character git sha.")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", spec_id):
        raise UsageError(f"{spec_id!r} is not a spec id (lower case letters, digits, - and _).")
    root = root or project_root()
    src = Path(source).expanduser()
    stated: dict[str, dict] = {}
    text = None
    if src.exists():
        files = _local_files(src)
        repo, stated, text = _stated_provenance(src)
        hf_repo = hf_repo or repo
        how = f"copied from {src.name if src.is_dir() else src.parent.name}, byte for byte"
        folder = name or (folder_name(hf_repo.split(" ")[0]) if hf_repo else
                          (src.name if src.is_dir() else src.parent.name))
    elif HUB_ID.fullmatch(source):
        hf_repo, commit, files = _from_hub(source)
        stated = {rel: {"hf_commit": commit} for rel in files}
        how = f"downloaded from the Hugging Face Hub at commit {commit}"
        folder = name or folder_name(hf_repo)
    else:
        raise UsageError(f"{source}: no such file or folder, and not a Hub repo id (org/name).")
    if source_repo or source_commit or source_path:
        stated = {rel: {k: v for k, v in (
            ("source_repo", source_repo),
            ("source_path", f"{source_path.rstrip('/')}/{rel}" if source_path else None),
            ("source_commit", source_commit)) if v} for rel in files}
    if not re.fullmatch(r"[\w.-]+(--[\w.-]+)?", folder):
        raise UsageError(f"{folder!r} is not a folder name (use --name ORG--NAME).")
    dest = root / "tests" / "architectures" / spec_id / "configs" / folder
    dest.mkdir(parents=True, exist_ok=True)
    lines = [f"# Provenance of the files in this folder ({how}).",
             f"hf_repo: {hf_repo or 'not stated'}", "files:"]
    for rel, data in sorted(files.items()):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)
        lines += [f"  {rel}:", f"    sha256: {_sha256(data)}"]
        facts = stated.get(rel) or {}
        lines += [f"    {k}: {v}" for k, v in facts.items()] or [
            "    source: not stated (give --source-repo/--source-path/--source-commit)"]
    (dest / "SOURCES.yaml").write_text("\n".join(lines) + "\n")
    if text:
        (dest / "SOURCE.txt").write_text(text)
    return dest
