"""Write a generated file, or with --check say whether the checked-in copy is current."""

from __future__ import annotations

import argparse
from pathlib import Path


def write_or_check(argv: list[str] | None, script: str, path: Path, render,
                   summary=lambda text: "") -> int:
    """The main of the generator `script` (its __file__): `render()` gives the file's text;
    --check exits 1 when `path` differs from it, otherwise the text is written there."""
    script = Path(script)
    root = script.resolve().parent.parent
    p = argparse.ArgumentParser(description=f"Write {path.relative_to(root)}.")
    p.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = p.parse_args(argv)
    text, name = render(), path.relative_to(root)
    if args.check:
        if (path.read_text(encoding="utf-8") if path.exists() else "") != text:
            print(f"{name} is stale: run uv run python bench/{script.name}")
            return 1
        return 0
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {name}{summary(text)}")
    return 0
