"""Parse a model reference: a Hub repo id, a Hub URL, an ``hf://`` URI or a local path.

Accepted forms (anything else is a UsageError):
  org/name                 org/name@rev           (plus an optional separate revision argument)
  https://huggingface.co/org/name[/tree|blob|resolve/REV[/path]]   (also hf.co, or HF_ENDPOINT's host)
  hf://org/name[@rev][/path]
  ./dir, /abs/dir, ~/dir, an existing directory or file; a local ``.gguf`` file
A blob/resolve URL (or hf:// path) naming a ``.safetensors`` or ``.gguf`` file selects that artifact.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..errors import UsageError

HUB_HOSTS = ("huggingface.co", "www.huggingface.co", "hf.co")
ARTIFACT_SUFFIXES = (".safetensors", ".gguf")
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(rf"{_PART}/{_PART}")
_REVISION = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*")
_SEGMENT = re.compile(r"[A-Za-z0-9._+=@,()\[\]-]+")
_URL_VERBS = ("tree", "blob", "resolve")


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed model reference.

    kind: "hub" | "local" | "gguf-file" (a local .gguf) | "hub-artifact" (one file in a Hub repo).
    repo_id: "org/name" for Hub references, else None.
    revision: the revision as requested (None = the repo's default branch).
    path: a local path, an in-repo artifact path, or an in-repo folder for a tree URL.
    text: the reference exactly as given.
    """

    kind: str
    repo_id: str | None
    revision: str | None
    path: str | None
    text: str

    @property
    def source(self) -> str:
        """The reference normalised for reports: "org/name", or a local file/dir name."""
        if self.repo_id:
            return self.repo_id
        return os.path.basename(os.path.normpath(self.path or self.text))


def parse_reference(text: str, revision: str | None = None) -> Reference:
    """Parse `text` (plus an optional separate `revision`) into a Reference; UsageError if invalid."""
    raw = text.strip() if isinstance(text, str) else ""
    if not raw:
        raise UsageError("the model reference is empty.", hint="Pass a Hub id such as org/name.")
    if revision is not None:
        revision = _check_revision(revision.strip(), raw)
    if any(ord(c) < 32 or c == "\x7f" for c in raw):
        raise UsageError(f"the model reference {raw!r} contains control characters.")
    if any("\ud800" <= c <= "\udfff" for c in raw):       # cannot be a path or a URL
        raise UsageError(f"the model reference {raw!r} is not valid text (a lone surrogate).")
    if "://" in raw:
        if raw.lower().startswith("hf://"):
            return _merge(_parse_hf_uri(raw), revision)
        return _merge(_parse_url(raw), revision)
    local = _parse_local(raw)
    if local is not None:
        if revision is not None:
            raise UsageError(f"a revision ({revision!r}) was given for the local path {raw!r}.",
                             hint="Revisions apply to Hub references only.")
        return local
    return _merge(_parse_repo_at_rev(raw, raw), revision)


def _merge(ref: Reference, revision: str | None) -> Reference:
    """Combine an inline revision with the separate revision argument (they must agree)."""
    if revision is None or revision == ref.revision:
        return ref
    if ref.revision is not None:
        raise UsageError(f"the reference {ref.text!r} names revision {ref.revision!r} but the "
                         f"revision argument says {revision!r}.", hint="Give the revision once.")
    return Reference(ref.kind, ref.repo_id, revision, ref.path, ref.text)


def _parse_repo_at_rev(body: str, text: str) -> Reference:
    """`org/name` or `org/name@rev`."""
    repo, sep, rev = body.partition("@")
    repo_id = _check_repo_id(repo, text)
    return Reference("hub", repo_id, _check_revision(rev, text) if sep else None, None, text)


def _parse_hf_uri(text: str) -> Reference:
    """`hf://org/name[@rev][/path]` (model repos only)."""
    body = text[len("hf://"):]
    parts = body.split("/")
    if parts[0] in ("datasets", "spaces", "buckets"):
        raise UsageError(f"{text!r} is a {parts[0][:-1]} reference; kvfit plans model repos only.")
    if len(parts) < 2:
        raise UsageError(f"{text!r} is not an hf://org/name reference.")
    name, _, rev = parts[1].partition("@")
    repo_id = _check_repo_id(f"{parts[0]}/{name}", text)
    revision = _check_revision(unquote(rev), text) if "@" in parts[1] else None
    path = _check_repo_path(parts[2:], text) if len(parts) > 2 and any(parts[2:]) else None
    return _with_path(repo_id, revision, path, text)


