"""GET requests with the standard library's http.client, behaving as huggingface_hub's session does.

huggingface_hub 2.4's session is an httpx2 client, whose import (httpx2, httpcore2, h11, anyio,
idna, truststore, email, http.cookiejar and importlib.metadata for its version) costs more than
the rest of a warm plan: measured 2026-12-01, a warm Hub plan on a branch took 361 ms cpu and
36.7 MiB against 151 ms and 23.5 MiB for the local plan; with http.client, 182 ms and 27.6 MiB
against 147 ms and 23.4 MiB (bench/speed_table.py). kvfit makes at most a few small GETs, so
it uses the standard library's well-kept client (a deviation from "use the library's session",
made for that cost) and keeps what the library's client does for these requests:

- redirects followed (up to MAX_REDIRECTS), the Authorization header dropped when a redirect
  leaves the origin (httpx2 Client._redirect_headers: except a same-host http -> https move),
  every other header (Range) kept;
- proxies from the environment (urllib.request.getproxies / proxy_bypass, which httpx2's
  get_environment_proxies reads too), CONNECT tunnels for https;
- TLS verified: SSL_CERT_FILE, else SSL_CERT_DIR, else the platform's store (httpcore2
  default_ssl_context; REQUESTS_CA_BUNDLE is honoured by neither library, so not here);
- gzip / deflate bodies decoded in bounded pieces (callers cap the decoded size);
- keep-alive connections reused per origin within one client.

Errors: HttpStatusError (an answer with status >= 400: status and headers, read by
failures.py as hf_raise_for_status reads them), ConnectFailed (no connection was made),
Dropped (the connection broke before the answer was complete).
"""

from __future__ import annotations

import http.client
import os
import sys
import threading
import zlib
from collections.abc import Iterator
from urllib.parse import unquote, urljoin, urlsplit

MAX_REDIRECTS = 20           # httpx2's DEFAULT_MAX_REDIRECTS
CHUNK = 64 * 1024
ACCEPT_ENCODING = "gzip, deflate"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORT = {"http": 80, "https": 443}
# Where distributions keep their CA bundle, for an OpenSSL whose compiled-in paths are absent
# (the same well-known locations truststore and httpcore2 fall back on).
CA_FILE_CANDIDATES = ("/etc/ssl/cert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
                      "/etc/pki/tls/cert.pem", "/etc/ssl/certs/ca-certificates.crt",
                      "/etc/ssl/ca-bundle.pem")


class HttpStatusError(Exception):
    """The server answered `status` >= 400 with `headers` (an http.client.HTTPMessage)."""

    def __init__(self, status: int, headers, url: str):
        super().__init__(f"HTTP {status} for {url}")
        self.status, self.headers, self.url = status, headers, url


class ConnectFailed(OSError):
    """No connection to the server (DNS, refused, TLS handshake, unsupported scheme or proxy);
    `detail` names the cause."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class Dropped(OSError):
    """The connection closed (or reset) before the full answer arrived."""


_DROPS = (http.client.RemoteDisconnected, http.client.IncompleteRead, ConnectionResetError,
          BrokenPipeError, ConnectionAbortedError, http.client.BadStatusLine)


class Response:
    """An answer being read: status, headers, final url; chunks() yields the decoded body."""

    def __init__(self, pool: Connections, key, conn, raw: http.client.HTTPResponse, url: str):
        self._pool, self._key, self._conn, self._raw = pool, key, conn, raw
        self.status, self.headers, self.url = raw.status, raw.msg, url
        self.hops: list = []     # the headers of each redirect answer that led here

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def chunks(self) -> Iterator[bytes]:
        """The body, decoded (gzip / deflate), in pieces of at most about CHUNK bytes."""
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding in ("", "identity"):
            yield from self._raw_chunks()
            return
        if encoding not in ("gzip", "x-gzip", "deflate"):
            raise Dropped(f"the answer uses Content-Encoding {encoding!r}, which kvfit did not "
                          "ask for")
        # 16 + MAX_WBITS: gzip framing; 32 + MAX_WBITS: zlib or gzip, detected (deflate)
        inflate = zlib.decompressobj((16 if encoding != "deflate" else 32) + zlib.MAX_WBITS)
        try:
            for raw in self._raw_chunks():
                while raw:
                    piece = inflate.decompress(raw, CHUNK)
                    raw = inflate.unconsumed_tail
                    if piece:
                        yield piece
            tail = inflate.flush()
        except zlib.error as exc:
            raise Dropped(f"the {encoding} body does not decode ({exc})") from None
        if tail:
            yield tail

    def _raw_chunks(self) -> Iterator[bytes]:
        try:
            while chunk := self._raw.read(CHUNK):
                yield chunk
        except _DROPS as exc:
            raise Dropped(f"{exc.__class__.__name__} while reading the body") from None
        if self._raw.length:        # read(n) ends quietly when the peer hangs up early
            raise Dropped(f"the body ended {self._raw.length:,} bytes short of its "
                          "Content-Length")

    def close(self) -> None:
        """Hand a fully read keep-alive connection back to the pool; close anything else."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._raw.isclosed() and not self._raw.will_close:
            self._pool.put(self._key, conn)
        else:
            self._raw.close()
            conn.close()


