"""display_path resolves each spec folder once; its answers are os.path.realpath's, symbolic
links (a linked file, a linked folder, `..` through a link) included."""

from __future__ import annotations

import os

from kvfit.paths import _realpath, display_path, specs_dir


def test_realpath_is_the_os_answer(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.yaml").write_text("id: a\n")
    (tmp_path / "linked-dir").symlink_to(real)
    (real / "b.yaml").symlink_to(real / "a.yaml")
    (real / "loop.yaml").symlink_to(real / "loop.yaml")
    paths = [real / "a.yaml", real / "b.yaml", tmp_path / "linked-dir" / "a.yaml",
             tmp_path / "linked-dir" / ".." / "real" / "a.yaml", real / "missing.yaml",
             real / "loop.yaml", real / ".", tmp_path / "linked-dir" / "..", "relative/x.yaml"]
    for p in paths:
        assert _realpath(p) == os.path.realpath(p), p


def test_bundled_specs_show_relative_to_the_data_root():
    path = specs_dir("hardware") / "h100-80.yaml"
    assert display_path(path) == os.path.join("specs", "hardware", "h100-80.yaml")
