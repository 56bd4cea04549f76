"""Strict, position-keeping YAML loading for spec files.

Specs are YAML 1.2 read with ruamel.yaml's round-trip loader, which keeps the line and
column of every key and item. Duplicate keys, anchors/aliases, null values and non-string
keys are errors. `Doc` pairs the plain data with a position lookup by path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import Problem

MAX_SPEC_BYTES = 1_000_000


@dataclass
class Doc:
    """A loaded YAML document: plain `data`, the ruamel `tree`, and the file's text lines."""

    file: str
    data: object
    tree: object
    lines: list[str]

    def span(self, path: tuple) -> tuple[int, int]:
        """1-based (line, col) of the value at `path` (keys and list indexes)."""
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        node, pos = self.tree, (1, 1)
        for key in path:
            if isinstance(node, CommentedMap) and key in node:
                line, col = node.lc.value(key)
                pos, node = (line + 1, col + 1), node[key]
            elif isinstance(node, CommentedSeq) and isinstance(key, int) and key < len(node):
                line, col = node.lc.item(key)
                pos, node = (line + 1, col + 1), node[key]
            else:
                break
        return pos

    def key_span(self, path: tuple) -> tuple[int, int]:
        """1-based (line, col) of the key that ends `path` (its value's span if not a key)."""
        from ruamel.yaml.comments import CommentedMap

        parent = self.tree
        for key in path[:-1]:
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                return self.span(path)
        if path and isinstance(parent, CommentedMap) and path[-1] in parent:
            line, col = parent.lc.key(path[-1])
            return line + 1, col + 1
        return self.span(path)

    def problem(self, code, path, message, help=None, at=None, col_offset=0, width=1, key=False):
        """A Problem located at `path` (optionally shifted inside a plain scalar)."""
        line, col = self.key_span(path) if key else self.span(path)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        if col_offset and text is not None and text[col - 1:col] in ("'", '"'):
            col_offset += 1
        return Problem(code, self.file, line, col + col_offset, message, help, at, text, width)


def _plain(node, doc_problems, file, path=()):
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        out = {}
        for k, v in node.items():
            if not isinstance(k, str):
                line, col = node.lc.key(k)
                doc_problems.append(Problem("KV102", file, line + 1, col + 1,
                                            f"key {k!r} is not a string", "quote the key"))
                continue
            out[k] = _plain(v, doc_problems, file, path + (k,))
        return out
    if isinstance(node, CommentedSeq):
        return [_plain(v, doc_problems, file, path + (i,)) for i, v in enumerate(node)]
    if node is None:
        doc_problems.append(("null", path))
        return None
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str) and type(node).__name__ != "TaggedScalar":
        return str(node)
    doc_problems.append(("type", path, type(node).__name__))
    return None


def _event_marks(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Positions of anchors/aliases and of explicit tags (both refused in specs)."""
    from ruamel.yaml import YAML

    anchors, tags = [], []
    for event in YAML().parse(text):
        mark = (event.start_mark.line + 1, event.start_mark.column + 1)
        if getattr(event, "anchor", None) is not None:
            anchors.append(mark)
        if getattr(event, "tag", None) is not None:
            tags.append((*mark, str(event.tag)))
    return anchors, tags


def load_text(text: str, file: str, allow_null: bool = False) -> tuple[Doc | None, list[Problem]]:
    """Parse YAML text strictly; return the document (if parseable) and all problems.

    allow_null: hardware/system specs write null for "no source gives this figure".
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    problems: list[Problem] = []
    lines = text.splitlines()
    try:
        anchors, tags = _event_marks(text)
        tree = YAML(typ="rt").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        msg = " ".join(str(x) for x in (exc.context, exc.problem) if x)
        src = lines[line - 1] if 0 < line <= len(lines) else None
        code = "KV103" if "duplicate" in msg else "KV101"
        help_ = "each key may appear once per mapping" if code == "KV103" else "fix the YAML syntax"
        return None, [Problem(code, file, line, col, f"invalid YAML: {msg}", help_, None, src)]
    except YAMLError as exc:
        return None, [Problem("KV101", file, 1, 1, f"invalid YAML: {exc}", None)]
    for line, col in anchors:
        src = lines[line - 1] if 0 < line <= len(lines) else None
        problems.append(Problem("KV104", file, line, col, "anchors and aliases are not allowed "
                                "in specs", "write the content out; specs are read as diffs", None, src))
    for line, col, tag in tags:
        src = lines[line - 1] if 0 < line <= len(lines) else None
        problems.append(Problem("KV106", file, line, col, f"YAML tag {tag} is not allowed in "
                                "specs", "remove the tag; specs hold plain values", None, src))
    raw: list = []
    data = _plain(tree, raw, file)
    doc = Doc(file, data, tree, lines)
    for item in raw:
        if isinstance(item, Problem):
            problems.append(item)
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
