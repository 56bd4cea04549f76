"""kvfit.atomic: a write lands whole or not at all, through a temporary file (tempfile.mkstemp,
mode 0600) beside the target and a rename."""

from __future__ import annotations

import os
import stat

import pytest

from kvfit import atomic


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_write_is_private_unless_shared_and_leaves_no_temporary_file(tmp_path):
    private, shared = tmp_path / "a.json", tmp_path / "b.json"
    atomic.write_bytes(private, b"{}")
    atomic.write_bytes(shared, b"[]", shared=True)
    mask = os.umask(0o022)
    os.umask(mask)
    assert private.read_bytes() == b"{}" and _mode(private) == 0o600
    assert shared.read_bytes() == b"[]" and _mode(shared) == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_a_failed_write_changes_nothing_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "t.json"
    target.write_bytes(b"old")

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(OSError):
        atomic.write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
    assert atomic.write_text(tmp_path / "sub" / "u.txt", "x") is False     # refused: no file
    assert not (tmp_path / "sub" / "u.txt").exists()
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == []


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "t.json"

    def interrupt(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_bytes(target, b"new")
    assert sorted(tmp_path.iterdir()) == []