def _parse_url(text: str) -> Reference:
    """`https://huggingface.co/org/name[/tree|blob|resolve/REV[/path]]`."""
    try:
        url = urlsplit(text)
        host = (url.hostname or "").lower()
        port = url.port
    except ValueError as exc:
        raise UsageError(f"{text!r} is not a well-formed URL ({exc}).") from None
    if not _is_hub_origin(url.scheme, host, port):
        raise UsageError(f"{text!r} is not a Hugging Face Hub URL.",
                         hint="Use https://huggingface.co/org/name or an org/name id.")
    if url.username or url.password:
        raise UsageError(f"{text!r} embeds credentials; pass a token through HF_TOKEN instead.")
    parts = url.path.split("/")[1:]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    if parts and parts[0] in ("datasets", "spaces", "api", "buckets"):
        raise UsageError(f"{text!r} is not a model repository URL.")
    if len(parts) < 2:
        raise UsageError(f"{text!r} does not name a repository (expected /org/name).")
    repo_id = _check_repo_id(f"{unquote(parts[0])}/{unquote(parts[1])}", text)
    if len(parts) == 2:
        return Reference("hub", repo_id, None, None, text)
    if parts[2] not in _URL_VERBS or len(parts) < 4:
        raise UsageError(f"{text!r} is not a repo, tree, blob or resolve URL.")
    revision = _check_revision(unquote(parts[3]), text)
    path = _check_repo_path(parts[4:], text) if len(parts) > 4 else None
    if parts[2] != "tree" and path is None:
        raise UsageError(f"the {parts[2]} URL {text!r} names no file.")
    return _with_path(repo_id, revision, path, text)


def _with_path(repo_id: str, revision: str | None, path: str | None, text: str) -> Reference:
    """A repo reference with an optional in-repo file or folder."""
    if path is None or path == "config.json":
        return Reference("hub", repo_id, revision, None, text)
    if path.lower().endswith(ARTIFACT_SUFFIXES):
        return Reference("hub-artifact", repo_id, revision, path, text)
    if "." in path.rsplit("/", 1)[-1]:
        raise UsageError(f"{text!r} points at {path!r}, which is not a .safetensors or .gguf "
                         "weight file.", hint="Link the repository, a folder or a weight file.")
    return Reference("hub", repo_id, revision, path, text)


def _is_hub_origin(scheme: str, host: str, port: int | None) -> bool:
    """Public Hub hosts on default ports, or exactly the origin of HF_ENDPOINT when it is set."""
    if scheme not in ("http", "https"):
        return False
    if host in HUB_HOSTS and port in (None, 80, 443):
        return True
    endpoint = os.environ.get("HF_ENDPOINT")
    if not endpoint:
        return False
    ours = urlsplit(endpoint)
    default = {"http": 80, "https": 443}
    return ((scheme, host, port or default[scheme])
            == (ours.scheme, (ours.hostname or "").lower(), ours.port or default.get(ours.scheme)))


def _parse_local(text: str) -> Reference | None:
    """A local directory or file, when the text looks like a path or names an existing one."""
    looks_local = text.startswith(("/", "./", "../", "~")) or text in (".", "..")
    path = os.path.expanduser(text)
    if not looks_local and not os.path.exists(path):
        return None
    if not os.path.exists(path):
        raise UsageError(f"the local path {text!r} does not exist.")
    kind = "gguf-file" if os.path.isfile(path) and path.lower().endswith(".gguf") else "local"
    return Reference(kind, None, None, path, text)


def _check_repo_id(repo_id: str, text: str) -> str:
    """Validate "org/name" (ASCII letters, digits, '.', '_', '-'; no '--' or '..')."""
    if (not _REPO_ID.fullmatch(repo_id) or "--" in repo_id or ".." in repo_id
            or len(repo_id) > 96 or repo_id.endswith(".git")):
        raise UsageError(f"{text!r} is not a valid Hugging Face repo id or existing local path.",
                         hint="Expected org/name with letters, digits, '.', '_' or '-'.")
    return repo_id


def _check_revision(rev: str, text: str) -> str:
    """Validate a branch, tag or commit (slashes allowed between plain segments, no '..')."""
    if not rev or len(rev) > 255 or ".." in rev or not _REVISION.fullmatch(rev):
        raise UsageError(f"the revision {rev!r} in {text!r} is not a valid branch, tag or commit.")
    return rev


def _check_repo_path(segments: list[str], text: str) -> str:
    """Validate an in-repo path: relative, no '.'/'..' segments, plain characters only."""
    decoded = [unquote(s) for s in segments]
    for seg in decoded:
        if seg in ("", ".", "..") or not _SEGMENT.fullmatch(seg):
            raise UsageError(f"{text!r} contains an unsafe or malformed in-repo path.",
                             hint="Paths inside a URL must be relative, without '..' or '//'.")
    return "/".join(decoded)
