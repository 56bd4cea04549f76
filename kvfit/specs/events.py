"""Build plain spec data from one pass over ruamel.yaml's event stream.

The events are read once (ruamel's C parser when it is installed, else its pure-Python
parser) and turned into plain JSON-like data, the position of every key and value, and the
spec-specific problems, without ruamel's round-trip composer and constructor. Bounds are
checked as the events arrive, before anything is built from them: nesting deeper than
MAX_DEPTH stops reading at once, and an alias never expands (it stands for its anchor's
value, shared, not copied), so a 40-byte file of nested braces or a billion-laughs file
costs what its bytes cost. Scalars resolve by the YAML 1.2 core schema, as ruamel's
round-trip loader resolves them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_DEPTH = 32            # the bundled specs nest at most 6 deep
MAX_ANCHOR_REPORTS = 3    # more anchors/aliases than this are reported as one problem


@dataclass
class Positions:
    """1-based (line, col) of each value and each mapping key, by path."""

    values: dict = field(default_factory=dict)
    keys: dict = field(default_factory=dict)


@dataclass
class Built:
    """What one pass produced. `stop` is a fatal (code, line, col, message) if reading stopped."""

    data: object = None
    positions: Positions = field(default_factory=Positions)
    anchors: list = field(default_factory=list)       # (line, col)
    tags: list = field(default_factory=list)          # (line, col, tag)
    issues: list = field(default_factory=list)        # ("null", path) / ("type", path, name)
                                                      # / ("key", line, col, key)
    stop: tuple | None = None


class _Frame:
    __slots__ = ("container", "path", "key", "key_mark", "muted", "anchor", "start")

    def __init__(self, container, path, muted, anchor, start):
        self.container, self.path, self.muted = container, path, muted
        self.anchor, self.start = anchor, start
        self.key, self.key_mark = _NO_KEY, None


_NO_KEY = object()
_T = "tag:yaml.org,2002:"


def _resolver():
    from ruamel.yaml.resolver import VersionedResolver

    return VersionedResolver(version=(1, 2))


def scalar_value(resolver, event) -> tuple[object, str | None]:
    """(value, unsupported type name or None) of a scalar event, YAML 1.2 core schema."""
    from ruamel.yaml.nodes import ScalarNode

    text = event.value
    if event.style or not event.implicit[0]:          # quoted, block or tagged: a string
        return str(text), None
    tag = str(resolver.resolve(ScalarNode, text, (True, False)))
    if tag == _T + "null":
        return None, None
    if tag == _T + "bool":
        return text.lower() == "true", None
    try:
        if tag == _T + "int":
            return _int(text), None
        if tag == _T + "float":
            return _float(text), None
    except ValueError:                    # "0b_", or past Python's int digit limit
        return str(text), None
    if tag == _T + "timestamp":
        return None, "TimeStamp"
    return str(text), None


def _int(text: str) -> int:
    s = text.replace("_", "")
    sign = -1 if s[:1] == "-" else 1
    s = s.lstrip("+-")
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if s[:2].lower() == prefix:
            return sign * int(s[2:], base)
    return sign * int(s)


def _float(text: str) -> float:
    s = text.replace("_", "").lower()
    if s.lstrip("+-") == ".inf":
        return -math.inf if s[0] == "-" else math.inf
    if s == ".nan":
        return math.nan
    return float(s)


def _short(value, limit: int = 80) -> str:
    """A value quoted in a one-line problem message: line breaks and tabs spelled as \\n and \\t."""
    text = str(value).replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _mark(event) -> tuple[int, int]:
    return event.start_mark.line + 1, event.start_mark.column + 1


def _c_parser():
    """ruamel's libyaml parser class (ruamel.yaml.clib or .clibz), or None."""
    try:
        from ruamel.yaml.cyaml import CParser
    except ImportError:
        return None
    return CParser


