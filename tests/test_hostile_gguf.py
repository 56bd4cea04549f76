"""Hostile GGUF headers: every declared count is checked against the bytes left and a sane
maximum before anything is allocated, so each case is a clean exit 2, not a hang."""

from __future__ import annotations

import json

import pytest
from hostile import gguf as g
from hubserver.files import gguf_bytes
from hubserver.repos import gguf_kv, gguf_tensors

from conftest import run_cli

QWEN = [g.kv_str("general.architecture", "qwen3"), g.kv_u32("qwen3.block_count", 4)]


def _run(tmp_path, data: bytes, *flags: str) -> tuple[int, str]:
    path = tmp_path / "hostile.gguf"
    path.write_bytes(data)
    code, _, err = run_cli(path, "--context", "1k", *flags)
    return code, err


def _clean(code: int, err: str, needle: str) -> None:
    assert code == 2, err
    assert needle in err, err
    assert err.startswith("kvfit: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("data", "needle"), [
    # one array declaring 2^40 one-byte items in a 60-byte file
    (g.gguf([*QWEN, g.kv_array("x.bytes", g.U8, 2**40)]), "array of 1,099,511,627,776 items"),
    # within the item limit, but past the bytes that remain
    (g.gguf([*QWEN, g.kv_array("x.bytes", g.U8, 2**24)]), "needs 16,777,216 bytes but only"),
    # 2^40 strings: each needs at least its 8-byte length
    (g.gguf([g.kv_array("tokenizer.ggml.tokens", g.STRING, 2**40)]), "declares an array of"),
    # 2^24 + 1 items is past the limit however many bytes follow
    (g.gguf([g.kv_array("x", g.U8, 2**24 + 1)]), "kvfit's limit is 16,777,216"),
    # 999,999 tensor infos declared, none present: past the tensor limit; 99,999: past the bytes
    (g.gguf(QWEN, n_tensors=999_999), "implausible GGUF header"),
    (g.gguf(QWEN, n_tensors=99_999), "99,999 tensor infos at byte 24 needs"),
    (g.gguf(QWEN, n_kv=2**40), "implausible GGUF header"),
    (g.gguf([g.kv("general.architecture", g.STRING, g.string("qwen3", declared=2**63))]),
     "-byte string"),
    (g.gguf(QWEN, [g.tensor_info("blk.0.w", [1] * 9)]), "declares 9 dimensions"),
    (g.gguf([g.kv("k", 13, b"")]), "unknown or too deeply nested value type 13"),
    (g.gguf(QWEN)[:-3], "truncated or corrupt"),
])
def test_hostile_counts_are_refused_before_work(tmp_path, data, needle):
    code, err = _run(tmp_path, data)
    _clean(code, err, needle)


def _tiny(kv: dict, arch: str = "qwen3") -> bytes:
    return gguf_bytes(arch, kv, gguf_tensors())


def test_block_count_2_pow_64_with_verify_headers(tmp_path):
    data = _tiny({**gguf_kv(), "qwen3.block_count": 2**64 - 1})
    code, err = _run(tmp_path, data, "--verify-headers")
    _clean(code, err, "qwen3.block_count = 18446744073709551615")


def test_sliding_window_with_block_count_2_pow_32(tmp_path):
    kv = {**gguf_kv("gemma2"), "gemma2.block_count": 2**32 - 1,
          "gemma2.attention.sliding_window": 4096}
    code, err = _run(tmp_path, _tiny(kv, "gemma2"))
    _clean(code, err, "from 1 to 10,000")


def test_verify_headers_reads_gguf_blk_names(tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(_tiny(gguf_kv()))
    code, out, err = run_cli(path, "--context", "1k", "--verify-headers", "--json")
    assert code in (0, 1, 5), err
    headers = json.loads(out)["headers"]
    # gguf_tensors(): token_embd + 2 tensors in each of the 4 layers
    assert headers["tensors"] == 9 and headers["layers_covered"] == 4
    # 8x64 f16 + 4 x (64x64 f16 + 32x64 f32)
    assert headers["tensor_bytes"] == 8 * 64 * 2 + 4 * (64 * 64 * 2 + 32 * 64 * 4)


def test_verify_headers_names_a_missing_gguf_layer(tmp_path):
    tensors = {k: v for k, v in gguf_tensors().items() if not k.startswith("blk.2.")}
    path = tmp_path / "holes.gguf"
    path.write_bytes(gguf_bytes("qwen3", gguf_kv(), tensors))
    code, _, err = run_cli(path, "--context", "1k", "--verify-headers")
    _clean(code, err, "declared layer(s) 2 of 4")


def test_remote_gguf_prefixes_leave_nothing_behind(monkeypatch):
    # A downloaded prefix is decoded in memory: no file is made (opening one fails during the
    # read), so a kvfit killed mid-parse leaves nothing in the temp dir.
    import builtins
    import os
    import tempfile

    from kvfit.hub import gguf_header

    def refuse(*args, **kwargs):
        raise AssertionError("a file was opened")

    data = _tiny(gguf_kv())
    with monkeypatch.context() as m:
        for owner, name in ((builtins, "open"), (os, "open"), (tempfile, "mkstemp")):
            m.setattr(owner, name, refuse)
        m.setattr(os, "memfd_create", refuse, raising=False)
        header = gguf_header.read_remote_gguf(lambda s, n: data[s:s + n], "tiny.gguf", len(data))
    assert header.fields["qwen3.block_count"] == 4
