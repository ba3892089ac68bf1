"""Plots of a run rather than of its final layout: the cost curve, per-point costs, and an animation.

>>> res = smallvis(X, ret_extra=True, exaggeration_factor=4)
>>> plot_costs(res, path="costs.png")
>>> plot_point_costs(res, path="point-costs.png")
>>> snaps = []
>>> res = smallvis(X, epoch=10, epoch_callback=lambda Y, it, c: snaps.append((it, Y.copy(), c)))
>>> animate(snaps, "run.gif", labels=y)

Like :mod:`smallvis.plot`, figures are built without pyplot and never shown.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._util.files import check_output_folder
from .._util.log import logger
from .scatter import (MISSING_COLOUR, NONE_COLOUR, _as_float, _categories, _save, format_label,
                      categorical_colours, infer_label_kind, marker_size, plot_embedding)

ANIMATION_EXTENSIONS = (".gif", ".mp4")
PHASE_COLOUR = "#e8e8e8"


def _method_label(result) -> str:
    from ..methods import split_spec

    return split_spec(result.method)[0] + (" (sgd)" if result.opt.get("name") == "sgd" else "")


def plot_costs(result, path=None, ax=None, *, title=None, dpi: int = 150):
    """Cost against iteration from ``result.itercosts``, with the exaggeration phases shaded.

    Parameters
    ----------
    result : SmallVisResult
        A run; its ``itercosts`` (``{iteration: total cost}``) must hold at least one entry.
    path : str or Path, optional
        Where to save the figure; the format follows the extension.
    ax : matplotlib Axes, optional
        Draw into this Axes instead of a new figure.
    title : str, optional
        Default ``"<method> — final cost <c>"``.
    dpi : int
        Resolution of saved raster images.

    The y axis is logarithmic when every cost is positive. Early exaggeration (iterations
    ``1..stop_lying_iter``) and late exaggeration (after ``start_late_lying_iter``) are shaded and
    labelled with their factor when the run used them: the costs recorded there are those of the
    exaggerated objective, hence the jumps at the phase boundaries.

    Returns
    -------
    matplotlib.figure.Figure
    """
    costs = {int(i): float(c) for i, c in (result.itercosts or {}).items()}
    if not costs:
        raise ValueError("result.itercosts is empty: no cost was recorded (max_iter = 0?)")
    it = np.array(sorted(costs))
    cost = np.array([costs[i] for i in it])
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.4, 3.6), dpi=dpi, layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    last = max(int(it[-1]), int(result.iter or 0))
    phases = []
    if result.stop_lying_iter and result.exaggeration_factor not in (None, 1):
        phases.append((0, min(result.stop_lying_iter, last),
                       f"early exaggeration ×{result.exaggeration_factor:g}"))
    if result.start_late_lying_iter is not None and result.late_exaggeration_factor not in (None, 1):
        phases.append((result.start_late_lying_iter, last,
                       f"late exaggeration ×{result.late_exaggeration_factor:g}"))
    for start, stop, text in phases:
        ax.axvspan(start, stop, color=PHASE_COLOUR, linewidth=0, zorder=0)
        # labelled from the phase's outer edge inwards, so a short phase does not clip its label
        early = start == 0
        ax.annotate(text, xy=(start if early else stop, 1.0), xycoords=ax.get_xaxis_transform(),
                    xytext=(4 if early else -4, -4), textcoords="offset points",
                    ha="left" if early else "right", va="top", fontsize=8, color="#555555")
    ax.plot(it, cost, color=NONE_COLOUR, linewidth=1.8, marker="o" if len(it) <= 30 else None,
            markersize=3)
    if np.all(cost > 0):
        ax.set_yscale("log")
    ax.set_xlim(0, last if last > 0 else 1)
    ax.set_xlabel("iteration" if result.opt.get("name") != "sgd" else "epoch")
    ax.set_ylabel("cost" if result.opt.get("name") != "sgd" else "cost (sampled estimate)")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)
    ax.set_title(title or f"{_method_label(result)} — final cost {result.cost:.4g}", fontsize=10)
    return _save(fig, path, dpi)


def plot_point_costs(result, path=None, ax=None, *, title=None, dpi: int = 150):
    """The final layout ``result.Y`` coloured by each point's cost ``result.costs``.

    For a KL method the cost of point i is ``sum_j p_ij log(p_ij / q_ij)``: the points the layout
    represents worst stand out. The colour bar is labelled "point cost". Default title:
    ``"<method> — point costs (total <c>)"``. Other arguments as :func:`smallvis.plot.plot_embedding`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    costs = np.asarray(result.costs, dtype=np.float64)
    if costs.shape != (np.asarray(result.Y).shape[0],):
        raise ValueError(f"result.costs must hold one cost per point; got shape {costs.shape}")
    title = title or f"{_method_label(result)} — point costs (total {result.cost:.4g})"
    return plot_embedding(result.Y, costs, title=title, path=path, ax=ax, label_kind="continuous",
                          label_name="point cost", dpi=dpi)


