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


def test_fsync_syncs_the_data_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (events.append(("fsync", os.fstat(
        fd).st_size)), real_fsync(fd))[1])
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (events.append(("replace", b)),
                                                            real_replace(a, b))[1])
    target = tmp_path / "r.json"
    atomic.write_bytes(target, b"12345", fsync=True)
    # the whole 5 bytes were on the temporary file when it was synced, then it was renamed
    assert events == [("fsync", 5), ("replace", target)] and target.read_bytes() == b"12345"
    events.clear()
    atomic.write_bytes(target, b"x")                  # caches: no sync
    assert events == [("replace", target)]


def test_the_calibration_record_is_written_through_it(tmp_path, monkeypatch):
    from kvfit.calibrate import report

    calls = []
    real = atomic.write_bytes
    monkeypatch.setattr(atomic, "write_bytes", lambda *a, **k: (calls.append(k), real(*a, **k)))
    report.write_atomic(tmp_path / "c.json", {"b": 1, "a": [1.5]})
    assert calls == [{"fsync": True}]
    assert (tmp_path / "c.json").read_text() == '{\n  "a": [\n    1.5\n  ],\n  "b": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
