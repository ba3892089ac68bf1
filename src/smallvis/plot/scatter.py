"""Static scatter plots of an embedding (matplotlib, imported on first use; never ``plt.show``).

>>> fig = plot_embedding(Y, labels=species, title="tsne, perplexity 30", path="iris.png")

Figures are built with ``matplotlib.figure.Figure`` directly, without pyplot, so nothing is drawn on
screen, no global figure list grows, and any backend the caller has selected is left alone.
"""

from __future__ import annotations

import math

import numpy as np

from .._util.log import logger

MAX_LEGEND_CLASSES = 60
MAX_NAMED_POINTS = 20  # more points than this, each with its own text label: an id column
NONE_COLOUR = "#3a6ea5"
MISSING_COLOUR = "#bbbbbb"


def infer_label_kind(labels, kind: str = "auto") -> str:
    """``"class"``, ``"continuous"`` or ``"none"`` for ``labels``.

    ``auto``: text, booleans, and numbers with at most 20 distinct whole values (or at most 10 distinct
    values of any kind) are classes; other numbers are continuous. Text with a different value for
    every one of more than :data:`MAX_NAMED_POINTS` points names the points rather than grouping them
    (an id column): ``"none"``, with a warning, since one colour per point shows nothing.
    """
    if labels is None:
        return "none"
    if kind != "auto":
        if kind not in ("class", "continuous", "none"):
            raise ValueError(f"label_kind must be 'auto', 'class', 'continuous' or 'none'; got {kind!r}")
        return kind
    values = _as_float(labels)
    if values is None:
        n = len(labels)
        if n > MAX_NAMED_POINTS and len(set(map(str, labels))) == n:
            logger.warning("the labels have a different value for each of the %d points (an id "
                           "column?), so they do not colour the plot; choose a column that groups "
                           "the points", n)
            return "none"
        return "class"
    uniq = np.unique(values[np.isfinite(values)])
    if len(uniq) <= 10 or (len(uniq) <= 20 and np.all(uniq == np.round(uniq))):
        return "class"
    return "continuous"


def categorical_colours(m: int) -> list:
    """``m`` distinct colours: tab10, then tab20 (dark shades first), tab20b/c, then golden-ratio hues."""
    from matplotlib import colormaps
    from matplotlib.colors import hsv_to_rgb

    tab20 = list(colormaps["tab20"].colors)
    base = list(colormaps["tab10"].colors) if m <= 10 else tab20[0::2] + tab20[1::2]
    if m > len(base):
        base += list(colormaps["tab20b"].colors) + list(colormaps["tab20c"].colors)
    extra = max(0, m - len(base))
    hues = (0.618033988749895 * np.arange(extra)) % 1.0
    base += [tuple(hsv_to_rgb((h, 0.65, 0.85 - 0.25 * (i % 2)))) for i, h in enumerate(hues)]
    return base[:m]


def marker_size(n: int) -> float:
    """Scatter marker area (points^2) for ``n`` points: large for tens of points, small for 10^5."""
    return float(np.clip(300.0 / math.sqrt(max(n, 1)), 0.5, 30.0))


def check_plot_path(path) -> None:
    """Raise ``ValueError`` if matplotlib cannot write ``path`` (unknown extension; a folder that is
    missing, not a folder or not writable)."""
    from pathlib import Path

    from matplotlib.figure import Figure

    from .._util.files import check_output_folder

    path = Path(path)
    formats = Figure().canvas.get_supported_filetypes()
    ext = path.suffix.lower().lstrip(".")
    if ext not in formats:
        raise ValueError(f"cannot write a plot to {path}: use one of .{', .'.join(sorted(formats))}")
    check_output_folder(path, "a plot")


def _save(fig, path, dpi: int):
    """Write ``fig`` to ``path`` (when given) on a white background; return it."""
    if path is not None:
        fig.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
        logger.info("plot written to %s", path)
    return fig