class Connections:
    """Keep-alive connections per (scheme, host, port, proxy), shared by a client's threads."""

    def __init__(self):
        self._idle: dict[tuple, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    def get(self, url: str, headers: dict[str, str], timeout: float) -> Response:
        """GET `url`, following redirects; HttpStatusError for an answer >= 400."""
        headers = {"Accept-Encoding": ACCEPT_ENCODING, **headers}
        hops: list = []
        for _ in range(MAX_REDIRECTS + 1):
            resp = self._once(url, headers, timeout)
            if resp.status not in _REDIRECTS or not resp.headers.get("Location"):
                if resp.status >= 400:
                    _drain(resp)
                    raise HttpStatusError(resp.status, resp.headers, url)
                resp.hops = hops
                return resp
            target = urljoin(url, resp.headers["Location"])
            hops.append(resp.headers)
            _drain(resp)
            if _origin(target) != _origin(url) and not _https_upgrade(url, target):
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            url = target
        raise Dropped(f"more than {MAX_REDIRECTS} redirects")

    def _once(self, url: str, headers: dict[str, str], timeout: float) -> Response:
        """One request on a pooled connection (a stale idle one is replaced once)."""
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORT or not parts.hostname:
            raise ConnectFailed(f"unsupported URL {parts.scheme}://{parts.hostname or ''}")
        proxy = _proxy_for(parts.scheme, parts.hostname)
        key = (parts.scheme, parts.hostname, parts.port, proxy)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if proxy and parts.scheme == "http":        # a plain proxy takes the absolute URL
            netloc = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
            target = f"http://{netloc}{target}"
        sent = dict(headers)
        if parts.username is not None:       # user:password@ in the URL: Basic auth, as httpx2
            sent = {k: v for k, v in sent.items() if k.lower() != "authorization"}
            sent["Authorization"] = _basic(parts.username, parts.password)
        if proxy and parts.scheme == "http" and (auth := _proxy_auth(proxy)):
            sent["Proxy-Authorization"] = auth
        for attempt in (1, 2):
            conn = self._take(key)
            reused = conn is not None
            if conn is None:
                conn = _connect(parts, proxy, timeout)
            try:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                conn.request("GET", target, headers=sent)
                raw = conn.getresponse()
            except _DROPS as exc:
                conn.close()
                if reused and attempt == 1:       # the server closed an idle connection
                    continue
                raise Dropped(f"{exc.__class__.__name__} before the answer") from None
            except TimeoutError:
                conn.close()
                raise
            except OSError as exc:
                conn.close()
                if reused and attempt == 1:
                    continue
                raise Dropped(f"{_describe(exc)} before the answer") from None
            return Response(self, key, conn, raw, url)
        raise AssertionError("unreachable")  # pragma: no cover

    def _take(self, key) -> http.client.HTTPConnection | None:
        with self._lock:
            idle = self._idle.get(key)
            return idle.pop() if idle else None

    def put(self, key, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.setdefault(key, []).append(conn)

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()


def _connect(parts, proxy: str | None, timeout: float) -> http.client.HTTPConnection:
    """A connected HTTP(S) connection to the URL's origin, directly or through `proxy`."""
    port = parts.port or _DEFAULT_PORT[parts.scheme]
    host, conn_port = parts.hostname, port
    if proxy:
        p = urlsplit(proxy)
        if p.scheme != "http" or not p.hostname:
            raise ConnectFailed(f"proxy {p.scheme}://{p.hostname or ''} is not an http:// proxy, "
                                "the only kind kvfit can use")
        host, conn_port = p.hostname, p.port or 80
    try:
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(host, conn_port, timeout=timeout,
                                               context=tls_context())
            if proxy:
                auth = _proxy_auth(proxy)
                conn.set_tunnel(parts.hostname, port,
                                headers={"Proxy-Authorization": auth} if auth else None)
        else:
            conn = http.client.HTTPConnection(host, conn_port, timeout=timeout)
        conn._create_connection = _create_connection      # http.client's connect hook
        conn.connect()
    except TimeoutError:
        raise
    except OSError as exc:
        raise ConnectFailed(_describe(exc)) from None
    return conn


def _create_connection(address: tuple, timeout, source_address=None):
    """socket.create_connection with an ASCII host name given as bytes. CPython's getaddrinfo
    encodes a str host with the idna codec, whose import (encodings.idna, stringprep and
    unicodedata: about 1 ms and 0.4 MiB) a plain-http endpoint otherwise pays; for https the
    ssl module encodes the server name that way anyway. An ASCII name is the same bytes either
    way, and one the codec would refuse (an empty label, "a..b") is refused by the resolver
    instead, as an OSError (ConnectFailed) rather than a UnicodeError."""
    import socket

    host, port = address
    if isinstance(host, str) and host.isascii():
        host = host.encode("ascii")
    return socket.create_connection((host, port), timeout, source_address)


_TLS: list = []


def tls_context():
    """The verifying SSLContext, built once: SSL_CERT_FILE, else SSL_CERT_DIR, else the
    platform's trust store (truststore on Windows and macOS, as httpcore2 does; OpenSSL's
    default paths, or a distribution's CA bundle, elsewhere)."""
    if _TLS:
        return _TLS[0]
    import ssl

    if cafile := os.environ.get("SSL_CERT_FILE"):
        ctx = ssl.create_default_context(cafile=cafile)
    elif capath := os.environ.get("SSL_CERT_DIR"):
        ctx = ssl.create_default_context(capath=capath)
    elif sys.platform in ("win32", "darwin") and _truststore() is not None:
        ctx = _truststore().SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    else:
        ctx = ssl.create_default_context()
        paths = ssl.get_default_verify_paths()
        if not (os.path.isfile(paths.openssl_cafile) or os.path.isdir(paths.openssl_capath)):
            fallback = next(filter(os.path.isfile, CA_FILE_CANDIDATES), None)
            if fallback:
                ctx.load_verify_locations(fallback)
    _TLS.append(ctx)
    return ctx


def _truststore():
    try:
        import truststore
    except ImportError:
        return None
    return truststore


def _proxy_for(scheme: str, host: str) -> str | None:
    """The proxy URL for `scheme` to `host` from the environment (and, on Windows and macOS, the
    system settings), or None; urllib.request is imported only when a proxy may be set."""
    if sys.platform not in ("win32", "darwin") and not any(
            name.lower().endswith("_proxy") for name in os.environ):
        return None
    import urllib.request

    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _proxy_auth(proxy: str) -> str | None:
    """A Basic Proxy-Authorization value from the proxy URL's user:password, if any."""
    p = urlsplit(proxy)
    return None if p.username is None else _basic(p.username, p.password)


def _basic(username: str, password: str | None) -> str:
    """A Basic credentials value from a URL's (percent-encoded) user and password."""
    import base64

    pair = f"{unquote(username)}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _origin(url: str) -> tuple[str, str, int]:
    p = urlsplit(url)
    return p.scheme, (p.hostname or "").lower(), p.port or _DEFAULT_PORT.get(p.scheme, 0)


def _https_upgrade(src: str, dst: str) -> bool:
    """http://host[:80] -> https://host[:443]: the one cross-origin move that keeps credentials."""
    a, b = _origin(src), _origin(dst)
    return a[0] == "http" and b[0] == "https" and a[1] == b[1] and a[2] == 80 and b[2] == 443


MAX_DRAIN = 2**20


def _drain(resp: Response) -> None:
    """Read a redirect's or an error's (small) body, up to MAX_DRAIN bytes, so that its
    connection can be reused (closing with unread bytes would reset it), then release it."""
    if resp._raw.length is None or resp._raw.length <= MAX_DRAIN:
        seen = 0
        try:
            for chunk in resp._raw_chunks():
                seen += len(chunk)
                if seen > MAX_DRAIN:
                    break
        except Dropped:
            pass
    resp.close()


def _describe(exc: OSError) -> str:
    """'ConnectionRefusedError' or 'SSLCertVerificationError: certificate verify failed ...'."""
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None)
    return f"{exc.__class__.__name__}: {reason}" if reason else exc.__class__.__name__
