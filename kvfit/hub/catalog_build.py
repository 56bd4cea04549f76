"""Maintainer tool: (re)generate offline catalog entries.

  python -m kvfit.hub.catalog_build --repo org/name [--revision REV] [--out DIR]
      reads the repo from the Hub (HF_ENDPOINT, HF_TOKEN honoured) at the resolved commit.
  python -m kvfit.hub.catalog_build --from-mirror DIR [--out DIR]
      imports a pinned-config tree (MANIFEST.json + per-model SOURCE.txt, as in the shared
      model-configs folder): copies files byte-for-byte and records their provenance.

Entries from a mirror get hf_revision null: the Hub commit is unknown and never guessed.
A file over MAX_FILE_BYTES (nvidia/MiniMax-M3-NVFP4's 3 MB config.json) is stored gzip-compressed
as <name>.gz (recorded as stored_as); its bytes and sha256 stay those of the upstream file.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

from .catalog import catalog_dir
from .snapshot import CONFIG, INDEX, QUANT_CONFIG

STORED = (CONFIG, QUANT_CONFIG, INDEX)
MAX_FILE_BYTES = 1_000_000
_UNFAITHFUL = ("CURATED", "UNVERIFIED", "DERIVED")


def build_from_hub(repo_id: str, revision: str | None, out: Path, timeout: float = 30.0) -> Path:
    """Write <out>/<org>--<name>/ from the Hub at `revision`'s commit; returns the folder."""
    from .transport import HubClient

    client = HubClient(timeout=timeout)
    info = client.repo_info(repo_id, revision)
    host = urlsplit(client.endpoint).netloc.rpartition("@")[2]  # never the userinfo
    folder = _fresh(out, info.repo_id)
    snapshot = []
    for f in info.files:
        if f.path in STORED:
            data = client.fetch(repo_id, info.sha, f.path)
            _write(folder / f.path, data)
            origin = {"host": host, "repo": repo_id, "path": f.path, "commit": info.sha,
                      "sha256": _sha256(data)}
            snapshot.append(_stored(folder, f.path, "verbatim: read from the Hub", origin))
    files = [{"path": f.path, "size": f.size} for f in info.files]
    return _write_entry(folder, repo_id, info.sha, snapshot, files, [], [])


def build_from_mirror(root: Path, out: Path) -> list[Path]:
    """Import every faithful model folder of a pinned-config tree; returns written folders."""
    manifest = json.loads((root / "MANIFEST.json").read_text())
    by_dir: dict[str, list[dict]] = {}
    for row in manifest:
        if row["dest"] in STORED:
            by_dir.setdefault(row["dir"], []).append(row)
    written = [_mirror_entry(root / d, rows, out) for d, rows in sorted(by_dir.items())]
    listed = set(by_dir) | {row["dir"] for row in manifest}
    for src in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in listed):
        written.append(_hub_pinned_entry(src, out))
    return [w for w in written if w is not None]


def _mirror_entry(src: Path, rows: list[dict], out: Path) -> Path | None:
    """One model folder whose files were copied from GitHub mirrors (MANIFEST rows)."""
    if any(r["fidelity"].startswith(_UNFAITHFUL) for r in rows):
        return None
    if CONFIG not in {r["dest"] for r in rows}:
        return None
    repo_id, _, remark = rows[0]["hf"].partition(" (")
    aliases = [remark.removeprefix("formerly ").rstrip(")")] if remark.startswith("formerly") else []
    folder = _fresh(out, repo_id)
    snapshot = []
    for r in sorted(rows, key=lambda r: r["dest"]):
        _write(folder / r["dest"], (src / r["dest"]).read_bytes())
        origin = {"host": "github.com", "repo": r["repo"], "path": r["path"],
                  "commit": r["commit"], "sha256": r["sha256"], "git_blob": r["blob"]}
        snapshot.append(_stored(folder, r["dest"], r["fidelity"], origin))
    return _write_entry(folder, repo_id, None, snapshot, None, [], aliases)


