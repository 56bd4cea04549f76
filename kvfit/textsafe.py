"""Text that is safe to print: secrets redacted, control characters escaped.

Every user-facing message passes through `safe()` (KvfitError rendering does it), and any
URL kvfit echoes goes through `redact()` first, so credentials in HF_ENDPOINT, tokens and
Authorization values never reach stderr, a JSON error object or a report note.
"""

from __future__ import annotations

import os
import re
from functools import cache

REDACTED = "***"
_TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_API_TOKEN")
# URL settings whose userinfo is a secret, however it is spelled (an unencoded "/", "#", "?",
# "@" or space in a password defeats any URL parser and any pattern)
_URL_ENV = ("HF_ENDPOINT", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
            "ALL_PROXY", "all_proxy")
_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))


@cache
def _patterns() -> tuple[re.Pattern, ...]:
    """The secret patterns, compiled on the first message (a plan that prints only its report
    compiles none of them)."""
    return (
        # scheme://userinfo@host: the userinfo part ends at the last "@" before the path
        # (the URL settings' userinfo is redacted whole first, however it is spelled).
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s?#]*@"),
        # a token; hf_overrides is a flag kvfit names in its own messages, not a token
        re.compile(r"\b(hf_|api_org_)(?!overrides\b)[A-Za-z0-9]{6,}"),
        re.compile(r"(?i)\b(authorization|x-api-key|api[_-]?key|(?:access|auth|hf)[_-]?token)"
                   r"(\"?\s*[:=]\s*\"?)((?:bearer|basic|token)\s+)?[^\s\"',;]+"),
        re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"))


def redact(text: str) -> str:
    """`text` with URL userinfo, hf_ tokens, Authorization/API-key values and the current
    HF_TOKEN value replaced by ***."""
    userinfo, hf_token, auth, bearer = _patterns()
    for secret in _env_userinfo():
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = userinfo.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = hf_token.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = auth.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{REDACTED}", text)
    text = bearer.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    for name in _TOKEN_ENV:
        value = os.environ.get(name, "")
        if len(value) >= 8:
            text = text.replace(value, REDACTED)
    return text


def _env_userinfo() -> list[str]:
    """The userinfo of each URL setting (_URL_ENV), longest first, with its password alone and
    their percent-decoded forms: everything between "://" (or the start) and the last "@"."""
    from urllib.parse import unquote

    found = set()
    for name in _URL_ENV:
        value = os.environ.get(name, "")
        userinfo = value.partition("://")[2] if "://" in value else value
        userinfo = userinfo.rpartition("@")[0]
        password = userinfo.partition(":")[2]
        for secret in (userinfo, password):
            if len(secret) >= 3:
                found.update((secret, unquote(secret)))
    return sorted(found, key=len, reverse=True)


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """Control characters (C0, DEL, C1), bidi overrides and lone surrogates as \\xNN /
    \\uNNNN escapes; newlines and tabs are kept when `keep_newlines`."""
    if text.isascii():      # ASCII is printable but for C0 and DEL, the ASCII this escapes
        rest = text.replace("\n", "").replace("\t", "") if keep_newlines else text
        if rest.isprintable():
            return text     # a plan's whole report, without a loop over its characters
    out = []
    for ch in text:
        code = ord(ch)
        if keep_newlines and ch in "\n\t":
            out.append(ch)
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif code in _BIDI or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def one_line(text: str) -> str:
    """A name the user typed (a TOML key may hold a newline) as a message quotes it: on one
    line."""
    return escape_controls(str(text), keep_newlines=False)


def safe(text: str, *, keep_newlines: bool = True) -> str:
    """redact() then escape_controls(): what every printed message goes through."""
    return escape_controls(redact(str(text)), keep_newlines=keep_newlines)
