"""Load a spec file and validate it against its schema, through the validated-data cache."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import display_path
from . import cache
from .loader import Doc, load_file

if TYPE_CHECKING:
    from ..errors import Problem


def load_checked(path: Path, schema: str, allow_null: bool = False, fresh: bool = False
                 ) -> tuple[Doc | None, list[Problem], str | None]:
    """(doc, problems, cache key). A cache hit returns a Doc without positions (doc.tree is
    None); pass fresh=True to parse anyway, e.g. to locate a problem found later.

    Call `cache.put(key, doc.data)` once every later check of the spec has passed.
    """
    display = display_path(path)
    try:
        raw = path.read_bytes()
    except OSError:
        doc, problems = load_file(path, display, allow_null)
        return doc, problems, None
    key = cache.key(raw, schema, allow_null)
    data = None if fresh else cache.get(key)
    if data is not None:
        return Doc(display, data, None, []), [], None
    doc, problems = load_file(path, display, allow_null)
    if doc is not None and not problems:
        from .schema import check
        problems = check(doc, schema)
    return doc, problems, key