def check_animation_path(path, force: bool = False) -> Path:
    """Raise ``ValueError`` unless ``path`` can take an animation: a ``.gif`` (or ``.mp4`` when
    ffmpeg is installed) in an existing, writable folder, not an existing file unless ``force``."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in ANIMATION_EXTENSIONS:
        raise ValueError(f"cannot write an animation to {path}: use a .gif or .mp4 file")
    if ext == ".mp4":
        from matplotlib.animation import FFMpegWriter

        if not FFMpegWriter.isAvailable():
            raise ValueError(f"cannot write {path}: .mp4 needs ffmpeg, which was not found; "
                             "use a .gif file instead")
    check_output_folder(path, "an animation")
    if path.exists() and not force:
        raise ValueError(f"{path} already exists: use --force (force=True) to overwrite")
    return path


def frame_limits(frames, pad: float = 0.05, shrink: float = 0.85) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame centres (m, 2) and half-widths (m, 2) that follow the layout's size smoothly.

    The centre of frame t is the mean of its points; ``ex_t, ey_t`` are the largest distances from
    it along x and y. The box shape is fixed by the final layout, ``r = ey_m / ex_m`` (last frame m)
    clipped to [0.6, 1.3], and the half-widths are ``(h_t, r h_t)`` with
    ``h_t = max((1 + pad) max(ex_t, ey_t / r), shrink h_{t-1})``: the view zooms out at once when the
    layout grows (every point stays in view) and zooms in by at most ``1 - shrink`` per frame when it
    contracts (e.g. under late exaggeration), so it never jumps.
    """
    centres = np.array([f.mean(axis=0) for f in frames])
    extents = np.array([np.abs(f - c).max(axis=0) for f, c in zip(frames, centres)])
    ex, ey = extents[-1]
    ratio = float(np.clip(ey / ex, 0.6, 1.3)) if ex > 0 else 1.0
    need = np.maximum(extents[:, 0], extents[:, 1] / ratio) * (1 + pad)
    half = np.empty(len(frames))
    for t, h in enumerate(need):
        half[t] = max(h, shrink * half[t - 1]) if t else h
    half = np.where(half > 0, half, 1.0)
    return centres, np.column_stack([half, half * ratio])


