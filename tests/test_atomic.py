"""kvfit.atomic: a write lands whole or not at all, through a temporary file made as
tempfile.mkstemp makes one (exclusive create, mode 0600, another name when one is taken)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

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


def test_a_taken_name_is_skipped_and_a_failed_write_changes_nothing(tmp_path, monkeypatch):
    draws = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(atomic.os, "urandom", lambda n: next(draws))
    taken = tmp_path / ".tmp-000000000000.json"
    taken.write_bytes(b"someone else's")
    target = tmp_path / "t.json"
    target.write_bytes(b"old")
    fd, path = atomic._mkstemp(tmp_path, ".tmp-", ".json")      # the first name is taken
    os.close(fd)
    assert path.endswith(".tmp-010101010101.json") and taken.read_bytes() == b"someone else's"
    os.unlink(path)

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "urandom", lambda n: b"\x02" * 6)
    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(OSError):
        atomic.write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tmp-000000000000.json", "t.json"]
    assert atomic.write_text(tmp_path / "sub" / "u.txt", "x") is False     # refused: no file
    assert not (tmp_path / "sub" / "u.txt").exists()


def test_importing_it_loads_no_tempfile():
    code = "import sys, kvfit.atomic; print(sorted({'tempfile', 'shutil'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"