def _parse(text: str):
    """The events of `text`: ruamel's C parser when its libyaml is installed, else its pure
    parser (ruamel's YAML() looks only for the older clib, not clibz, so ask cyaml)."""
    parser_class = _c_parser()
    if parser_class is None:
        from ruamel.yaml import YAML

        yield from YAML(typ="safe", pure=True).parse(text)
        return
    parser = parser_class(text)
    try:
        while parser.check_event():
            yield parser.get_event()
    finally:
        parser.dispose()


def build(text: str) -> Built:
    """One pass over the events of `text`. Raises ruamel's MarkedYAMLError on bad syntax
    (after the whole stream was read, as ruamel's own loader would)."""
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        DocumentStartEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceStartEvent,
    )

    out, resolver = Built(), _resolver()
    stack: list[_Frame] = []
    anchored: dict = {}
    documents, duplicate = 0, None
    root_set = False

    def attach(value, mark, muted):
        nonlocal root_set
        if not stack:
            out.data, root_set = value, True
            return
        top = stack[-1]
        if isinstance(top.container, list):
            path = top.path + (len(top.container),)
            top.container.append(value)
            if not muted:
                out.positions.values[path] = mark
            return
        if top.key is _NO_KEY:                     # this node is a key
            top.key, top.key_mark = value, mark
            return
        key, key_mark = top.key, top.key_mark
        top.key = _NO_KEY
        if not isinstance(key, str):
            if not top.muted:
                out.issues.append(("key", *key_mark, key))
            return
        if key in top.container:
            nonlocal duplicate
            if duplicate is None:
                duplicate = (key_mark, f'found duplicate key "{key}" with value '
                             f'"{_short(value)}" (original value: "{_short(top.container[key])}")')
            return
        top.container[key] = value
        if not top.muted:
            out.positions.keys[top.path + (key,)] = key_mark
            out.positions.values[top.path + (key,)] = mark

    def child_path():
        top = stack[-1]
        if isinstance(top.container, list):
            return top.path + (len(top.container),), top.muted, False
        if top.key is _NO_KEY:
            return top.path, True, True
        muted = top.muted or not isinstance(top.key, str)
        return top.path + (top.key,), muted, False

    for event in _parse(text):
        if isinstance(event, DocumentStartEvent):
            documents += 1
            if documents > 1:
                out.stop = ("KV101", *_mark(event), "invalid YAML: expected a single document "
                            "in the stream but found another document")
                return out
            continue
        tag = getattr(event, "tag", None)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            out.anchors.append(_mark(event))
        if tag is not None and not isinstance(event, AliasEvent):
            out.tags.append((*_mark(event), str(tag)))
        if isinstance(event, (MappingStartEvent, SequenceStartEvent)):
            if len(stack) >= MAX_DEPTH:
                out.stop = ("KV107", *_mark(event), f"YAML nested deeper than {MAX_DEPTH} "
                            "levels")
                return out
            path, muted, is_key = child_path() if stack else ((), False, False)
            container = {} if isinstance(event, MappingStartEvent) else []
            stack.append(_Frame(container, path, muted or is_key, anchor, _mark(event)))
        elif isinstance(event, CollectionEndEvent):
            frame = stack.pop()
            if frame.anchor is not None:
                anchored[frame.anchor] = frame.container
            attach(frame.container, frame.start, frame.muted)
        elif isinstance(event, ScalarEvent):
            path, muted, is_key = child_path() if stack else ((), False, False)
            value, bad = scalar_value(resolver, event)
            if not muted and not is_key:
                if bad:
                    out.issues.append(("type", path, bad))
                elif value is None:
                    out.issues.append(("null", path))
            if anchor is not None:
                anchored[anchor] = value
            attach(value, _mark(event), muted or is_key)
        elif isinstance(event, AliasEvent):
            attach(anchored.get(anchor, ""), _mark(event), True)
    if duplicate is not None:
        (line, col), message = duplicate
        out.stop = ("KV103", line, col, f"invalid YAML: while constructing a mapping {message}")
    if not root_set:
        out.issues.append(("null", ()))
    return out

