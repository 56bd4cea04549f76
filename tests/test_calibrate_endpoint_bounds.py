"""calibrate's GETs to the serving endpoint (/metrics, /health, server info) against a
hostile server on 127.0.0.1: a chunk size of -1 followed by an endless body, a body dripped a
byte at a time, an error status with an endless body. Each answer is at most MAX_BODY bytes
and the call returns (was: http.client read the -1 chunk to the end of the stream, 778 MB in
8 s, then raised IncompleteRead out of the sampler)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from kvfit.calibrate.endpoint import MAX_BODY, get


class Hostile:
    """A one-behaviour HTTP server: `reply(conn)` writes whatever it likes."""

    def __init__(self, reply):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.reply, self.stop = reply, threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/metrics"

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            conn.recv(65536)
            self.reply(conn, self.stop)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()


def _endless(conn, stop, head: bytes):
    conn.sendall(head)
    blob = b"x" * (1 << 16)
    while not stop.is_set():
        conn.sendall(blob)


def _drip(conn, stop):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b"x")
        time.sleep(0.05)


CASES = {
    "chunk size -1": lambda c, s: _endless(c, s, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: "
                                                 b"chunked\r\n\r\n-1\r\n"),
    "no length, endless": lambda c, s: _endless(c, s, b"HTTP/1.1 200 OK\r\n\r\n"),
    "error, endless": lambda c, s: _endless(c, s, b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: "
                                                  b"chunked\r\n\r\n-1\r\n"),
    "slow drip": _drip,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_endpoint_is_read_bounded(case):
    server = Hostile(CASES[case])
    result = []
    worker = threading.Thread(target=lambda: result.append(get(server.url, 1.0)), daemon=True)
    worker.start()
    worker.join(120)                      # ends a hang; no timing is asserted
    server.close()
    assert result, "get() did not return"
    status, body = result[0]
    assert status in (200, 500, None), status
    assert len(body.encode()) <= MAX_BODY
