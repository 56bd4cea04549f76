"""`--plot FILE.png|FILE.svg`: draw a plan's (or a sweep's) answer with matplotlib.

Two charts: max resident sequences per layout along the swept axis, with the target line
(one panel per value of a second axis), and a stacked per-rank memory bar per layout and cell
(kvfit.planner.memory_bars). The drawn numbers are the report's own; the plotted series are
embedded as JSON in the file (PNG text chunk `kvfit:series`, SVG <metadata> dc:description),
so they can be checked without pixels. matplotlib is imported only here, only when asked,
drawing on the Agg canvas (no pyplot, no display); the file is written atomically.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from ..errors import UsageError
from ..model.plan import Report
from ..model.sweep import SweepAxis, SweepCell

FORMATS = {".png": "png", ".svg": "svg"}
SERIES_KEY = "kvfit:series"
PARTS = (("weights", "weights", "#4c72b0"), ("state", "state of the resident sequences", "#55a868"),
         ("engine_overheads", "engine overheads", "#c44e52"),
         ("free", "free (in the budget)", "#e8e8e8"),
         ("reserve", "reserve (outside the budget)", "#8c8c8c"))
GIB = 1024**3


def install_hint() -> str:
    """How to get matplotlib: the checkout's extra from a source checkout, else a pip install
    into the interpreter kvfit runs in (an installed wheel has no checkout to sync)."""
    import sys

    from ..paths import data_root

    root = data_root()
    head = "--plot draws with matplotlib, which is not installed in this environment. "
    tail = ", then repeat the command; without --plot nothing else needs it."
    if (root / "pyproject.toml").is_file() and (root / "kvfit").is_dir():
        return head + f"In this source checkout ({root}) run `uv sync --extra plot`" + tail
    return (head + f"Install it into the environment kvfit runs in: `{sys.executable} -m pip "
            "install 'matplotlib>=3.8'`" + tail)


def check_target(path: str) -> tuple[Path, str]:
    """(path, format) for --plot, refused before any planning when it cannot be written."""
    from ..paths import user_path

    target = user_path(path, "--plot")
    fmt = FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise UsageError(f"--plot {path!r}: unknown file type {target.suffix or '(none)'!r}.",
                         hint="Name a .png or .svg file.")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--plot {path!r}: the folder {str(parent)!r} does not exist.",
                         hint="Create it first, or name a file in an existing folder.")
    if target.is_dir():
        raise UsageError(f"--plot {path!r} is a folder.", hint="Name a .png or .svg file.")
    require_matplotlib()
    return target, fmt


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(install_hint()) from None


def series(report: Report, cells: tuple[SweepCell, ...], axes: tuple[SweepAxis, ...]) -> dict:
    """The plotted numbers: curves per panel (None where not judged) and memory bars."""
    x_axis = axes[0].axis if axes else None
    second = axes[1] if len(axes) > 1 else None
    panels = []
    for v in (second.values if second else [None]):
        mine = [c for c in cells if second is None or c.values[second.axis] == v]
        ids: dict[str, str] = {}       # a curve is named by its layout id when the cells'
        for c in mine:                 # own layouts differ (--sweep gpus: TP=1 x DP=1, x DP=8)
            for x in c.layouts:
                ids[x.id] = x.label if ids.get(x.id, x.label) == x.label else x.id
        curves = [{"id": i, "label": lab, "max_sequences": [
            next((x.max_sequences for x in c.layouts if x.id == i), None) for c in mine]}
            for i, lab in ids.items()]
        target = [c.required_sequences for c in mine]
        panels.append({"title": f"{second.axis}={v}" if second else "", "target": target,
                       "curves": curves, "y_scale": _y_scale(curves, target)})
    memory: list[dict] = []
    for c in cells:
        for x in c.layouts:
            if not x.memory_per_rank:
                continue
            _add_bar(memory, {"cell": ", ".join(f"{k}={v}" for k, v in c.values.items()),
                              "id": x.id, "label": x.label, **x.memory_per_rank.to_json()})
    return {"kvfit_plot": 1, "model": report.model.source,
            "capacity_model": report.capacity_model.label, "x_axis": x_axis,
            "x_labels": list(axes[0].values) if axes else [], "panels": panels,
            "memory": memory}


def _y_scale(curves: list[dict], target: list) -> str:
    """'symlog' (a tick per decade, 0 on the axis) when the counts span more than 100x, else
    'linear'."""
    counts = [y for c in curves for y in c["max_sequences"] if y] + [t for t in target if t]
    return "symlog" if counts and max(counts) > 100 * min(counts) else "linear"


def _add_bar(memory: list[dict], bar: dict) -> None:
    """Append a bar, or name its cell on the bar of the same layout with the same memory."""
    same = next((b for b in memory if {k: v for k, v in b.items() if k != "cell"}
                 == {k: v for k, v in bar.items() if k != "cell"}), None)
    if same is None:
        memory.append(bar)
    else:
        same["cell"] = _cells(same["cell"], bar["cell"])


def _cells(have: str, more: str) -> str:
    """'context=8k' + 'context=32k' -> 'context=8k, 32k' (one swept axis), else joined by '; '."""
    key, _, value = more.partition("=")
    if "," not in more and ";" not in have and have.startswith(key + "="):
        return f"{have}, {value}"
    return f"{have}; {more}"


def _curves(ax, s: dict, panel: dict) -> None:
    xs = list(range(len(s["x_labels"])))
    for c in panel["curves"]:
        ys = [float("nan") if y is None else y for y in c["max_sequences"]]
        ax.plot(xs, ys, marker="o", label=c["label"])
    target = panel["target"]
    same = len(set(target)) == 1 and target[0] is not None
    ax.step(xs, [float("nan") if t is None else t for t in target], where="mid", color="black",
            linestyle="--", label=f"target ({target[0]:,})" if same else "target")
    if panel["y_scale"] == "symlog":
        ax.set_yscale("symlog", linthresh=1)
    ax.set_xticks(xs, s["x_labels"])
    ax.set_xlabel(s["x_axis"])
    ax.set_ylabel("max resident sequences")
    ax.set_title(panel["title"] or f"{s['model']}: {s['capacity_model']}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _bars(ax, s: dict) -> None:
    bars = s["memory"]
    xs = list(range(len(bars)))
    bottom = [0.0] * len(bars)
    engine = any(not b["basis"].startswith("static") for b in bars)
    for key, label, color in PARTS:
        if key == "state" and engine:
            label = "state: the engine's KV / token pool"
        h = [b[f"{key}_bytes"] / GIB for b in bars]
        if any(h):
            ax.bar(xs, h, bottom=bottom, color=color, label=label, edgecolor="white",
                   linewidth=0.5)
            bottom = [a + b for a, b in zip(bottom, h, strict=True)]
    ticks = [b["label"].replace(" x ", "x") + (f"\n{b['cell']}" if b["cell"] else "")
             .replace(", ", "\n").replace("; ", "\n") for b in bars]   # a cell a line
    ax.set_xticks(xs, ticks, fontsize=7, rotation=90 if len(bars) > 8 else 0)
    ax.set_ylabel("GiB per rank")
    ax.set_title("per-rank memory at max resident sequences", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def draw(s: dict, fmt: str) -> bytes:
    """The chart as PNG or SVG bytes, with the series embedded."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = s["panels"] if s["x_axis"] else []
    cols = max(1, len(panels))
    with matplotlib.rc_context({"svg.hashsalt": "kvfit", "svg.fonttype": "none"}):
        fig = Figure(figsize=(max(8, 4.5 * cols, 0.5 * len(s["memory"])), 9 if panels else 5),
                     layout="constrained")
        FigureCanvasAgg(fig)
        grid = fig.add_gridspec(2 if panels else 1, cols)
        for i, panel in enumerate(panels):
            _curves(fig.add_subplot(grid[0, i]), s, panel)
        if s["memory"]:
            _bars(fig.add_subplot(grid[-1, :]), s)
        text = json.dumps(s, sort_keys=True, separators=(",", ":"))
        meta = ({"Software": "kvfit", SERIES_KEY: text} if fmt == "png" else
                {"Creator": "kvfit", "Date": None, "Description": text})
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=meta, dpi=100)
    return buf.getvalue()


def write_plot(target: Path, fmt: str, report: Report, cells: tuple[SweepCell, ...],
               axes: tuple[SweepAxis, ...]) -> dict:
    """Draw and write atomically (nothing half-written on error); returns the series."""
    from ..atomic import write_bytes

    s = series(report, cells, axes)
    if not s["memory"] and not any(c["max_sequences"] != [None] * len(c["max_sequences"])
                                   for p in s["panels"] for c in p["curves"]):
        raise UsageError("--plot: this plan has nothing to draw (no layout has a known "
                         "capacity: no hardware, or the weights are unknown).",
                         hint="Give --hardware/--gpus (or --system) and, if the weights are "
                              "unknown, --weight-gib.")
    try:
        write_bytes(target, draw(s, fmt), shared=True)
    except OSError as exc:
        raise UsageError(f"--plot {str(target)!r}: cannot write it ({exc.strerror}).") from None
    return s
