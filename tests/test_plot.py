"""--plot: the files decode, carry the plotted series, and equal the report's numbers; bad
targets and a missing matplotlib exit 2 leaving nothing behind."""

from __future__ import annotations

import builtins
import json
import os
import xml.etree.ElementTree as ET

import pytest

from conftest import run_cli, run_json

ROPE = '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}'
BASE = ("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--gpus", "8",
        "--rope-scaling", ROPE)
MUST = BASE + ("--sweep", "context=8k,32k,128k")
LAYOUTS = ["TP=1 x DP=8", "TP=2 x DP=4", "TP=4 x DP=2", "TP=8 x DP=1"]


def _png_series(path) -> dict:
    from PIL import Image
    with Image.open(path) as im:
        return json.loads(im.text["kvfit:series"])


def _svg_series(path) -> dict:
    ns = {"dc": "http://purl.org/dc/elements/1.1/"}
    node = ET.parse(path).getroot().find(".//dc:description", ns)
    return json.loads(node.text)


def test_must_show_png_one_curve_per_layout(tmp_path):
    import matplotlib.image

    out = tmp_path / "cap.png"
    code, text, err = run_cli(*MUST, "--plot", out)
    assert code == 0, err
    pixels = matplotlib.image.imread(out)
    assert pixels.ndim == 3 and pixels.shape[0] > 200 and pixels.shape[1] > 200
    s = _png_series(out)
    assert s["x_axis"] == "context" and s["x_labels"] == ["8k", "32k", "128k"]
    (panel,) = s["panels"]
    assert [c["label"] for c in panel["curves"]] == LAYOUTS
    assert panel["target"] == [1, 1, 1]
    # the plotted series are the sweep's cells (the same run, with --json)
    _, r = run_json(*MUST)
    for curve in panel["curves"]:
        assert curve["max_sequences"] == [
            next(x["max_sequences"] for x in c["layouts"] if x["id"] == curve["id"])
            for c in r["sweep"]["cells"]]
    # by hand (tests/test_sweep.py::test_a_cell_by_hand): TP=8 holds 16 at 128k, TP=1 0
    by = {c["id"]: c["max_sequences"] for c in panel["curves"]}
    assert by["tp8"][2] == 16 and by["tp1"][2] == 0
    # 4 layouts x 3 contexts, but a bar is drawn once per distinct memory: TP=4 and TP=8 hold the
    # same state at every context (a sequence's state grows with the context as their count
    # falls: TP=8 holds 256 x 0.25 GiB at 8k, 64 x 1 GiB at 32k, 16 x 4 GiB at 128k = 64 GiB),
    # so each is one bar naming its three cells: 4 + 4 - 2 - 2 + 2 = 8 bars, not 12 repeats
    assert len(s["memory"]) == 8
    tp8 = [b for b in s["memory"] if b["id"] == "tp8"]
    assert len(tp8) == 1 and tp8[0]["cell"] == "context=8k, 32k, 128k"
    assert tp8[0]["state_bytes"] == 64 * 1073741824
    # counts from 0 to 256 against a target of 1 span orders of magnitude: a tick per decade
    assert panel["y_scale"] == "symlog"
    assert f"wrote {out}" in err
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_svg_users_sweep_with_the_target_steps(tmp_path):
    out = tmp_path / "users.svg"
    code, _, err = run_cli(*BASE, "--context", "32k", "--sweep", "users=1,32,65", "--plot", out)
    assert code == 1, err                  # 65 > the 64 TP=8 holds at 32k
    s = _svg_series(out)
    assert s["x_axis"] == "users"
    (panel,) = s["panels"]
    assert panel["target"] == [1, 32, 65]
    assert {c["id"]: c["max_sequences"] for c in panel["curves"]}["tp8"] == [64, 64, 64]
    # counts 1 to 65 (within 100x): a linear axis, not a log axis with one tick label
    assert panel["y_scale"] == "linear"
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")


