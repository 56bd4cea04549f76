"""The committed man page is what argparse-manpage builds from the current parser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_man_page_is_current(tmp_path):
    out = tmp_path / "kvfit.1"
    script = (
        "import sys; from argparse_manpage.cli import main; sys.exit(main())"
    )
    cmd = [sys.executable, "-c", script, "--module", "kvfit.cli.manpage", "--function",
           "man_parser", "--project-name", "kvfit", "--prog", "kvfit", "--manual-title",
           "kvfit manual", "--output", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    fresh = out.read_text().splitlines()[1:]           # line 1 carries the build date
    committed = (ROOT / "man" / "kvfit.1").read_text().splitlines()[1:]
    assert fresh == committed, "regenerate man/kvfit.1 (see kvfit/cli/manpage.py)"
