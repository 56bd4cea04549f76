"""`kvfit serve` itself: it says its URL and answers; a taken port, a bad port or host and a
missing `web` extra are one paragraph each (exit 2)."""

from __future__ import annotations

import socket
import sys

import pytest
from served import serve, stop

from conftest import run_cli, run_json


def _one_paragraph(code: int, err: str, needle: str) -> None:
    assert code == 2, err
    assert err.startswith("kvfit: usage error: ") and err.count("\n") == 1, err
    assert needle in err and "Traceback" not in err


def test_a_taken_port_is_one_paragraph():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        code, _, err = run_cli("serve", "--port", str(port))
    _one_paragraph(code, err, f"port {port} on 127.0.0.1 is already in use")


@pytest.mark.parametrize("port", ["0", "65536", "http", "١٢", "9" * 5000])
def test_a_bad_port_is_one_paragraph(port):
    code, _, err = run_cli("serve", "--port", port)
    _one_paragraph(code, err, "--port must be a whole number from 1 to 65,535")


def test_a_host_that_is_no_address_is_one_paragraph():
    code, _, err = run_cli("serve", "--host", "no such host.invalid", "--port", "1")
    _one_paragraph(code, err, "is not an address this machine can bind")


@pytest.mark.parametrize("missing", ["starlette", "uvicorn"])
def test_without_the_web_extra_it_says_how_to_install_it(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)       # import raises ImportError
    code, _, err = run_cli("serve")
    _one_paragraph(code, err, "needs the optional `web` extra")
    assert f"({missing} is missing)" in err and "uv run --extra web kvfit serve" in err
    assert "kvfit[" not in err   # never an install of kvfit from the registry


def test_serve_prints_its_url_and_answers():
    import httpx

    proc, url = serve()
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        got = httpx.get(url + "api/hardware", timeout=120)
        assert got.json() == run_json("--list-hardware")[1]
    finally:
        stop(proc)
