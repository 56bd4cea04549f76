"""A threaded HTTP server on 127.0.0.1 speaking the Hub endpoints huggingface_hub calls.

  GET  /api/models/{org}/{name}[/revision/{rev}]   model info; ?blobs=True adds sizes + lfs
  GET|HEAD /{org}/{name}/resolve/{rev}/{path}      file at a branch or sha (Range supported);
       LFS files answer 302 to /_cdn/{sha256} on "localhost" (another origin, like the
       real CDN) with X-Linked-Etag / X-Linked-Size; others 200/206 with ETag
  GET|HEAD /_cdn/{sha256}                          LFS content (Range supported)
Every resolve answer carries X-Repo-Commit; errors carry X-Error-Code like the Hub's.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from .state import LFS_SUFFIXES, Blob, Hit, HubState

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class _Reply:
    """A response to send: status, headers, body."""

    def __init__(self, status: int, body: bytes = b"", headers: dict | None = None):
        self.status, self.body, self.headers = status, body, dict(headers or {})


TLS = Path(__file__).resolve().parents[1] / "fixtures" / "tls"
TEST_CA = TLS / "ca.pem"        # trusts the hub's certificate (tests/fixtures/tls/README.md)


class HubServer:
    """Start with .start(); .url is the endpoint; .state holds repos, faults and the log.
    tls: serve HTTPS with the test certificate (127.0.0.1 and localhost, signed by TEST_CA)."""

    def __init__(self, state: HubState | None = None, cdn_host: str = "localhost",
                 tls: bool = False):
        self.state = state or HubState()
        self.cdn_host = cdn_host
        self.stopping = threading.Event()
        handler = type("Handler", (_Handler,), {"hub": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.scheme = "https" if tls else "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(TLS / "hub.pem", TLS / "hub.key")
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"{self.scheme}://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                        daemon=True)

    def start(self) -> HubServer:
        """Serve in a background thread; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release any delayed request, stop serving and close the socket."""
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes; without this, Nagle's algorithm and
        # delayed ACKs add ~40 ms to every keep-alive request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._serve()

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve()

    def _serve(self) -> None:
        """Route, apply an injected fault if one matches, log the hit, answer."""
        url = urlsplit(self.path)
        kind, repo_id, rev, path = _route(url.path)
        hit = Hit(self.command, kind, repo_id, rev, path if kind != "unknown" else url.path,
                  self.headers.get("Range"), self.headers.get("Authorization") is not None,
                  self.headers.get("User-Agent"))
        fault = self.hub.state.fault_for(kind, repo_id, path)
        if fault is not None and fault.delay and self.hub.stopping.wait(fault.delay):
            return
        if fault is not None and fault.body is not None:
            reply = _Reply(fault.status or 200, fault.body, fault.headers)
        elif fault is not None and fault.status is not None:
            reply = _error(fault.status, fault.error_code or "", "injected fault")
            if fault.retry_after is not None:
                reply.headers["Retry-After"] = f"{fault.retry_after:g}"
        else:
            reply = self._answer(kind, repo_id, rev, path, parse_qs(url.query))
        self.hub.state.record(hit)
        if fault is not None and fault.drip is not None:
            self._drip(reply, fault.drip)
            return
        self._send(reply, fault.truncate if fault else None)

    def _drip(self, reply: _Reply, every: float) -> None:
        """Headers for a large body, then one byte per `every` seconds, never finishing."""
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(2**30))
        self.end_headers()
        self.close_connection = True
        try:
            while not self.hub.stopping.wait(every):
                self.wfile.write(b" ")
                self.wfile.flush()
        except OSError:          # the client gave up
            return

    def _answer(self, kind, repo_id, rev, path, query) -> _Reply:
        """The normal (fault-free) reply for a routed request."""
        state = self.hub.state
        with state.lock:
            if kind == "cdn":
                return _cdn(state, path, self.headers.get("Range"))
            repo = state.repos.get(repo_id) if repo_id else None
            if kind == "unknown" or repo is None:
                return _error(404, "RepoNotFound", "Repository not found")
            denied = _access(repo, self.headers.get("Authorization"), kind)
            if denied is not None:
                return denied
            sha = repo.resolve(rev)
            if sha is None:
                return _error(404, "RevisionNotFound", "Invalid rev id")
            if kind == "api":
                return _model_info(repo, sha, query.get("blobs", [""])[0].lower() == "true")
            return self._file(repo, sha, path)

    def _file(self, repo, sha: str, path: str) -> _Reply:
        """A resolve reply: LFS files redirect to the CDN origin, others are served here."""
        blob = repo.commits[sha].get(path)
        commit = {"X-Repo-Commit": sha}
        if blob is None:
            return _error(404, "EntryNotFound", "Entry not found", commit)
        if path.endswith(LFS_SUFFIXES):
            location = (f"{self.hub.scheme}://{self.hub.cdn_host}:{self.hub.port}/_cdn/"
                        f"{blob.sha256}")
            return _Reply(302, b"", {**commit, "Location": location,
                                     "X-Linked-Etag": f'"{blob.sha256}"',
                                     "X-Linked-Size": str(blob.size)})
        reply = _ranged(blob, self.headers.get("Range"))
        reply.headers.update({**commit, "ETag": f'"{blob.git_oid}"'})
        return reply

    def _send(self, reply: _Reply, truncate: int | None) -> None:
        """Write the reply; with `truncate`, stop after that many body bytes and hang up."""
        body = reply.body
        self.send_response(reply.status)
        reply.headers.setdefault("Content-Type", "application/octet-stream")
        reply.headers["Content-Length"] = reply.headers.get("Content-Length", str(len(body)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        if truncate is not None:
            self.wfile.write(body[:truncate])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def _route(raw_path: str) -> tuple[str, str | None, str | None, str | None]:
    """(kind, repo id, revision, in-repo path) from a request path (segments unquoted)."""
    parts = raw_path.split("/")[1:]
    if parts[:2] == ["api", "models"] and len(parts) >= 4:
        repo_id = f"{unquote(parts[2])}/{unquote(parts[3])}"
        if len(parts) == 4:
            return "api", repo_id, None, None
        if len(parts) == 6 and parts[4] == "revision":
            return "api", repo_id, unquote(parts[5]), None
    if len(parts) >= 5 and parts[2] == "resolve":
        repo_id = f"{unquote(parts[0])}/{unquote(parts[1])}"
        return "resolve", repo_id, unquote(parts[3]), unquote("/".join(parts[4:]))
    if len(parts) == 2 and parts[0] == "_cdn":
        return "cdn", None, None, parts[1]
    return "unknown", None, None, None


def _access(repo, authorization: str | None, kind: str) -> _Reply | None:
    """Private repos hide from anyone without a listed token; gated repos hide their files."""
    token = (authorization or "").removeprefix("Bearer ").strip() or None
    if repo.private and token not in repo.tokens:
        return _error(401 if token is None else 404, "RepoNotFound", "Repository not found")
    if repo.gated and kind == "resolve" and token not in repo.tokens:
        return _error(401 if token is None else 403, "GatedRepo", "Access to model is restricted")
    return None


def _model_info(repo, sha: str, blobs: bool) -> _Reply:
    """The /api/models JSON: id, sha and siblings (with size/blobId/lfs when blobs=True)."""
    siblings = []
    for path, blob in sorted(repo.commits[sha].items()):
        entry: dict = {"rfilename": path}
        if blobs:
            entry.update(size=blob.size, blobId=blob.git_oid)
            if path.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"size": blob.size, "sha256": blob.sha256, "pointerSize": 134}
        siblings.append(entry)
    doc = {"_id": sha[:24], "id": repo.repo_id, "modelId": repo.repo_id, "sha": sha,
           "private": repo.private, "gated": "auto" if repo.gated else False, "disabled": False,
           "tags": [], "downloads": 0, "likes": 0, "siblings": siblings,
           "lastModified": "2025-01-01T00:00:00.000Z", "createdAt": "2025-01-01T00:00:00.000Z"}
    return _Reply(200, json.dumps(doc).encode(), {"Content-Type": "application/json"})


def _cdn(state: HubState, digest: str, range_header: str | None) -> _Reply:
    """LFS content by sha256, as the Hub's CDN serves it."""
    for repo in state.repos.values():
        for files in repo.commits.values():
            for blob in files.values():
                if blob.sha256 == digest:
                    return _ranged(blob, range_header)
    return _Reply(404, b"no such object")


def _ranged(blob: Blob, range_header: str | None) -> _Reply:
    """200 with the whole file, or 206/416 for a single 'bytes=a-b' range."""
    match = _RANGE.match(range_header or "")
    if not match or match.groups() == ("", ""):
        return _Reply(200, blob.read(0, blob.size), {"Accept-Ranges": "bytes"})
    first, last = match.groups()
    if first == "":
        start, end = max(0, blob.size - int(last)), blob.size
    else:
        start, end = int(first), min(blob.size, int(last) + 1 if last else blob.size)
    if start >= blob.size:
        return _Reply(416, b"", {"Content-Range": f"bytes */{blob.size}"})
    return _Reply(206, blob.read(start, end), {"Content-Range": f"bytes {start}-{end - 1}/"
                                                                f"{blob.size}"})


def _error(status: int, code: str, message: str, extra: dict | None = None) -> _Reply:
    """A Hub-style error: JSON body plus X-Error-Code / X-Error-Message headers."""
    headers = {"Content-Type": "application/json", **(extra or {})}
    if code:
        headers["X-Error-Code"] = code
    headers["X-Error-Message"] = message
    return _Reply(status, json.dumps({"error": message}).encode(), headers)
