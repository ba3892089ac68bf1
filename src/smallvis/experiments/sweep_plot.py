"""``grid.png`` of a sweep: one small panel per run, titled with what varies, in grid order."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._util.files import atomic_write
from ..metrics import METRIC_K
from .sweep_grid import Grid, _short

MAX_COLUMNS = 6
TITLE_WIDTH = 34  # characters per title line of a 2.5-inch panel


def plot_sweep(path: Path, grid: Grid, runs, records: dict, runs_dir: Path, labels=None,
               label_kind="auto", label_name=None, subject: str = "data", dpi: int = 110):
    """Draw the runs of ``grid`` (their ``.npy`` in ``runs_dir``) as small multiples at ``path``.

    Panels are titled with the settings that vary across the grid (the fixed ones go in the figure
    title) and, on a second line, the final cost and kNN preservation. The inner factors (seeds, a
    method's own parameters, then the last swept parameters) run along the rows, so each row is one
    setting of the outer ones (see :func:`_rows`).
    """
    from ..plot import plot_grid

    varying = _varying(runs)
    rows = _rows(grid, runs, varying)
    ncols = max(len(row) for row in rows) if rows else None
    order = [run for row in rows for run in row + [None] * (ncols - len(row))] if rows else runs
    panels = []
    for run in order:
        if run is None:  # padding at the end of a short row
            panels.append(("", None))
            continue
        record = records.get(run.id) or {}
        head = _wrap([_label(key, value) for key, value in _settings(run).items()
                      if key in varying]) or run.method
        Y = None
        if record.get("status") in ("ok", "diverged"):
            Y = np.load(runs_dir / f"{run.id}.npy")
            knn = (record.get("metrics") or {}).get("knn_preservation")
            cost = record.get("final_cost")
            note = (f"cost {cost:.3g}" if cost is not None else "cost -") + (
                f", kNN@{METRIC_K} {knn:.2f}" if knn is not None else "")
            if record["status"] == "diverged":
                note += " (diverged)"
        else:
            note = "failed" if record.get("status") == "error" else "not run"
        panels.append((f"{head}\n{note}", Y))
    fig = plot_grid(panels, labels, None, ncols=ncols, label_kind=label_kind, panel_size=2.5,
                    dpi=dpi)
    longest = max(len(line) for title, _ in panels for line in title.split("\n"))
    for ax, run, (_, Y) in zip(fig.axes, order, panels):  # a light frame around each panel
        if run is None:
            ax.set_visible(False)
        if longest > 32:
            ax.title.set_fontsize(8 if longest <= 40 else 7)
        for spine in ax.spines.values():
            spine.set_visible(Y is not None)
            spine.set_color("#d9d9d9")
    for legend in fig.legends:  # classes
        legend.set_title(label_name, prop={"size": 8})
    for bar in fig.axes[len(panels):]:  # a colour bar for continuous labels
        bar.tick_params(labelsize=8)
        if label_name:
            bar.set_ylabel(label_name, fontsize=8)
    fig.suptitle(_caption(grid, runs, varying, subject), fontsize=10)
    atomic_write(path, lambda fh: fig.savefig(fh, format=path.suffix.lstrip(".") or "png", dpi=dpi,
                                               bbox_inches="tight", facecolor="white"), binary=True)
    return fig


def _wrap(items: list, width: int = TITLE_WIDTH) -> str:
    """``items`` joined by ", ", broken into lines of about ``width`` characters between items."""
    lines = [""]
    for item in items:
        if lines[-1] and len(lines[-1]) + 2 + len(item) > width:
            lines[-1] += ","
            lines.append(item)
        else:
            lines[-1] += (", " if lines[-1] else "") + item
    return "\n".join(lines)


def _settings(run) -> dict:
    return {"method": run.method, **run.columns, "seed": run.seed}


def _varying(runs) -> set:
    """Keys (method, swept columns, seed) taking more than one value across ``runs``."""
    seen = {}
    for run in runs:
        for key, value in _settings(run).items():
            seen.setdefault(key, set()).add(json.dumps(value, sort_keys=True, default=str))
    return {key for key, values in seen.items() if len(values) > 1}


def _label(key, value) -> str:
    if key == "method":
        return str(value)
    return f"{key.split('.')[-1].replace('_', ' ')} {_short(value)}"


def _rows(grid: Grid, runs, varying) -> list | None:
    """The runs in rows of at most ``MAX_COLUMNS``, or None for plot_grid's default layout.

    Factors, outer to inner: method, the swept parameters, a method's own parameters, seed. A row
    holds the runs sharing the outer factors; the cut between outer and inner is placed as far out
    as rows stay short, but the outermost varying factor runs down the rows (unless it is the only
    one varying). Rows shorter than the longest are padded.
    """
    outer = ["method", *grid.swept]
    live = [i for i, key in enumerate(outer) if key in varying]
    alone = len(varying) == 1 and live
    first = live[0] + (0 if alone else 1) if live else 1
    for cut in range(max(first, 0), len(outer) + 1):
        keys = outer[:cut]
        groups = {}
        for run in runs:
            settings = _settings(run)
            groups.setdefault(json.dumps([settings[k] for k in keys], default=str), []).append(run)
        width = max(len(g) for g in groups.values())
        if width <= MAX_COLUMNS:
            return list(groups.values()) if width > 1 else None
    return None


def _caption(grid: Grid, runs, varying, subject: str) -> str:
    fixed = [run_method for run_method in grid.methods] if "method" not in varying else []
    fixed += [f"{k}={_short(v)}" for k, v in grid.fixed.items()]
    for key in sorted(set(_settings(runs[0])) - varying - {"method"}):
        fixed.append(f"{key}={_short(_settings(runs[0])[key])}")
    text = f"{subject}: {len(runs)} run{'s' if len(runs) != 1 else ''}"
    return text + (f" ({', '.join(fixed)})" if fixed else "")
