"""How every text renderer writes numbers and counted nouns, so one report never says
"3504" beside "3,504" or "1 sequences".

    >>> number(3504), count(1, "sequence"), count(2, "copy"), count(8, "GPU")
    ('3,504', '1 sequence', '2 copies', '8 GPUs')
    >>> gib(17_179_869_184), gib(None)
    ('16.000 GiB', 'unknown')
"""

from __future__ import annotations

GIB = 1024**3
_IRREGULAR = {"copy": "copies", "entry": "entries", "memory domain": "memory domains",
              "model group": "model groups", "key": "keys"}


def number(n, missing: str = "-") -> str:
    """An integer count with thousands separators; a float keeps its own digits (`:g`), also
    grouped; None (or a missing value) reads `missing`."""
    if n is None:
        return missing
    if isinstance(n, bool):
        return str(n)
    if isinstance(n, int):
        return f"{n:,}"
    if isinstance(n, float) and n.is_integer() and abs(n) < 1e15:
        return f"{int(n):,}"
    return f"{n:,g}" if isinstance(n, float) else str(n)


def plural(word: str) -> str:
    """The plural of a noun kvfit counts (sequence, user, GPU, node, copy, ...)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def noun(n, word: str, many: str | None = None) -> str:
    """`word` or its plural, as agrees with the count `n` (without the number)."""
    return word if n == 1 else (many or plural(word))


def count(n, word: str, many: str | None = None) -> str:
    """`n word` with the number grouped and the noun agreeing: 1 sequence, 3,504 sequences."""
    return f"{number(n)} {noun(n, word, many)}"


def gib(n, digits: int = 3) -> str:
    """Bytes as GiB with `digits` decimals (grouped), or 'unknown'."""
    return "unknown" if n is None else f"{n / GIB:,.{digits}f} GiB"


def tokens(n) -> str:
    """A context length: 131,072 tokens."""
    return count(n, "token")


def table(rows: list[list[str]], right: set[int], indent: str = "  ") -> list[str]:
    """Rows of cells as aligned text lines; columns in `right` are right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.rjust(w) if i in right else c.ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in rows]


def brief(basis: str, hint: str, limit: int = 320) -> str:
    """A long basis (the code-derived activation peak names every tensor's source) cut to its
    head for a text view, ending with `hint`: where the whole of it is."""
    if len(basis) <= limit:
        return basis
    head = basis[:limit]
    cut = head[:head.index("): ") + 1] if "): " in head else head.rsplit(" ", 1)[0]
    return f"{cut.rstrip(',;:(')} ... ({hint})"