def plot_embedding(Y, labels=None, title=None, path=None, ax=None, *, label_kind="auto",
                   label_name=None, dpi: int = 150, legend: bool = True):
    """Scatter plot of an embedding, coloured by ``labels``.

    Parameters
    ----------
    Y : array (n, k)
        Coordinates. k = 1 is drawn as a strip with vertical jitter, one row per class when there
        are at most ``MAX_STRIP_CLASSES`` classes (so that overlapping classes stay visible); for
        k >= 3 three panels show the pairs of dimensions 1-2, 1-3 and 2-3 (beyond 3 the title
        says these are dims 1-3 of k), or, drawing into a given ``ax``, dims 1-2 only.
    labels : array (n,), optional
        Classes (distinct colours and a legend) or a continuous value (a colour map and a colour bar),
        see :func:`infer_label_kind`. Without labels all points have one colour.
    title : str, optional
    path : str or Path, optional
        Where to save the figure; the format follows the extension (``.png``, ``.pdf``, ``.svg``...).
    ax : matplotlib Axes, optional
        Draw into this Axes instead of a new figure.
    label_kind : {"auto", "class", "continuous"}
        Override the automatic choice of :func:`infer_label_kind`.
    label_name : str, optional
        Legend / colour bar title.
    legend : bool
        Draw the legend or colour bar (False for panels of a grid that has a shared one).
    dpi : int
        Resolution of saved raster images.

    Returns
    -------
    matplotlib.figure.Figure
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] == 0:
        raise ValueError(f"Y must be a non-empty (n, k) array; got shape {Y.shape}")
    n, k = Y.shape
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n,):
            raise ValueError(f"labels must have one entry per point ({n}); got shape {labels.shape}")
    kind = infer_label_kind(labels, label_kind)
    if k >= 3 and ax is None:
        return _save(_pairs_figure(Y, labels, kind, title, label_name, legend, dpi), path, dpi)
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=_figure_size(Y, kind, labels), dpi=dpi, layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    rows = None
    if k == 1:
        x, (y, note, rows) = Y[:, 0], _strip(labels, kind, n, ax)
    else:
        x, y = Y[:, 0], Y[:, 1]
        ax.set_aspect("equal", adjustable="datalim")
        note = f"dims 1-2 of {k}" if k > 2 else None
    _draw(fig, ax, x, y, labels, kind, label_name, legend)
    if rows is not None:  # name the class rows of a 1-D strip on the left
        ax.set_yticks(-np.arange(len(rows)), rows, fontsize=8)
        ax.tick_params(axis="y", length=0)
    full = " ".join(p for p in (title, f"({note})" if note else None) if p)
    if full:
        ax.set_title(full, fontsize=10)
    return _save(fig, path, dpi)


MAX_STRIP_CLASSES = 12  # a 1-D embedding gets one row per class up to this many classes
PAIRS = ((0, 1), (0, 2), (1, 2))  # the panels of a 3-D (or higher) embedding


def _strip(labels, kind, n, ax):
    """Vertical positions for a 1-D embedding: jitter, in one row per class when the classes are
    few, else in one band. Returns ``(y, note, row names or None)``."""
    jitter = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    cats = _categories(labels) if kind == "class" else []
    if not 1 < len(cats) <= MAX_STRIP_CLASSES:
        ax.set_ylim(-1.8, 1.8)
        return jitter, "1-D, vertical jitter", None
    row = {str(c): i for i, c in enumerate(cats)}
    y = -np.array([row[str(v)] for v in labels], dtype=np.float64) + 0.3 * jitter
    ax.set_ylim(-len(cats) + 0.4, 0.6)
    return y, "1-D, one row per class", [format_label(c) for c in cats]


def _draw(fig, ax, x, y, labels, kind, label_name, legend):
    """The scatter itself on a bare Axes (no ticks or frame: embedding coordinates have no units)."""
    n = len(x)
    order = np.random.default_rng(0).permutation(n)  # no class is drawn systematically on top
    style = dict(s=marker_size(n), linewidths=0, alpha=0.85 if n < 5000 else 0.6, rasterized=n > 20000)
    if kind == "class":
        _draw_classes(ax, x, y, labels, order, style, label_name, legend)
    elif kind == "continuous":
        _draw_continuous(fig, ax, x, y, labels, order, style, label_name, legend)
    else:
        ax.scatter(x[order], y[order], color=NONE_COLOUR, **style)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


def _pairs_figure(Y, labels, kind, title, label_name, legend, dpi):
    """A 3-D (or higher) embedding as three panels, dims 1-2, 1-3 and 2-3, one shared legend: the
    first two dimensions alone hide whatever the third separates."""
    from matplotlib.figure import Figure

    k = Y.shape[1]
    fig = Figure(figsize=(12.0, 4.2), dpi=dpi, layout="constrained")
    axes = fig.subplots(1, len(PAIRS))
    for ax, (i, j) in zip(axes, PAIRS):
        ax.set_aspect("equal", adjustable="datalim")
        _draw(fig, ax, Y[:, i], Y[:, j], labels, kind, label_name, legend=False)
        ax.set_xlabel(f"dim {i + 1}", fontsize=9)
        ax.set_ylabel(f"dim {j + 1}", fontsize=9)
        for spine in ax.spines.values():  # a light frame tells the three panels apart
            spine.set_visible(True)
            spine.set_color("#d0d0d0")
    if legend:
        _shared_legend(fig, axes, labels, kind, label_name)
    note = f"dims 1-3 of {k}" if k > 3 else None
    full = " ".join(p for p in (title, f"({note})" if note else None) if p)
    if full:
        fig.suptitle(full, fontsize=10)
    return fig


def _shared_legend(fig, axes, labels, kind, label_name=None):
    """One legend (classes) or colour bar (continuous) for a figure of several panels."""
    if kind == "class":
        from matplotlib.lines import Line2D

        cats = _categories(np.asarray(labels))
        if len(cats) <= MAX_LEGEND_CLASSES:
            colours = categorical_colours(len(cats))
            handles = [Line2D([], [], marker="o", linestyle="", markersize=5, markeredgewidth=0,
                              color=colours[i], label=format_label(c)) for i, c in enumerate(cats)]
            fig.legend(handles=handles, title=label_name, loc="outside right center",
                       frameon=False, fontsize=8, title_fontsize=8)
    elif kind == "continuous":
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        values = _as_float(labels)
        finite = values[np.isfinite(values)]
        sm = ScalarMappable(Normalize(finite.min(), finite.max()), cmap="viridis")
        bar = fig.colorbar(sm, ax=list(axes), shrink=0.6)
        bar.outline.set_visible(False)
        if label_name:
            bar.set_label(label_name, fontsize=8)


def plot_grid(panels, labels=None, path=None, *, ncols: int | None = None, label_kind="auto",
              panel_size: float = 2.6, dpi: int = 120):
    """Small multiples: one embedding per panel, same colouring, one shared legend or colour bar.

    Parameters
    ----------
    panels : sequence of (title, Y) pairs
        ``Y`` may be None (e.g. a run that failed): the panel then shows the title and "failed".
    labels : array (n,), optional
        Colours shared by every panel (all panels must embed the same n points).
    path : str or Path, optional
        Where to save the figure.
    ncols : int, optional
        Panels per row (default: about the square root of the number of panels, at most 6).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure

    panels = list(panels)
    if not panels:
        raise ValueError("plot_grid needs at least one (title, Y) panel")
    ncols = ncols or min(6, math.ceil(math.sqrt(len(panels))))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(panel_size * ncols + 1.2, panel_size * nrows), dpi=dpi,
                 layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    kind = infer_label_kind(labels, label_kind)
    for ax, (title, Y) in zip(axes, panels):
        if Y is None or not np.all(np.isfinite(Y)):
            ax.text(0.5, 0.5, "failed", ha="center", va="center", color=MISSING_COLOUR,
                    transform=ax.transAxes)
            ax.set_title(title, fontsize=9)
            ax.set_axis_off()
            continue
        plot_embedding(Y, labels, ax=ax, label_kind=kind, legend=False)
        ax.set_title(title, fontsize=9)
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    _shared_legend(fig, axes, labels, kind)
    return _save(fig, path, dpi)


