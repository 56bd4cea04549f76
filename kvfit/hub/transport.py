"""Talk to the Hub through huggingface_hub: its session (session.py), its request headers and
token (build_hf_headers), its file URLs (hf_hub_url) and its errors (hf_raise_for_status, turned
into kvfit's paragraphs by failures.py).

What is kvfit's own: every file is read at a full commit sha (never at a branch), so a branch
that moves while kvfit runs cannot mix two commits; all of a plan's requests share one
--timeout budget; bodies are capped once decoded; weight-file headers are read with HTTP
Range requests that stop once the requested bytes arrived. Environment (HF_ENDPOINT,
HF_HUB_OFFLINE) is read when a client is made, not at import.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass

from ..checkpoint.metadata import FileEntry
from ..errors import ConfigError, HubError, UsageError
from ..textsafe import redact
from .deadline import Budget, check_timeout, read_capped, run_with_deadline
from .failures import HubUnreachable, Where, with_retries

FULL_SHA = re.compile(r"[0-9a-f]{40}")
_TRUE = ("1", "on", "yes", "true")


def hf_constants():
    """huggingface_hub.constants; UsageError when the library refuses the environment while
    importing them (HF_ENDPOINT='http://[::1' raises ValueError there)."""
    try:
        from huggingface_hub import constants
    except ValueError as exc:
        raise UsageError(f"HF_ENDPOINT {redact(os.environ.get('HF_ENDPOINT', ''))!r} is not a "
                         f"URL huggingface_hub accepts ({type(exc).__name__}).",
                         hint="Set HF_ENDPOINT to an http(s):// URL such as "
                         "https://huggingface.co, or unset it.") from None
    return constants


def current_endpoint() -> str:
    """The Hub endpoint: HF_ENDPOINT as set now, else huggingface_hub's default."""
    constants = hf_constants()
    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def offline_requested() -> bool:
    """HF_HUB_OFFLINE (or huggingface_hub's own offline flag) is on."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE:
        return True
    return hf_constants().is_offline_mode()


@dataclass(frozen=True, slots=True)
class RepoInfo:
    """A revision resolved by the Hub: full commit sha and every file with its size (bytes)."""

    repo_id: str
    sha: str
    files: tuple[FileEntry, ...]


MAX_INFO_BYTES = 64 * 2**20    # a model-info reply (decoded); thousands of files fit easily
MAX_FILE_BYTES_READ = 64 * 2**20  # a whole small file (config.json, index), decoded


class HubClient:
    """Reads repo info and files from one endpoint; all its requests (connect, headers and
    every body byte) and the waits between retries share one Budget of `timeout` seconds
    from `started` (a time.monotonic() reading; default: when the client is made), and
    bodies are capped once decoded."""

    def __init__(self, *, timeout: float = 10.0, endpoint: str | None = None, progress=None,
                 started: float | None = None):
        self.timeout = check_timeout(timeout)
        self.budget = Budget(self.timeout, started=started)
        self.progress = progress          # a kvfit.progress.Progress: one step per request
        if offline_requested():
            raise HubUnreachable("offline mode is on (HF_HUB_OFFLINE), so the Hub was not asked.")
        self.endpoint = (endpoint or current_endpoint()).rstrip("/")
        self.shown = redact(self.endpoint)  # the endpoint as messages may print it
        self._headers: dict | None = None

    def headers(self) -> dict:
        """huggingface_hub's request headers (token, user agent), built once per client."""
        if self._headers is None:
            self._headers = hub_headers()
        return dict(self._headers)

    def close(self) -> None:
        """Nothing to release: the session is the library's, shared and kept open."""

    def __enter__(self) -> HubClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def repo_info(self, repo_id: str, revision: str | None) -> RepoInfo:
        """Resolve `revision` (None = default branch) to a full sha, with file sizes.

        The request is HfApi.model_info(files_metadata=True)'s (hf_api.py: its URL and
        ?blobs=True), sent through the library's session as a stream, because model_info
        reads the whole reply into memory before returning and a reply from a hostile
        endpoint must stay capped; the two fields kvfit uses (sha, siblings) are then
        checked strictly here."""
        from urllib.parse import quote

        url = f"{self.endpoint}/api/models/{repo_id}" + (
            "" if revision is None else f"/revision/{quote(revision, safe='')}")
        where = Where(self.shown, repo_id, revision, None, self.timeout)
        self._step(where.what)

        def call() -> dict:
            body = self._stream(url, None, MAX_INFO_BYTES, where.what, params={"blobs": True})
            try:
                data = json.loads(body)
            except (ValueError, RecursionError):
                data = None
            if not isinstance(data, dict):
                raise HubError(f"{self.shown} answered {where.what} with something that is not a "
                               "JSON object.", hint="Is HF_ENDPOINT a Hugging Face Hub (or "
                               "compatible mirror)?")
            return data

        info = with_retries(call, where, self.budget.left)
        sha = info.get("sha")
        if not isinstance(sha, str) or not FULL_SHA.fullmatch(sha):
            raise HubError(f"{self.shown} returned no full commit sha for {where.what}.",
                           hint="Is HF_ENDPOINT a Hugging Face Hub (or compatible mirror)?")
        siblings = info.get("siblings") or []
        if not isinstance(siblings, list):
            raise HubError(f"{self.shown} listed the files of {where.what} as something that is "
                           "not a list; the answer is not from a genuine Hub.")
        files = tuple(_entry(s, self.shown, where.what) for s in siblings)
        return RepoInfo(repo_id, sha, tuple(sorted(files, key=lambda f: f.path)))

    def fetch(self, repo_id: str, sha: str, path: str) -> bytes:
        """The whole content of a (small) file at commit `sha`."""
        return self._get(repo_id, sha, path, None)

    def fetch_json(self, repo_id: str, sha: str, path: str) -> dict:
        """A JSON object file at commit `sha`; ConfigError if it is not a JSON object."""
        return parse_json_object(self.fetch(repo_id, sha, path), f"{repo_id}@{sha[:12]}/{path}")

    def read_range(self, repo_id: str, sha: str, path: str, start: int, length: int) -> bytes:
        """Up to `length` bytes of a file from byte offset `start` (HTTP Range request)."""
        return self._get(repo_id, sha, path, (start, length))

    def read_first(self, repo_id: str, revision: str, path: str, length: int) -> FirstRead:
        """Up to `length` bytes of a file from its start at `revision` (a branch, tag or sha),
        with the commit and file size the Hub's answer names: X-Repo-Commit and X-Linked-Size
        (of the resolve answer, a redirect for an LFS file), else the Content-Range total -
        the headers huggingface_hub's get_hf_file_metadata reads (file_download.py)."""
        seen: dict = {}
        data = self._get(repo_id, revision, path, (0, length), seen)
        return FirstRead(data, _commit_of(seen["hops"]), _size_of(seen["hops"]))

    def _get(self, repo_id: str, sha: str, path: str, span: tuple[int, int] | None,
             seen: dict | None = None) -> bytes:
        """GET the resolve URL at `sha`, optionally ranged; reads at most the span's length."""
        url = file_url(self.endpoint, repo_id, sha, path)
        where = Where(self.shown, repo_id, sha, path, self.timeout)
        self._step(where.what)
        return with_retries(lambda: self._stream(url, span, MAX_FILE_BYTES_READ, where.what,
                                                 seen=seen), where, self.budget.left)

    def _step(self, what: str) -> None:
        if self.progress is not None:
            self.progress.step(f"reading {what}")

    def _stream(self, url: str, span: tuple[int, int] | None, cap: int, what: str, *,
                params: dict | None = None, seen: dict | None = None) -> bytes:
        """One GET through the library's session under the whole-request deadline; error
        answers raised by hf_raise_for_status; the body decoded and capped. `seen` receives
        "hops": the headers of every answer on the way (redirects, then the last)."""
        headers = self.headers()
        if span is not None:
            headers["Range"] = f"bytes={span[0]}-{span[0] + span[1] - 1}"
        left = self.budget.left()

        def work(deadline) -> bytes:
            from huggingface_hub.utils import hf_raise_for_status

            from .session import limited

            with limited(deadline, cap, what) as session, session.stream(
                    "GET", url, params=params, headers=headers, timeout=max(left, 0.001),
                    follow_redirects=True) as resp:
                hf_raise_for_status(resp)
                deadline.check()
                if span is not None and resp.status_code == 200 and span[0] > 0:
                    raise HubError(f"{self.shown} ignored an HTTP Range request for {what}.")
                if seen is not None:
                    seen["hops"] = [*(r.headers for r in resp.history), resp.headers]
                return read_capped(resp.iter_bytes(), deadline, cap=cap, what=what,
                                   want=span[1] if span else None)

        return run_with_deadline(work, left)


