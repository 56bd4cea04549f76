"""Whole-request deadlines, decoded-size caps and --timeout validation on Hub reads.

Deterministic: the drip never ends, so the only possible outcome is the deadline error,
however loaded the machine is; nothing here asserts elapsed time."""

from __future__ import annotations

import gzip
import json

import pytest
from hubserver import Fault

from kvfit.hub import transport

from conftest import run_cli

REPO = "kvfit-test/tiny-qwen3"


def _refused(args, needle):
    code, out, err = run_cli(*args)
    assert code == 2, (out, err)
    assert needle in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize(("kind", "path"), [("api", None), ("resolve", "config.json")])
def test_a_server_that_drips_forever_is_cut_off_at_the_timeout(hub, kind, path):
    hub.state.faults.append(Fault(kind=kind, path=path, body=b"", drip=0.05))
    err = _refused((REPO, "--context", "1k", "--timeout", "0.5"),
                   "did not answer within 0.5 s (--timeout: one budget for all of the plan")
    assert (path or "(repo info)") in err


def test_a_gzip_bomb_is_capped_once_decoded(hub, monkeypatch):
    monkeypatch.setattr(transport, "MAX_FILE_BYTES_READ", 2**20)
    bomb = gzip.compress(b"{" + b" " * (8 * 2**20) + b"}")           # 8 MiB of JSON, ~8 KiB sent
    assert len(bomb) < 2**16
    hub.state.faults.append(Fault(kind="resolve", path="config.json", body=bomb,
                                  headers={"Content-Encoding": "gzip"}))
    _refused((REPO, "--context", "1k"), "larger than 1,048,576 bytes once decoded")


def test_a_model_info_bomb_is_capped_too(hub, monkeypatch):
    monkeypatch.setattr(transport, "MAX_INFO_BYTES", 2**20)
    doc = json.dumps({"id": REPO, "sha": "0" * 40, "padding": " " * (4 * 2**20)}).encode()
    hub.state.faults.append(Fault(kind="api", body=gzip.compress(doc),
                                  headers={"Content-Encoding": "gzip"}))
    _refused((REPO, "--context", "1k"), "(repo info) is larger than 1,048,576 bytes")


def test_a_model_info_that_is_not_an_object(hub):
    hub.state.faults.append(Fault(kind="api", body=b"[1, 2, 3]"))
    _refused((REPO, "--context", "1k"), "with something that is not a JSON object")


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "0"])
def test_timeout_must_be_a_finite_positive_number(hub, value):
    _refused((REPO, "--context", "1k", "--timeout", value), "--timeout ")
    assert hub.state.count() == 0                       # refused before any request
