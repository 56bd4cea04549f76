"""The README's two quick-start lines, exactly as written, on a machine with only `python3`
(issue 27, item 7).

The lines run in `/bin/sh` in a copy of the repository, with PATH holding one folder whose
only entry is `python3` (a wrapper for the base interpreter this suite runs on: no `uv` on
PATH, no pyenv shims). The first line installs uv with pip from the configured package index
(or finds it already installed in that interpreter) and plans; the second runs the test
suite, here narrowed to one small test file appended to the line (`python3 -m uv run pytest
tests/test_expr.py -p no:xdist`: the whole suite inside one of its own tests would run it
twice). Without a reachable index, or on a PEP 668 system Python, the test skips and says
so. .ci/run runs the README's second line itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def quick_start() -> list[str]:
    """The two command lines of the README's quick start (comments dropped)."""
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("   #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_quick_start_needs_only_python3():
    first, second = quick_start()
    assert first.startswith("python3 -m pip install uv && python3 -m uv run kvfit ")
    assert second == "python3 -m uv run pytest"
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == second                   # CI runs the README's test command


def _copy(dest: Path) -> None:
    """The checkout's files (tracked and new, not ignored) copied to `dest`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot list the files to copy")
    for name in filter(None, listed.stdout.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def test_the_two_lines_in_a_shell_with_only_python3(tmp_path):
    first, second = quick_start()
    # The base interpreter this suite runs on (a system or pyenv Python, not a virtual
    # environment: uv creates a project's .venv only from a base interpreter).
    base = Path(sys.base_prefix) / "bin" / "python3"
    if not base.is_file():
        pytest.skip(f"no base python3 at {base}")
    only = tmp_path / "bin"
    only.mkdir()
    # a wrapper, not the interpreter's own folder: that folder may hold a `uv` script (pip
    # puts one there) and pyenv shims would find it; here PATH has python3 and nothing else
    (only / "python3").write_text(f'#!/bin/sh\nexec "{base}" "$@"\n')
    (only / "python3").chmod(0o755)
    repo = tmp_path / "kvfit"
    repo.mkdir()
    _copy(repo)
    keep = ("HOME", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CONFIG_FILE",
            "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_CACHE_DIR", "SSL_CERT_FILE", "HTTPS_PROXY",
            "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy", "LANG")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"PATH": str(only), "CI": "1", "HF_HUB_OFFLINE": "1"}
    assert shutil.which("uv", path=env["PATH"]) is None
    assert sorted(p.name for p in only.iterdir()) == ["python3"]

    def sh(line: str) -> subprocess.CompletedProcess:
        return subprocess.run(["/bin/sh", "-c", line], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=1500, check=False)

    one = sh(first)
    if one.returncode != 0 and "pip install uv" in first and any(
            why in one.stderr for why in ("Could not find a version", "NewConnectionError",
                                          "No matching distribution", "externally-managed")):
        pytest.skip("`python3 -m pip install uv` cannot install here (no package index, or a "
                    f"PEP 668 system Python): {one.stderr[-300:]}")
    assert one.returncode == 0, one.stderr[-2000:]
    # the plan's first line: gpt-oss-20b at 131,072 tokens on one RTX 5090, from the catalog
    assert ("\nkvfit: openai/gpt-oss-20b (catalog) | gpt_oss | 131,072 tokens | KV "
            in one.stdout), one.stdout[-600:]
    assert "\nFITS (static bound): TP=1 x DP=1" in one.stdout
    two = sh(f"{second} tests/test_expr.py -p no:xdist")
    assert two.returncode == 0, (two.stdout + two.stderr)[-2000:]
    assert " passed" in two.stdout