def test_a_gpus_sweep_names_each_curve_by_its_layout_id(tmp_path):
    """Issue 27: tp1 is TP=1 x DP=1 on 1 GPU and TP=1 x DP=8 on 8, so its curve is not named by
    the first cell's label; tp8 exists only on 8 GPUs and keeps its label."""
    out = tmp_path / "gpus.svg"
    code, _, err = run_cli("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--context",
                           "32k", "--weight-gib", "61", "--sweep", "gpus=1,8", "--plot", out)
    assert code == 0, err
    (panel,) = _svg_series(out)["panels"]
    labels = {c["id"]: c["label"] for c in panel["curves"]}
    assert labels["tp1"] == "tp1" and labels["tp8"] == "TP=8 x DP=1"


def test_grid_has_one_panel_per_second_axis_value(tmp_path):
    out = tmp_path / "grid.png"
    code, _, _ = run_cli(*BASE, "--sweep", "context=8k,32k", "--sweep", "kv-dtype=bf16,fp8",
                         "--engine", "vllm", "--plot", out)
    assert code == 0
    s = _png_series(out)
    assert [p["title"] for p in s["panels"]] == ["kv-dtype=bf16", "kv-dtype=fp8"]
    assert all(b["engine_overheads_bytes"] > 0 for b in s["memory"])
    assert s["capacity_model"].startswith("vLLM")


def test_plot_of_a_single_plan_draws_the_memory_bars(tmp_path):
    out = tmp_path / "one.png"
    code, text, _ = run_cli(*BASE, "--context", "32k", "--plot", out)
    assert code == 0 and text.startswith("kvfit: Qwen/Qwen3-32B")   # the normal report
    s = _png_series(out)
    assert s["x_axis"] is None and [b["label"] for b in s["memory"]] == LAYOUTS
    # TP=8 at 32k: 64 sequences x 1,073,741,824 B of state per rank
    tp8 = next(b for b in s["memory"] if b["id"] == "tp8")
    assert tp8["state_bytes"] == 64 * 1073741824


@pytest.mark.parametrize("name, says", [("cap.jpg", "unknown file type '.jpg'"),
                                        ("cap", "unknown file type '(none)'"),
                                        ("missing/cap.png", "does not exist")])
def test_bad_plot_targets_exit_2_before_planning(tmp_path, name, says):
    code, out, err = run_cli(*MUST, "--plot", tmp_path / name)
    assert code == 2 and out == "" and says in err, err
    assert list(tmp_path.iterdir()) == []


def test_nothing_to_draw_exits_2(tmp_path):
    code, _, err = run_cli("Qwen/Qwen3-32B", "--offline", "--plot", tmp_path / "x.png")
    assert code == 2 and "nothing to draw" in err
    assert list(tmp_path.iterdir()) == []


def test_without_matplotlib_exit_2_with_how_to_install(tmp_path, monkeypatch):
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    code, out, err = run_cli(*MUST, "--plot", tmp_path / "cap.png")
    assert code == 2 and out == ""
    assert err.startswith("kvfit: usage error: --plot draws with matplotlib")
    assert "uv sync --extra plot" in err and "pip install kvfit" not in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    code, out, err = run_cli(*MUST, "--plot", tmp_path / "cap.png")
    assert code == 2 and out == ""
    assert "cannot write it (No space left on device)" in err
    assert list(tmp_path.iterdir()) == []


def test_readme_chart_is_made_by_the_readme_command(tmp_path):
    import re
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    section = readme.split("## Sweeps and charts", 1)[1].split("\n## ", 1)[0]
    command = re.search(r"```bash\n(uv run --extra plot kvfit .*?)\n```", section, re.S).group(1)
    args = shlex.split(command.replace("\\\n", " "))[5:]   # after `uv run --extra plot kvfit`
    chart = args[args.index("--plot") + 1]
    assert chart == "docs/sweep-qwen3-32b-h100x8.png"
    args[args.index("--plot") + 1] = str(tmp_path / "chart.png")
    code, out, _ = run_cli(*args)
    assert code == 0
    shown = re.search(r"```\n(kvfit sweep: .*?)\n```", section, re.S).group(1)
    table = [line for line in shown.splitlines() if line.startswith("  ")]
    assert table and all(line in out.splitlines() for line in table)
    assert _png_series(tmp_path / "chart.png") == _png_series(root / chart)