def _figure_size(Y: np.ndarray, kind: str, labels=None) -> tuple[float, float]:
    """Width 6.4 in; the height follows the data's aspect ratio (clipped) so little space is wasted
    (a 1-D strip: 2.2 in, or about 0.45 in per class row)."""
    if Y.shape[1] == 1:
        rows = len(_categories(labels)) if kind == "class" else 1
        return 6.4, (round(0.9 + 0.45 * rows, 2) if 1 < rows <= MAX_STRIP_CLASSES else 2.2)
    finite = Y[np.all(np.isfinite(Y[:, :2]), axis=1), :2]
    spans = np.ptp(finite, axis=0) if len(finite) else np.ones(2)
    ratio = float(np.clip(spans[1] / spans[0], 0.6, 1.3)) if spans[0] > 0 else 1.0
    axes_width = 5.6 if kind == "none" else 5.0
    return 6.4, round(axes_width * ratio + 0.45, 2)


def _as_float(labels):
    """Labels as float64, or None when they are text/booleans."""
    labels = np.asarray(labels)
    if labels.dtype.kind in "iuf":
        return labels.astype(np.float64)
    if labels.dtype.kind == "O":
        try:
            if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                   for v in labels):
                return labels.astype(np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _categories(labels) -> list:
    """Distinct labels: sorted when numeric, in order of first appearance otherwise."""
    values = _as_float(labels)
    if values is not None:
        return list(np.unique(labels))
    _, first = np.unique(labels.astype(str), return_index=True)
    return [labels[i] for i in sorted(first)]


def _draw_classes(ax, x, y, labels, order, style, label_name, legend=True):
    from matplotlib.lines import Line2D

    cats = _categories(labels)
    colours = categorical_colours(len(cats))
    index = {str(c): i for i, c in enumerate(cats)}
    codes = np.array([index[str(v)] for v in labels])
    ax.scatter(x[order], y[order], color=[colours[c] for c in codes[order]], **style)
    if not legend:
        return
    if len(cats) > MAX_LEGEND_CLASSES:
        logger.info("%d classes: legend omitted", len(cats))
        return
    handles = [Line2D([], [], marker="o", linestyle="", markersize=5, markeredgewidth=0,
                      color=colours[i], label=format_label(c)) for i, c in enumerate(cats)]
    ax.legend(handles=handles, title=label_name, loc="center left", bbox_to_anchor=(1.01, 0.5),
              frameon=False, fontsize=8, title_fontsize=8, handletextpad=0.2, borderaxespad=0.0,
              labelspacing=0.3, ncol=math.ceil(len(cats) / 20))


def _draw_continuous(fig, ax, x, y, labels, order, style, label_name, legend=True):
    values = _as_float(labels)
    if values is None:
        raise ValueError("continuous labels must be numbers")
    ok = np.isfinite(values[order])
    if not ok.all():
        ax.scatter(x[order][~ok], y[order][~ok], color=MISSING_COLOUR, **style)
    sc = ax.scatter(x[order][ok], y[order][ok], c=values[order][ok], cmap="viridis", **style)
    if not legend:
        return
    bar = fig.colorbar(sc, ax=ax, shrink=0.75, pad=0.02)
    bar.outline.set_visible(False)
    bar.ax.tick_params(labelsize=8)
    if label_name:
        bar.set_label(label_name, fontsize=8)


def format_label(value) -> str:
    """A class label as legend or table text: a whole float without ".0" (``2.0`` -> ``"2"``)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def plot_dimensionality(result, path=None, *, ax=None, title=None, dpi: int = 150):
    """Mean soft correlation dimension against perplexity, with the intrinsic dimensionality marked.

    Parameters
    ----------
    result : IntrinsicDimensionality
        What :func:`smallvis.affinity.idp.intrinsic_dimensionality` returns.
    path : str or Path, optional
        Where to save the figure; the format follows the extension.
    ax : matplotlib Axes, optional
        Draw into this Axes instead of a new figure.
    title : str, optional
    dpi : int
        Resolution of saved raster images.

    The x axis is logarithmic with a tick at every candidate perplexity. The maximum ``D`` of the mean
    curve is marked at the IDP with a short note. With classes (``result.classes``) each class has its
    own curve, its IDP marked on it and a legend entry; the mean over all points is drawn thicker, in
    black.

    Returns
    -------
    matplotlib.figure.Figure
    """
    U = np.asarray(result.perplexities, dtype=np.float64)
    mean = np.asarray(result.mean_dint, dtype=np.float64)
    classes = result.classes
    if U.ndim != 1 or U.size == 0 or mean.shape != U.shape:
        raise ValueError("result must have one mean dimension per candidate perplexity")
    if ax is None:
        from matplotlib.figure import Figure

        width = 6.4 if classes is None else 7.4
        fig = Figure(figsize=(width, 4.0), dpi=dpi, layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    dot = dict(marker="o", markersize=3.5)
    if classes is not None:
        curves = np.asarray(result.class_mean_dint, dtype=np.float64)
        colours = categorical_colours(len(classes))
        for c, curve, colour in zip(classes, curves, colours):
            ax.plot(U, curve, color=colour, linewidth=1.3, label=format_label(c), **dot)
            idp = result.class_idp.get(c)
            if idp is not None:
                j = int(np.argmin(np.abs(U - idp)))
                ax.plot([U[j]], [curve[j]], linestyle="", marker="o", markersize=7, color=colour,
                        markeredgecolor="white", markeredgewidth=1.0, zorder=3)
        ax.plot(U, mean, color="black", linewidth=2.6, label="all points", zorder=4, **dot)
    else:
        ax.plot(U, mean, color=NONE_COLOUR, linewidth=2.0, label="all points", **dot)
    ax.plot([result.idp], [result.D], linestyle="", marker="D", markersize=8, color="black",
            markeredgecolor="white", markeredgewidth=1.2, zorder=5)
    right = U.size > 1 and result.idp > math.sqrt(U[0] * U[-1])  # note on the free side
    ax.annotate(f"D = {result.D:.3g} at perplexity {_fmt_perplexity(result.idp)}",
                xy=(result.idp, result.D), xytext=(-8 if right else 8, 8), textcoords="offset points",
                ha="right" if right else "left", va="bottom", fontsize=9, zorder=6,
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.85))
    ax.set_xscale("log")
    if U.size == 1:
        ax.set_xlim(U[0] / 2, U[0] * 2)
    last, step = U.size - 1, math.ceil(U.size / 10)  # at most about ten tick labels
    shown = {i for i in range(0, last + 1, step) if i == last or last - i >= step} | {last}
    ax.set_xticks(U, labels=[_fmt_perplexity(u) if i in shown else "" for i, u in enumerate(U)])
    ax.xaxis.set_minor_locator(_null_locator())
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + 0.08 * (high - low))  # room for the note above the maximum
    ax.set_xlabel("perplexity")
    ax.set_ylabel("mean soft correlation dimension")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)
    if classes is not None and len(classes) <= MAX_LEGEND_CLASSES:
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=8,
                  handlelength=1.8, borderaxespad=0.0, labelspacing=0.3,
                  ncol=math.ceil((len(classes) + 1) / 20))
    if title:
        ax.set_title(title, fontsize=10)
    return _save(fig, path, dpi)


def _fmt_perplexity(u: float) -> str:
    """``4``, ``142.8`` -> ``143``, ``5.0211`` -> ``5.02``: short labels for perplexities."""
    u = float(u)
    return f"{u:.0f}" if u >= 100 or u == round(u) else f"{u:.3g}"


def _null_locator():
    from matplotlib.ticker import NullLocator

    return NullLocator()