def animate(snapshots, path, labels=None, *, title=None, label_kind="auto", label_name=None,
            fps: int = 8, dpi: int = 100, force: bool = True):
    """Write an animation of an optimisation: one frame per snapshot, a GIF or (with ffmpeg) an MP4.

    Parameters
    ----------
    snapshots : sequence of (iteration, Y, cost)
        E.g. collected by ``epoch_callback`` (copy ``Y``: the optimiser may update it in place);
        ``cost`` may be None (iteration 0). Every Y is (n, k) with the same n and k >= 2 (the
        first two dimensions are drawn).
    path : str or Path
        ``.gif`` (matplotlib's Pillow writer) or ``.mp4`` (needs ffmpeg).
    labels : array (n,), optional
        Point colours, as in :func:`smallvis.plot.plot_embedding` (legend or colour bar included).
    title : str, optional
        Prefix of every frame's title, which ends with the iteration and the cost.
    fps : int
        Frames per second.
    force : bool
        Overwrite an existing file (False: ``ValueError``).

    The axes are equal-aspect, without ticks, and follow the layout's growth (:func:`frame_limits`);
    the marker size follows n.

    Returns
    -------
    Path
        ``path``.
    """
    path = check_animation_path(path, force=force)
    snapshots = list(snapshots)
    if not snapshots:
        raise ValueError("animate needs at least one (iteration, Y, cost) snapshot")
    frames = [np.asarray(Y, dtype=np.float64) for _, Y, _ in snapshots]
    n = frames[0].shape[0]
    for Y in frames:
        if Y.ndim != 2 or Y.shape[1] < 2 or Y.shape[0] != n:
            raise ValueError(f"every snapshot needs an (n, k >= 2) layout with n = {n}; "
                             f"got shape {Y.shape}")
    frames = [Y[:, :2] for Y in frames]
    from matplotlib.figure import Figure

    centres, halves = frame_limits(frames)
    ratio = halves[0, 1] / halves[0, 0]
    fig = Figure(figsize=(6.0, round(4.6 * ratio + 0.5, 2)), dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    order = np.random.default_rng(0).permutation(n)
    colours = _point_colours(fig, ax, labels, n, label_kind, label_name)
    scatter = ax.scatter(frames[0][order, 0], frames[0][order, 1], color=colours[order],
                         s=marker_size(n), linewidths=0, alpha=0.85 if n < 5000 else 0.6)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    writer = _writer(path, fps)
    with writer.saving(fig, str(path), dpi):
        for (it, _, cost), Y, c, h in zip(snapshots, frames, centres, halves):
            scatter.set_offsets(Y[order])
            ax.set_xlim(c[0] - h[0], c[0] + h[0])
            ax.set_ylim(c[1] - h[1], c[1] + h[1])
            status = f"iteration {it}" + ("" if cost is None else f", cost {cost:.4g}")
            ax.set_title(f"{title} — {status}" if title else status, fontsize=10)
            writer.grab_frame(facecolor="white")
    logger.info("animation (%d frames) written to %s", len(frames), path)
    return path


def _writer(path: Path, fps: int):
    from matplotlib.animation import FFMpegWriter, PillowWriter

    return PillowWriter(fps=fps) if path.suffix.lower() == ".gif" else FFMpegWriter(fps=fps)


def _point_colours(fig, ax, labels, n: int, label_kind: str, label_name) -> np.ndarray:
    """RGBA colours (n, 4) for ``labels``, drawing the legend or colour bar on ``fig``."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize, to_rgba_array

    if labels is None:
        return to_rgba_array([NONE_COLOUR] * n)
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels must have one entry per point ({n}); got shape {labels.shape}")
    kind = infer_label_kind(labels, label_kind)
    if kind == "none":
        return to_rgba_array([NONE_COLOUR] * n)
    if kind == "class":
        from matplotlib.lines import Line2D

        cats = _categories(labels)
        palette = to_rgba_array(categorical_colours(len(cats)))
        index = {str(c): i for i, c in enumerate(cats)}
        handles = [Line2D([], [], marker="o", linestyle="", markersize=5, markeredgewidth=0,
                          color=palette[i], label=format_label(c)) for i, c in enumerate(cats)]
        ax.legend(handles=handles, title=label_name, loc="center left", bbox_to_anchor=(1.01, 0.5),
                  frameon=False, fontsize=8, title_fontsize=8, handletextpad=0.2,
                  ncol=-(-len(cats) // 20))
        return palette[[index[str(v)] for v in labels]]
    values = _as_float(labels)
    if values is None:
        raise ValueError("continuous labels must be numbers")
    ok = np.isfinite(values)
    from matplotlib.cm import ScalarMappable

    norm = Normalize(values[ok].min(), values[ok].max()) if ok.any() else Normalize(0, 1)
    colours = to_rgba_array([MISSING_COLOUR] * n)
    colours[ok] = colormaps["viridis"](norm(values[ok]))
    bar = fig.colorbar(ScalarMappable(norm, cmap="viridis"), ax=ax, shrink=0.75, pad=0.02)
    bar.outline.set_visible(False)
    bar.ax.tick_params(labelsize=8)
    if label_name:
        bar.set_label(label_name, fontsize=8)
    return colours
