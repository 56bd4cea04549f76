"""Strict, position-keeping YAML loading for spec files.

Specs are YAML 1.2, read in one pass over ruamel.yaml's event stream (see events.py), which
keeps the line and column of every key and item. Duplicate keys, anchors/aliases, tags,
null values, non-string keys and nesting deeper than events.MAX_DEPTH are errors. `Doc`
pairs the plain data with a position lookup by path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..errors import Problem

MAX_SPEC_BYTES = 1_000_000


@dataclass(slots=True)
class Doc:
    """A loaded YAML document: plain `data`, the positions of its keys and values (`tree`, a
    kvfit.specs.events.Positions; None for data read from the cache), and the file's text
    lines. The YAML reader (events, ruamel) loads only when a file is parsed: a plan reads
    every spec from the validated-data cache."""

    file: str
    data: object
    tree: object
    lines: list[str]

    def span(self, path: tuple) -> tuple[int, int]:
        """1-based (line, col) of the value at `path` (or of its deepest existing parent)."""
        pos = (1, 1)
        if self.tree is None:
            return pos
        for i in range(1, len(path) + 1):
            found = self.tree.values.get(path[:i])
            if found is None:
                break
            pos = found
        return pos

    def key_span(self, path: tuple) -> tuple[int, int]:
        """1-based (line, col) of the key that ends `path` (its value's span if not a key)."""
        if path and self.tree is not None and path in self.tree.keys:
            return self.tree.keys[path]
        return self.span(path)

    def problem(self, code, path, message, help=None, at=None, col_offset=0, width=1, key=False):
        """A Problem located at `path` (optionally shifted inside a plain scalar)."""
        from ..errors import Problem

        line, col = self.key_span(path) if key else self.span(path)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        if col_offset and text is not None and text[col - 1:col] in ("'", '"'):
            col_offset += 1
        return Problem(code, self.file, line, col + col_offset, message, help, at, text, width)


_HELP = {"KV101": "fix the YAML syntax", "KV103": "each key may appear once per mapping",
         "KV107": "specs are shallow; write the structure out plainly"}


def load_text(text: str, file: str, allow_null: bool = False) -> tuple[Doc | None, list[Problem]]:
    """Parse YAML text strictly (one pass over its events); return the document (if
    parseable) and all problems.

    allow_null: hardware/system specs write null for "no source gives this figure".
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from ..errors import Problem
    from .events import MAX_ANCHOR_REPORTS, build

    lines = text.splitlines()

    def located(code, line, col, message, help_=None):
        src = lines[line - 1] if 0 < line <= len(lines) else None
        return Problem(code, file, line, col, message, help_, None, src)

    try:
        built = build(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        msg = " ".join(" ".join(str(x).split()) for x in (exc.context, exc.problem) if x)
        return None, [located("KV101", line, col, f"invalid YAML: {msg}", _HELP["KV101"])]
    except (YAMLError, RecursionError, ValueError) as exc:
        pos = getattr(exc, "position", None)        # a ReaderError names a character offset
        line, col = ((text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos))
                     if isinstance(pos, int) and 0 <= pos <= len(text) else (1, 1))
        reason = getattr(exc, "reason", None) if pos is not None else None
        return None, [located("KV101", line, col, "invalid YAML: " + " ".join(
            str(reason or exc).split()))]
    if built.stop is not None:
        code, line, col, msg = built.stop
        return None, [located(code, line, col, msg, _HELP[code])]
    problems: list[Problem] = []
    anchors = built.anchors
    if len(anchors) > MAX_ANCHOR_REPORTS:
        problems.append(located("KV104", *anchors[0], f"anchors and aliases are not allowed in "
                                f"specs ({len(anchors)} in this file; the first is here)",
                                "write the content out; specs are read as diffs"))
    for line, col in anchors if len(anchors) <= MAX_ANCHOR_REPORTS else ():
        problems.append(located("KV104", line, col, "anchors and aliases are not allowed "
                                "in specs", "write the content out; specs are read as diffs"))
    for line, col, tag in built.tags:
        problems.append(located("KV106", line, col, f"YAML tag {tag} is not allowed in "
                                "specs", "remove the tag; specs hold plain values"))
    doc = Doc(file, built.data, built.positions, lines)
    for item in built.issues:
        if item[0] == "key":
            problems.append(Problem("KV102", file, item[1], item[2],
                                    f"key {item[3]!r} is not a string", "quote the key"))
        elif item[0] == "type":
            problems.append(doc.problem("KV106", item[1], f"unsupported YAML value ({item[2]}): "
                                        "tags, dates and other non-JSON values are not allowed",
                                        "write a plain string, number, boolean, list or mapping"))
        elif not allow_null:
            problems.append(doc.problem("KV105", item[1], "null value is not allowed",
                                        "omit the key instead of writing null or ~"))
    return doc, problems


def load_file(path: Path, display: str | None = None,
              allow_null: bool = False) -> tuple[Doc | None, list[Problem]]:
    """Read and strictly parse one spec file."""
    from ..errors import Problem

    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem("KV100", name, 1, 1, f"cannot read file: {exc.strerror}")]
    if len(raw) > MAX_SPEC_BYTES:
        return None, [Problem("KV100", name, 1, 1, "spec file is larger than 1 MB")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, [Problem("KV100", name, 1, 1, "spec file is not UTF-8 text")]
    return load_text(text, name, allow_null)