_TELEMETRY_TOGGLE = threading.Lock()


def hub_headers() -> dict[str, str]:
    """huggingface_hub's build_hf_headers for kvfit: the token the library would send (HF_TOKEN,
    the stored token, HF_HUB_DISABLE_IMPLICIT_TOKEN) and a kvfit user agent. kvfit sends no
    telemetry, so the user agent is built with the library's telemetry off: otherwise it asks
    the endpoint for its agent-harness registry (utils/_detect_agent.py), a request a plan has
    no use for. build_hf_headers has no parameter for that, so its module-level switch
    (constants.HF_HUB_DISABLE_TELEMETRY) is turned on for the call and the user's setting
    restored at once; _TELEMETRY_TOGGLE makes the switch one thread's at a time, so plans
    made from several threads neither restore each other's value nor build with it off."""
    from huggingface_hub.utils import build_hf_headers

    from .. import __version__

    constants = hf_constants()
    with _TELEMETRY_TOGGLE:
        was = constants.HF_HUB_DISABLE_TELEMETRY
        constants.HF_HUB_DISABLE_TELEMETRY = True
        try:
            return build_hf_headers(library_name="kvfit", library_version=__version__)
        finally:
            constants.HF_HUB_DISABLE_TELEMETRY = was


class FirstRead:
    """The first bytes of a file, with the commit and total size its answer named (None when
    the answer did not say)."""

    __slots__ = ("data", "commit", "size")

    def __init__(self, data: bytes, commit: str | None, size: int | None):
        self.data, self.commit, self.size = data, commit, size


