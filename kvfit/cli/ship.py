"""Build kvfit/specs/shipped.json: the validated data of every bundled spec, keyed as the
spec cache keys it, so a first run on a new machine parses and validates nothing.

    uv run python -m kvfit.cli.ship          # after editing a bundled spec or a schema
    uv run python -m kvfit.cli.ship --check  # is it current? (exit 1 if not)

An entry goes in only after the spec passed every check the loaders make (schema, compile,
cross-spec), exactly as the user cache is written. A spec edited since the file was built
simply misses and is revalidated, so a stale file is slower, never wrong.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from ..atomic import write_bytes
from ..specs import cache


def _load_everything() -> None:
    """Run every bundled-spec loader once (each writes its validated data to the cache)."""
    from ..checkpoint.quant_floors import _floors
    from ..checkpoint.storage import formats
    from ..engines import names
    from ..engines.spec import load_spec
    from ..hardware.presets import accelerators, systems
    from ..specs.registry import builtin_architectures, builtin_matchers, watchlist
    from .main import main

    loaders = (builtin_architectures, builtin_matchers, watchlist, accelerators, systems,
               _floors, formats, load_spec)
    for loader in loaders:                  # memoised per process: run each afresh
        loader.cache_clear()
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        code = main(["specs", "check"])
    if code != 0:
        raise SystemExit(f"the bundled specs do not pass `kvfit specs check`:\n{out.getvalue()}")
    for loader in loaders[:-1]:
        loader()
    for engine in names():
        load_spec(engine)


def build() -> dict:
    """{"format", "entries": {key: entry}, "matchers": {key: [id, model_types, architectures]}}
    for the bundled specs, built in a scratch cache; the matchers index the architecture
    specs' entries, so matching a config parses only the spec it matched."""
    from ..specs.registry import ARCH_SCHEMA, spec_files

    with tempfile.TemporaryDirectory(prefix="kvfit-ship-") as scratch:
        os.environ["KVFIT_CACHE_DIR"] = scratch
        cache.SHIPPED = Path(scratch) / "none.json"       # build from the YAML, not from itself
        cache.shipped.cache_clear()
        _load_everything()
        entries = {}
        for path in sorted((Path(scratch) / "specs").glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            entries[doc["key"]] = doc
    matchers = {}
    for path in spec_files():
        k = cache.key(path.read_bytes(), ARCH_SCHEMA)
        if k in entries:
            data = entries[k]["data"]
            matchers[k] = [data["id"], data["match"]["model_type"],
                           data["match"].get("architectures", [])]
    return {"format": cache.FORMAT, "entries": entries, "matchers": dict(sorted(matchers.items()))}


def render(bundle: dict) -> str:
    """Deterministic text, one entry per line (small diffs when one spec changes); each
    entry keeps its data in spec order. The cache reads a file laid out so line by line
    (kvfit.specs.cache._rendered), parsing only the entries a run asks for."""
    def lines(section: dict) -> str:
        return ",\n".join(f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                           for k, v in sorted(section.items()))

    body = lines(bundle["entries"])
    if bundle.get("matchers"):
        body += "\n" + cache.MATCHERS_LINE.decode() + "\n" + lines(bundle["matchers"])
    body += "\n}}\n"
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    head = '{"format": ' + str(bundle["format"]) + f', "sha256": "{digest}", "entries": {{\n'
    return head + body


def write(target: Path, text: str) -> None:
    """Write atomically through kvfit.atomic, readable by all like any file of the checkout."""
    write_bytes(target, text.encode("utf-8"), shared=True)


def stale(target: Path, text: str) -> tuple[int, int] | None:
    """None when `target` holds exactly `text`, else (entries missing from it, unused ones)."""
    try:
        current = target.read_text(encoding="utf-8")
        old = set(json.loads(current)["entries"])
    except (OSError, ValueError, KeyError, TypeError):
        current, old = None, set()
    if current == text:
        return None
    new = set(json.loads(text)["entries"])
    return len(new - old), len(old - new)


def main(argv: list[str] | None = None) -> int:
    """Rebuild shipped.json; with --check, only say whether it is current (exit 1 if not)."""
    argv = sys.argv[1:] if argv is None else argv
    target = Path(cache.__file__).resolve().parent / "shipped.json"
    text = render(build())
    if "--check" in argv:
        found = stale(target, text)
        if found is None:
            print(f"{target.name} is current", file=sys.stderr)
            return 0
        print(f"{target.name} is stale: {found[0]} spec(s) changed or added, {found[1]} "
              "unused entr(ies); run `python -m kvfit.cli.ship`", file=sys.stderr)
        return 1
    write(target, text)
    print(f"wrote {target} ({len(text):,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
