"""A small forwarding HTTP proxy on 127.0.0.1 for tests: it takes absolute-URI GET requests
(what a client sends to an http:// proxy), logs them and relays them to their origin. A
CONNECT (an https:// URL through the proxy) is logged, then refused with 502, or with
tunnel=True answered 200 and relayed byte for byte (to a test hub serving TLS)."""

from __future__ import annotations

import http.client
import select
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authorization", "proxy-connection", "te",
               "trailer", "transfer-encoding", "upgrade", "content-length"}


class ForwardingProxy:
    """Start with .start(); .url is the proxy URL; .log lists (absolute URL, had Authorization)."""

    def __init__(self, tunnel: bool = False):
        self.tunnel = tunnel
        self.log: list[tuple[str, bool]] = []
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"proxy": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                        daemon=True)

    def start(self) -> ForwardingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    proxy: ForwardingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        with self.proxy.lock:
            self.proxy.log.append((self.path, self.headers.get("Authorization") is not None))
        target = urlsplit(self.path)
        if target.scheme != "http" or not target.hostname:
            self.send_error(400, "absolute http:// URL expected")
            return
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream.request("GET", target.path + (f"?{target.query}" if target.query else ""),
                         headers=headers)
        reply = upstream.getresponse()
        body = reply.read()
        upstream.close()
        self.send_response(reply.status)
        for key, value in reply.getheaders():
            if key.lower() not in _HOP_BY_HOP:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self) -> None:  # noqa: N802
        with self.proxy.lock:
            self.proxy.log.append((f"CONNECT {self.path}",
                                   self.headers.get("Authorization") is not None))
        host, _, port = self.path.rpartition(":")
        if not self.proxy.tunnel or host not in ("127.0.0.1", "localhost"):
            self.send_error(502, "no tunnels here")
            return
        upstream = socket.create_connection((host, int(port)), timeout=30)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.close_connection = True
        _relay(self.connection, upstream)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    pair = {a: b, b: a}
    try:
        while True:
            ready, _, _ = select.select(list(pair), [], [], 30)
            if not ready:
                return
            for sock in ready:
                data = sock.recv(65536)
                if not data:
                    return
                pair[sock].sendall(data)
    except OSError:
        return
    finally:
        b.close()