def _commit_of(hops: list) -> str | None:
    """The first X-Repo-Commit on the way that is a full sha."""
    for headers in hops:
        value = (headers.get("X-Repo-Commit") or "").strip()
        if FULL_SHA.fullmatch(value):
            return value
    return None


def _size_of(hops: list) -> int | None:
    """X-Linked-Size (an LFS file's size, on the resolve redirect), else the last answer's
    Content-Range total ("bytes a-b/total"); None if neither is a byte count."""
    for headers in hops:
        size = byte_count(headers.get("X-Linked-Size"))
        if size is not None:
            return size
    return byte_count((hops[-1].get("Content-Range") or "").rpartition("/")[2])


MAX_COUNT_DIGITS = 16      # 10**16 bytes: above MAX_FILE_BYTES, far below int()'s digit limit


def byte_count(text: str | None) -> int | None:
    """A header's byte count: ASCII digits only, at most MAX_COUNT_DIGITS of them, at most
    MAX_FILE_BYTES; None for anything else ("*", "1e3", a 5,000-digit number, a superscript digit)."""
    text = (text or "").strip()
    if not text or len(text) > MAX_COUNT_DIGITS or not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if value <= MAX_FILE_BYTES else None


def file_url(endpoint: str, repo_id: str, revision: str, path: str) -> str:
    """A file's resolve URL for a model repo on `endpoint` (huggingface_hub.hf_hub_url)."""
    hf_constants()
    from huggingface_hub import hf_hub_url

    return hf_hub_url(repo_id, path, revision=revision, endpoint=endpoint)


MAX_FILE_BYTES = 2**50      # 1 PiB: no single checkpoint file is larger
MAX_PATH_CHARS = 1024


def _entry(sibling, endpoint: str, what: str) -> FileEntry:
    """One model_info sibling as a FileEntry; HubError unless its name is a plain relative
    path and its size (LFS size first) an integer byte count from 0 to MAX_FILE_BYTES."""
    if not isinstance(sibling, dict):
        raise HubError(f"{endpoint} listed a file entry {str(sibling)[:80]!r} for {what}, which "
                       "is not an object; the answer is not from a genuine Hub.")
    name = sibling.get("rfilename")
    if (not isinstance(name, str) or not name or len(name) > MAX_PATH_CHARS
            or name.startswith("/") or any(part in ("", ".", "..") for part in name.split("/"))
            or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name)):
        raise HubError(f"{endpoint} listed a file named {str(name)[:80]!r} for {what}, which is "
                       "not a plain relative path; the answer is not from a genuine Hub.")
    lfs = sibling.get("lfs")
    size = lfs.get("size") if isinstance(lfs, dict) and lfs.get("size") is not None \
        else sibling.get("size")
    if size is None:
        return FileEntry(name, None)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_FILE_BYTES:
        raise HubError(f"{endpoint} listed {name} with size {repr(size)[:40]} for {what}, which "
                       f"is not a byte count from 0 to {MAX_FILE_BYTES:,}; the answer is not "
                       "from a genuine Hub.")
    return FileEntry(name, size)


def parse_json_object(data: bytes, name: str) -> dict:
    """Decode a JSON object strictly (kvfit.checkpoint.jsonfile rules); ConfigError otherwise."""
    from ..checkpoint.jsonfile import parse_json

    value = parse_json(data, name)
    if not isinstance(value, dict):
        raise ConfigError(f"{name} holds a JSON {type(value).__name__}, not an object.")
    return value
