"""`kvfit specs pin SPEC org/name`: the config and index as the (local test) Hub serves them,
with the commit the Hub resolved, never one kvfit makes up."""

from __future__ import annotations

import hashlib
from pathlib import Path

from conftest import run_cli


def test_pin_from_the_hub_records_the_resolved_commit(hub, tmp_path, monkeypatch):
    config = b'{"model_type": "phi", "num_hidden_layers": 2}\n'
    sha = hub.state.add_commit("kvfit-test/pin-me", {"config.json": config,
                                                     "README.md": b"# not pinned\n"})
    (tmp_path / "specs" / "architectures").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("specs", "pin", "phi", "kvfit-test/pin-me")
    assert code == 0, err
    folder = Path("tests/architectures/phi/configs/kvfit-test--pin-me")
    assert (folder / "config.json").read_bytes() == config
    assert not (folder / "README.md").exists()
    sources = (folder / "SOURCES.yaml").read_text()
    assert f"hf_commit: {sha}" in sources and "hf_repo: kvfit-test/pin-me" in sources
    assert f"sha256: {hashlib.sha256(config).hexdigest()}" in sources


def test_pin_from_an_unknown_repo_is_one_paragraph(hub, tmp_path, monkeypatch):
    (tmp_path / "specs" / "architectures").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("specs", "pin", "phi", "kvfit-test/no-such-repo")
    assert code == 2 and "Traceback" not in err and "no-such-repo" in err
