"""Hostile HTTP servers on 127.0.0.1: raw sockets that answer every request with a script's
bytes (broken chunk framing, endless bodies, slow drips, huge or non-ASCII headers, redirect
loops, cross-origin redirects), for tests and bench/hub_hostile.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from functools import cache

SHA = "c0ffee" + "0" * 34
BLOCK = b"x" * 65536


class RawServer:
    """Answers each connection's first request with script(server, conn, path); .requests
    holds every request head received (bytes)."""

    def __init__(self, script: Callable[[RawServer, socket.socket, str], None]):
        self.script = script
        self.requests: list[bytes] = []
        self.stopping = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.other = ""            # another origin, for scripts that redirect there

    def start(self) -> RawServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    data = conn.recv(4096)
                    if not data:
                        return
                    head += data
                self.requests.append(head)
                path = head.split(b" ", 2)[1].decode("latin-1")
                self.script(self, conn, path)
            except OSError:          # the client hung up: the point of most scripts
                return

    def endless(self, conn: socket.socket, piece: bytes = BLOCK) -> None:
        """Send `piece` until the client hangs up or the server stops."""
        while not self.stopping.is_set():
            conn.sendall(piece)


def _head(status: str, *headers: str) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers]) + "\r\n\r\n").encode("latin-1")


def chunk_size_minus_one(server, conn, path):
    conn.sendall(_head("200 OK", "Content-Type: application/json", "Transfer-Encoding: chunked")
                 + b"-1\r\n")
    server.endless(conn)


def chunk_size_huge(server, conn, path):
    conn.sendall(_head("200 OK", "Transfer-Encoding: chunked") + b"f" * 5000 + b"\r\n")
    server.endless(conn)


def chunk_size_2_64(server, conn, path):
    conn.sendall(_head("200 OK", "Transfer-Encoding: chunked") + b"ffffffffffffffff\r\n")
    server.endless(conn)


def endless_chunks(server, conn, path):
    conn.sendall(_head("200 OK", "Transfer-Encoding: chunked"))
    server.endless(conn, b"10000\r\n" + BLOCK + b"\r\n")


def endless_body(server, conn, path):
    conn.sendall(_head("200 OK", "Connection: close"))
    server.endless(conn)


def slow_drip(server, conn, path):
    conn.sendall(_head("200 OK", "Content-Length: 1000000000"))
    while not server.stopping.wait(0.1):
        conn.sendall(b" ")


def huge_header(server, conn, path):
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Junk: ")
    server.endless(conn, b"a" * 65536)


def endless_headers(server, conn, path):
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    server.endless(conn, b"X-A: b\r\n" * 4096)


def non_ascii_headers(server, conn, path):
    body = json.dumps({"sha": SHA, "siblings": []}).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Repo-Commit: \xc2\xb2\xff\r\nX-Linked-Size: \xc2\xb2\r\n"
                 b"X-Error-Message: \xfe\xe9\r\nContent-Length: " + str(len(body)).encode()
                 + b"\r\n\r\n" + body)


def non_ascii_error_headers(server, conn, path):
    conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nX-Error-Code: \xc2\xb2\r\nX-Error-Message: \xff\r\n"
                 b"Retry-After: \xc2\xb2\r\nContent-Length: 2\r\n\r\n{}")


def non_ascii_header_name(server, conn, path):
    conn.sendall(b"HTTP/1.1 200 OK\r\n\xc3\xa9t\xc3\xa9: 1\r\nContent-Length: 2\r\n\r\n{}")


def redirect_loop(server, conn, path):
    conn.sendall(_head("302 Found", f"Location: {path}", "Content-Length: 0", "Connection: close"))


def redirect_endless_body(server, conn, path):
    conn.sendall(_head("302 Found", f"Location: {path}", "Transfer-Encoding: chunked"))
    server.endless(conn, b"10000\r\n" + BLOCK + b"\r\n")


@cache
def _bomb() -> bytes:
    """gzip of 256 MiB of zeros (~250 KiB), made piecewise."""
    squeeze = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * 2**20
    return b"".join(squeeze.compress(zeros) for _ in range(256)) + squeeze.flush()


def redirect_gzip_bomb(server, conn, path):
    bomb = _bomb()
    conn.sendall(_head("302 Found", f"Location: {path}", "Content-Encoding: gzip",
                       f"Content-Length: {len(bomb)}") + bomb)


def error_endless_body(server, conn, path):
    conn.sendall(_head("404 Not Found", "X-Error-Code: RepoNotFound", "Connection: close"))
    server.endless(conn)


def gzip_bomb(server, conn, path):
    bomb = _bomb()
    conn.sendall(_head("200 OK", "Content-Encoding: gzip", f"Content-Length: {len(bomb)}")
                 + bomb)


def cross_origin(server, conn, path):
    """Redirect every request to the other origin (server.other), keeping the path."""
    conn.sendall(_head("302 Found", f"Location: {server.other}{path}", "Content-Length: 0"))


def not_found(server, conn, path):
    body = b'{"error": "Repository not found"}'
    conn.sendall(_head("404 Not Found", "X-Error-Code: RepoNotFound",
                       "X-Error-Message: Repository not found",
                       f"Content-Length: {len(body)}") + body)


def _sized(value: bytes, header: bytes):
    def script(server, conn, path):
        if "/api/" in path:
            not_found(server, conn, path)
            return
        body = b"GGUF" + b"\0" * 12
        conn.sendall(b"HTTP/1.1 206 Partial Content\r\nX-Repo-Commit: " + SHA.encode()
                     + b"\r\n" + header + b": " + value + b"\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
    return script


linked_size_5000_digits = _sized(b"9" * 5000, b"X-Linked-Size")
linked_size_superscript = _sized("\u00b2".encode(), b"X-Linked-Size")
content_range_5000_digits = _sized(b"bytes 0-15/" + b"9" * 5000, b"Content-Range")
content_range_superscript = _sized("bytes 0-15/\u00b2".encode(), b"Content-Range")

# name -> (script, what the plan reads: a repo or a single GGUF file)
SCRIPTS = {
    "chunk size -1": (chunk_size_minus_one, "repo"),
    "chunk size of 5,000 hex digits": (chunk_size_huge, "repo"),
    "chunk size 2**64-1": (chunk_size_2_64, "repo"),
    "endless chunked body": (endless_chunks, "repo"),
    "endless body (no length)": (endless_body, "repo"),
    "gzip bomb": (gzip_bomb, "repo"),
    "slow drip": (slow_drip, "repo"),
    "huge header": (huge_header, "repo"),
    "endless headers": (endless_headers, "repo"),
    "non-ASCII header values": (non_ascii_headers, "repo"),
    "non-ASCII error headers": (non_ascii_error_headers, "repo"),
    "non-ASCII header name": (non_ascii_header_name, "repo"),
    "redirect loop": (redirect_loop, "repo"),
    "redirect with endless body": (redirect_endless_body, "repo"),
    "redirect with gzip bomb": (redirect_gzip_bomb, "repo"),
    "error with endless body": (error_endless_body, "repo"),
    "X-Linked-Size of 5,000 digits": (linked_size_5000_digits, "gguf"),
    "X-Linked-Size \u00b2": (linked_size_superscript, "gguf"),
    "Content-Range total of 5,000 digits": (content_range_5000_digits, "gguf"),
    "Content-Range total \u00b2": (content_range_superscript, "gguf"),
}


def run_plan(endpoint: str, target: str, *, timeout: float = 8.0, token: str | None = None,
             proxy: str | None = None, watchdog: float = 60.0
             ) -> tuple[int, str, str, float, float]:
    """`kvfit TARGET --context 1k --hardware h100-80 --timeout T` in a new process against
    `endpoint`, with an empty cache and no proxy but `proxy` (as HTTP_PROXY): (exit code,
    stdout, stderr, seconds, peak resident MiB). A process still running after `watchdog`
    seconds is killed (code -9)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()
               and k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE")}
        env.update(HF_ENDPOINT=endpoint, HF_HOME=f"{tmp}/hf", KVFIT_CACHE_DIR=f"{tmp}/cache",
                   HF_HUB_DISABLE_TELEMETRY="1")
        if token:
            env["HF_TOKEN"] = token
        if proxy:
            env["HTTP_PROXY"] = proxy
        with open(f"{tmp}/out", "w+b") as out, open(f"{tmp}/err", "w+b") as err:
            start = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-m", "kvfit", target, "--context", "1k",
                                     "--hardware", "h100-80", "--timeout", f"{timeout:g}"],
                                    stdout=out, stderr=err, env=env)
            timer = threading.Timer(watchdog, os.kill, (proc.pid, signal.SIGKILL))
            timer.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
            seconds = time.monotonic() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            return (proc.returncode, out.read().decode(errors="replace"),
                    err.read().decode(errors="replace"), seconds, usage.ru_maxrss / 1024)
