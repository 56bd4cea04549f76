"""What the test hub serves: repos, commits, branches, injected faults, and a request log."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

LFS_SUFFIXES = (".safetensors", ".gguf", ".bin", ".pth", ".pt")
_HEX40 = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Blob:
    """File content: real bytes `data`, then zeros up to `size` (lets tests serve huge files)."""

    data: bytes
    size: int

    @classmethod
    def of(cls, content: bytes | Blob) -> Blob:
        return content if isinstance(content, Blob) else cls(content, len(content))

    def read(self, start: int, end: int) -> bytes:
        """Bytes [start, end) of the file."""
        head = self.data[start:end]
        return head + b"\0" * max(0, end - max(start, len(self.data)))

    @cached_property
    def sha256(self) -> str:
        return self._digest(hashlib.sha256)

    @cached_property
    def git_oid(self) -> str:
        return self._digest(hashlib.sha1, b"blob %d\0" % self.size)

    def _digest(self, algo, prefix: bytes = b"") -> str:
        """Real digest for small files; a stable stand-in for huge zero-padded ones."""
        if self.size <= 2**26:
            return algo(prefix + self.read(0, self.size)).hexdigest()
        return algo(prefix + self.data + b"%d" % self.size).hexdigest()


@dataclass
class Repo:
    """One model repo: commits {sha: {path: Blob}}, refs {branch: sha}, access settings."""

    repo_id: str
    commits: dict[str, dict[str, Blob]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    private: bool = False
    gated: bool = False
    tokens: set[str] = field(default_factory=set)

    def resolve(self, rev: str | None) -> str | None:
        """A branch name or full sha -> full sha (None if unknown)."""
        rev = rev or "main"
        return self.refs.get(rev) or (rev if rev in self.commits else None)


@dataclass
class Fault:
    """An injected failure for requests matching kind/repo/path (None = any).

    kind: "api" | "resolve" | "cdn"; path: fnmatch pattern on the in-repo path.
    status (+ error_code -> X-Error-Code, retry_after -> Retry-After), delay (s) before
    answering, truncate: send only this many body bytes then drop the connection.
    times: apply to the first N matching requests only (None = always).
    body (+ headers): answer with these bytes instead (status defaults to 200) - hostile
    model info, gzip bombs (headers={"Content-Encoding": "gzip"}).
    drip: after the headers, send one body byte every `drip` seconds until the client hangs
    up or the server stops (a body that never ends).
    """

    status: int | None = None
    error_code: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    truncate: int | None = None
    times: int | None = None
    kind: str | None = None
    repo: str | None = None
    path: str | None = None
    body: bytes | None = None
    headers: dict | None = None
    drip: float | None = None

    def matches(self, kind: str, repo: str | None, path: str | None) -> bool:
        return ((self.kind is None or self.kind == kind)
                and (self.repo is None or self.repo == repo)
                and (self.path is None or (path is not None and fnmatch.fnmatch(path, self.path))))


@dataclass(frozen=True)
class Hit:
    """One logged request."""

    method: str
    kind: str
    repo: str | None
    rev: str | None
    path: str | None
    range: str | None
    authorized: bool = False       # the request carried an Authorization header
    user_agent: str | None = None


class HubState:
    """Thread-safe store behind the server."""

    def __init__(self):
        self.repos: dict[str, Repo] = {}
        self.faults: list[Fault] = []
        self.log: list[Hit] = []
        self.hooks: list[Callable[[Hit], None]] = []
        self.lock = threading.RLock()

    def add_commit(self, repo_id: str, files: dict[str, bytes | Blob], *, branch: str | None
                   = "main", salt: str = "") -> str:
        """Add a commit with exactly `files`; moves `branch` to it. Returns its sha."""
        blobs = {p: Blob.of(c) for p, c in files.items()}
        digest = hashlib.sha1(repo_id.encode() + salt.encode())
        for path in sorted(blobs):
            digest.update(f"{path}\0{blobs[path].git_oid}\0".encode())
        sha = digest.hexdigest()
        with self.lock:
            repo = self.repos.setdefault(repo_id, Repo(repo_id))
            repo.commits[sha] = blobs
            if branch:
                repo.refs[branch] = sha
        return sha

    def move_ref(self, repo_id: str, branch: str, sha: str) -> None:
        with self.lock:
            self.repos[repo_id].refs[branch] = sha

    def load_tree(self, root: Path, extra: dict[str, dict[str, bytes | Blob]] | None = None
                  ) -> None:
        """Load <root>/<org>--<name>/<sha-or-branch>/... (+ optional refs.json per repo).

        extra: {repo id: files} added to every commit of that repo (generated weights).
        """
        for repo_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            repo_id = repo_dir.name.replace("--", "/", 1)
            for commit_dir in sorted(p for p in repo_dir.iterdir() if p.is_dir()):
                files = {str(f.relative_to(commit_dir)): f.read_bytes()
                         for f in sorted(commit_dir.rglob("*")) if f.is_file()}
                files.update((extra or {}).get(repo_id, {}))
                hexname = _HEX40.fullmatch(commit_dir.name)
                sha = self.add_commit(repo_id, files, branch=None if hexname else commit_dir.name)
                if hexname:
                    repo = self.repos[repo_id]
                    repo.commits[commit_dir.name] = repo.commits.pop(sha)
            refs = repo_dir / "refs.json"
            if refs.is_file():
                self.repos[repo_id].refs.update(json.loads(refs.read_text()))

    def fault_for(self, kind: str, repo: str | None, path: str | None) -> Fault | None:
        """The first matching fault (consuming one use of a counted fault)."""
        with self.lock:
            for fault in self.faults:
                if fault.matches(kind, repo, path) and (fault.times is None or fault.times > 0):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def record(self, hit: Hit) -> None:
        with self.lock:
            self.log.append(hit)
            hooks = list(self.hooks)
        for hook in hooks:
            hook(hit)

    def count(self, kind: str | None = None, repo: str | None = None) -> int:
        """Requests logged so far, optionally of one kind / repo."""
        with self.lock:
            return sum(1 for h in self.log if (kind is None or h.kind == kind)
                       and (repo is None or h.repo == repo))

    def reset(self) -> None:
        """Forget logged requests and faults (repos stay)."""
        with self.lock:
            self.log.clear()
            self.faults.clear()
            self.hooks.clear()
