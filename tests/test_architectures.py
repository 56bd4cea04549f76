"""Every architecture spec's cases: hand-derived numbers, plus text and JSON snapshots.

Cases live in tests/architectures/<spec-id>/cases.yaml (schema: schemas/cases.v1.schema.json).
Each case plans a pinned config with the given flags; `expect` pins numbers derived by hand
(derivations are comments in the YAML), `error` pins a rejection, and every case snapshots
its rendered report. Run one spec with `pytest -k <spec-id>`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kvfit.cli.specs_plan import get

from conftest import run_cli

HERE = Path(__file__).parent / "architectures"


def _cases():
    for cases_file in sorted(HERE.glob("*/cases.yaml")):
        spec = cases_file.parent.name
        data = YAML(typ="safe").load(cases_file.read_text())
        for name, case in data.items():
            yield pytest.param(spec, name, case, id=f"{spec}-{name}")


def _argv(spec: str, case: dict) -> list[str]:
    model = HERE / spec / case["model"]
    argv = [str(model)]
    for key, value in case.get("args", {}).items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        else:
            argv += [flag, str(value)]
    return argv


@pytest.mark.parametrize(("spec", "name", "case"), list(_cases()))
def test_case(spec, name, case, snap_text, snap_json):
    argv = _argv(spec, case)
    code, text, err = run_cli(*argv)
    if "error" in case:
        want = case["error"]
        assert code == want.get("exit", 2), err
        assert want["contains"] in err, err
        assert "Traceback" not in err
        assert err == snap_text
        return
    placed = any(k in case.get("args", {}) for k in ("hardware", "system", "systems"))
    assert code == case.get("exit", 0 if placed else 5), err   # 5: state only, not judged
    code_j, out, _ = run_cli(*argv, "--json")
    report = json.loads(out)
    for path, expected in case.get("expect", {}).items():
        assert get(report, path) == expected, path
    assert text.replace(str(HERE), "<tests>") == snap_text
    assert out == snap_json
