"""A hostile model-info reply: negative, NaN, null or non-integer sizes and names are refused
(exit 2, one paragraph), never turned into negative weights or a traceback."""

from __future__ import annotations

import json

import pytest
from hubserver import Fault
from hubserver.server import _model_info

from conftest import run_cli

REPO = "kvfit-test/tiny-qwen3"


def _hostile_info(hub, change) -> bytes:
    repo = hub.state.repos[REPO]
    sha = repo.refs["main"]
    doc = json.loads(_model_info(repo, sha, True).body)
    shard = next(s for s in doc["siblings"] if s["rfilename"].endswith(".safetensors"))
    change(shard)
    return json.dumps(doc).encode()       # Python's json writes NaN as the bare word NaN


def _set_size(value):
    def change(sibling):
        sibling["size"] = value
        sibling["lfs"]["size"] = value
    return change


def _set_name(value):
    def change(sibling):
        sibling["rfilename"] = value
    return change


@pytest.mark.parametrize(("change", "needle"), [
    (_set_size(-999_999_999_999), "with size -999999999999"),
    (_set_size(float("nan")), "with size nan"),
    (_set_size(1.5), "with size 1.5"),
    (_set_size("12"), "with size '12'"),
    (_set_size(True), "with size True"),
    (_set_size(2**60), "not a byte count from 0 to 1,125,899,906,842,624"),
    (_set_name(None), "a file named 'None'"),
    (_set_name(42), "a file named '42'"),
    (_set_name("../../etc/passwd"), "not a plain relative path"),
    (_set_name("/abs.safetensors"), "not a plain relative path"),
    (_set_name("a\x1b[2Jb.safetensors"), "\\x1b[2Jb"),
])
def test_hostile_file_entries_are_refused(hub, change, needle):
    hub.state.faults.append(Fault(kind="api", body=_hostile_info(hub, change),
                                  headers={"Content-Type": "application/json"}))
    code, out, err = run_cli(REPO, "--context", "1k")
    assert code == 2, (out, err)
    assert needle in err, err
    assert err.startswith("kvfit: hub error: ") and err.count("\n") == 1
    assert "\x1b" not in err and "Traceback" not in err


def test_a_null_size_is_unknown_not_fatal(hub):
    def no_size(sibling):
        sibling.pop("size")
        sibling.pop("lfs")
    hub.state.faults.append(Fault(kind="api", body=_hostile_info(hub, no_size),
                                  headers={"Content-Type": "application/json"}))
    code, _, err = run_cli(REPO, "--context", "1k")
    assert code in (0, 1, 5), err