def _hub_pinned_entry(src: Path, out: Path) -> Path | None:
    """A folder whose SOURCE.txt pins config.json to a Hub commit (hf_repo/revision lines)."""
    source = dict(line.split(": ", 1) for line in (src / "SOURCE.txt").read_text().splitlines()
                  if ": " in line)
    if not {"hf_repo", "revision", "fidelity"} <= source.keys() or not (src / CONFIG).is_file():
        return None
    folder = _fresh(out, source["hf_repo"])
    shutil.copyfile(src / CONFIG, folder / CONFIG)
    origin = {"host": "huggingface.co", "repo": source["hf_repo"], "path": CONFIG,
              "commit": source["revision"], "sha256": None}
    snapshot = [_stored(folder, CONFIG, source["fidelity"], origin)]
    notes: list[str] = []
    for extra in sorted(p for p in src.glob("*.json") if p.name != CONFIG):
        shutil.copyfile(extra, folder / extra.name)
        doc = json.loads(extra.read_text())
        snapshot.append(_stored(folder, extra.name, f"derived: {doc.get('what', 'tool output')}",
                                None))
        notes += [f"{extra.name}: {v}" for k, v in sorted(doc.items()) if k.endswith("_note")]
    return _write_entry(folder, source["hf_repo"], source["revision"], snapshot, None, notes, [])


def _write_entry(folder: Path, repo_id: str, revision: str | None, snapshot: list[dict],
                 files: list[dict] | None, notes: list[str], aliases: list[str]) -> Path:
    """Write entry.json (keys in schema order); total_size only from a stored real index."""
    total = _total_size(folder / INDEX)
    entry = {"schema_version": 1, "repo_id": repo_id, **({"aliases": aliases} if aliases else {}),
             "hf_revision": revision, "snapshot": snapshot, "checkpoint_files": files,
             "total_size": total, "notes": notes}
    (folder / "entry.json").write_text(json.dumps(entry, indent=2) + "\n")
    return folder


def _write(dest: Path, data: bytes) -> None:
    """Store byte-for-byte; a file over MAX_FILE_BYTES is written as dest.gz (deterministic gzip)."""
    if len(data) <= MAX_FILE_BYTES:
        dest.write_bytes(data)
    else:
        dest.with_name(dest.name + ".gz").write_bytes(gzip.compress(data, 9, mtime=0))


def _stored(folder: Path, name: str, fidelity: str, origin: dict | None) -> dict:
    """A snapshot record for a file already written into `folder` (as is, or as name.gz):
    bytes and sha256 are those of the file itself, not of its compressed copy."""
    packed = folder / (name + ".gz")
    if packed.is_file() and not (folder / name).is_file():
        data = gzip.decompress(packed.read_bytes())
        return {"file": name, "stored_as": packed.name, "bytes": len(data),
                "sha256": _sha256(data), "fidelity": fidelity, "pinned_from": origin}
    data = (folder / name).read_bytes()
    return {"file": name, "bytes": len(data), "sha256": _sha256(data), "fidelity": fidelity,
            "pinned_from": origin}


def _total_size(index: Path) -> int | None:
    """metadata.total_size of a real index file, if it has one."""
    if not index.is_file():
        return None
    size = json.loads(index.read_text()).get("metadata", {}).get("total_size")
    return int(size) if isinstance(size, int | float) else None


def _fresh(out: Path, repo_id: str) -> Path:
    """An empty folder <out>/<org>--<name>."""
    folder = out / repo_id.replace("/", "--")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints one line per written entry."""
    parser = argparse.ArgumentParser(prog="python -m kvfit.hub.catalog_build",
                                     description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--repo", action="append", help="org/name to read from the Hub")
    source.add_argument("--from-mirror", type=Path, help="pinned-config tree to import")
    parser.add_argument("--revision", help="branch, tag or sha (with a single --repo)")
    parser.add_argument("--out", type=Path, default=Path(str(catalog_dir())),
                        help="catalog folder to write into (default: the package's)")
    args = parser.parse_args(argv)
    from ..errors import KvfitError

    try:
        if args.from_mirror:
            written = build_from_mirror(args.from_mirror, args.out)
        else:
            written = [build_from_hub(r, args.revision, args.out) for r in args.repo]
    except KvfitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    for folder in written:
        print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
