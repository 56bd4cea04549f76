"""Developer tool: copy a pinned model config from the shared fixture set into tests/.

    uv run python tests/tools/pin_fixture.py <spec-id> <org>--<name> [--shared DIR]

Copies every file of ../shared/model-configs/<org>--<name>/ byte for byte into
tests/architectures/<spec-id>/configs/<org>--<name>/ and records provenance (source repo,
path, commit, sha256, fidelity) from MANIFEST.json in that folder's SOURCES.yaml.
Tests never read ../shared; they read the copy and re-check its sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("model_dir")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "model-configs"))
    args = ap.parse_args()
    shared = Path(args.shared)
    src = shared / args.model_dir
    manifest = [m for m in json.loads((shared / "MANIFEST.json").read_text())
                if m["dir"] == args.model_dir]
    dest = ROOT / "tests" / "architectures" / args.spec / "configs" / args.model_dir
    dest.mkdir(parents=True, exist_ok=True)
    lines = [f"# Provenance of the files in this folder (copied from shared/model-configs/"
             f"{args.model_dir}, byte for byte).", f"hf_repo: {manifest[0]['hf'] if manifest else '?'}",
             "files:"]
    for f in sorted(src.rglob("*")):
        if not f.is_file() or f.name == "SOURCE.txt":
            continue
        rel = f.relative_to(src).as_posix()
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest / rel)
        m = next((x for x in manifest if x["dest"] == rel), None)
        sha = hashlib.sha256(f.read_bytes()).hexdigest()
        lines += [f"  {rel}:", f"    sha256: {sha}"]
        if m:
            lines += [f"    source_repo: {m['repo']}", f"    source_path: {m['path']}",
                      f"    source_commit: {m['commit']}", f"    fidelity: {m['fidelity']}"]
        else:
            lines += ["    source: see the shared folder's SOURCE.txt (not in MANIFEST.json)"]
    text = (src / "SOURCE.txt").read_text() if (src / "SOURCE.txt").exists() else ""
    (dest / "SOURCES.yaml").write_text("\n".join(lines) + "\n")
    if text:
        (dest / "SOURCE.txt").write_text(text)
    print(f"pinned {args.model_dir} -> {dest.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
