"""``smallvis idp``: the mean soft correlation dimension by perplexity, its maximum and the IDP, as a
table and a plot (one curve per class with labels)."""

from __future__ import annotations

import argparse
import logging
import math
from pathlib import Path

from .._util.files import atomic_write, check_output_folder
from .options import add_data_dir_option
from ..io.source import Source, load_source


def add_idp_parser(sub) -> None:
    """The ``idp`` subcommand's arguments (``sub`` is the main parser's subparsers)."""
    i = sub.add_parser("idp", help="intrinsic dimensionality and the perplexity it suggests",
                       description="Mean soft correlation dimension of INPUT (a built-in dataset "
                                   "name or a .csv/.tsv/.txt/.npy file) at each candidate "
                                   "perplexity; its maximum D is the intrinsic dimensionality and "
                                   "the perplexity reaching it the IDP (what --perplexity idp of "
                                   "'smallvis embed' searches for). Classes get their own curves.")
    i.add_argument("input", metavar="INPUT")
    i.add_argument("--perplexities", type=_perplexity_list, metavar="LIST",
                   help="increasing candidate perplexities, e.g. 4,8,16 or '4 8 16'; default "
                   "4, 8, 16, ... up to min(128, n/2)")
    i.add_argument("--labels", metavar="COLUMN",
                   help="class column of a file (name or 0-based index): one curve per class")
    add_data_dir_option(i)
    i.add_argument("--scale", metavar="MODE", help="absmax (default), scale, range or none")
    i.add_argument("--pca", type=int, metavar="N", help="reduce the input to N principal components")
    i.add_argument("--plot", metavar="FILE.png", help="save the curves (overwrites)")
    i.add_argument("--out", metavar="FILE.csv", help="save the table")
    i.add_argument("--force", action="store_true", help="let --out overwrite an existing file")
    i.add_argument("--verbose", "-v", action="store_true", help="log progress details")
    i.set_defaults(run=run_idp)





def _perplexity_list(text: str) -> list:
    """``"4,8,16"``, ``"4 8 16"`` or ``"4, 8, 16"`` -> ``[4.0, 8.0, 16.0]``."""
    items = text.replace(",", " ").split()
    try:
        values = [float(item) for item in items]
    except ValueError:
        values = None
    if not values or not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas or spaces (e.g. 4,8,16); got {text!r}")
    return values


def _check_idp_outputs(args) -> Path | None:
    """Validate --out/--plot of 'idp' before the computation; return the table path."""
    out = None
    if args.out is not None:
        out = Path(args.out)
        if out.suffix.lower() != ".csv":
            raise ValueError(f"--out must name a .csv file; got {args.out!r}")
        check_output_folder(out, "the table (--out)")
        if out.exists() and not args.force:
            raise ValueError(f"{out} already exists: use --force to overwrite")
    if args.plot is not None:
        from ..plot import check_plot_path

        check_plot_path(args.plot)  # never a .csv, so never the same file as --out
    return out


def _idp_input(X, scale, pca):
    """The input as ``smallvis(X, scale=..., pca=True, initial_dims=pca)`` processes it (the same
    function, :func:`smallvis.io.prepare.prepare_input`, does it), and a note saying what was done."""
    import numpy as np

    from ..io.prepare import prepare_input
    from ..io.preprocess import resolve_scale

    mode = resolve_scale("absmax" if scale is None else scale)
    if pca is not None and pca < 1:
        raise ValueError(f"--pca must be at least 1; got {pca}")
    data, pca_dims, _, _ = prepare_input(
        X, precomputed=False, scale=mode, pca=pca is not None, initial_dims=pca or 0, k=1,
        rng=np.random.default_rng(0))
    note = f"scale {mode}" + (f", PCA to {pca_dims} dims" if pca_dims else "")
    return data.X, note


def _idp_classes(data: Source):
    """The labels to split the curves by, or None (no labels, or continuous ones)."""
    import numpy as np

    from ..plot.scatter import format_label, infer_label_kind

    if data.labels is None or data.label_kind in ("none", "continuous"):
        return None
    labels = np.asarray(data.labels)
    if infer_label_kind(labels, data.label_kind) != "class":
        logging.getLogger("smallvis").warning(
            "labels %r look continuous (%d distinct values): no per-class curves",
            data.label_name, len(np.unique(labels)))
        return None
    if labels.dtype.kind == "f" and np.isnan(labels).any():  # missing class: its own class "NA"
        labels = np.array(["NA" if v != v else format_label(v) for v in labels], dtype=object)
    return labels


def run_idp(args) -> int:
    """Run ``smallvis idp`` with parsed ``args``; returns the exit status."""
    from ..affinity.idp import intrinsic_dimensionality
    from ..plot.scatter import format_label

    out = _check_idp_outputs(args)
    data = load_source(args.input, args.labels, args.data_dir)
    labels = _idp_classes(data)
    X, note = _idp_input(data.X, args.scale, args.pca)
    res = intrinsic_dimensionality(X, args.perplexities, labels=labels)
    name = data.info.get("name") or Path(args.input).name
    if args.plot is not None:
        from ..plot import plot_dimensionality

        plot_dimensionality(res, args.plot, title=f"{name}: intrinsic dimensionality")
    frame = res.to_frame()
    if out is not None:
        atomic_write(out, lambda fh: frame.to_csv(fh, index=False, lineterminator="\n"))
    if data.dropped and args.labels is None:
        names = ", ".join(map(repr, data.dropped))
        print(f"note: non-numeric column(s) {names} not used; --labels {data.dropped[0]} "
              "would give one curve per class")
    print(f"{name}: {X.shape[0]} points ({note}); mean soft correlation dimension by perplexity")
    classes = [format_label(c) for c in res.classes] if res.classes is not None else []
    header = ["perplexity", "mean"] + classes
    rows = [[f"{u:g}"] + [f"{v:.3f}" for v in values]
            for u, values in zip(res.perplexities, frame.to_numpy()[:, 1:])]
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    for row in [header] + rows:
        print("  ".join(f"{cell:>{w}}" for cell, w in zip(row, widths)))
    print(f"intrinsic dimensionality D = {res.D:.3g} at perplexity {res.idp:g}")
    if res.classes is not None:
        for c, curve in zip(res.classes, res.class_mean_dint):
            u = res.class_idp[c]
            d = curve[list(res.perplexities).index(u)]
            print(f"  {data.label_name or 'class'} {format_label(c)}: D = {d:.3g} at perplexity {u:g}")
    saved = ([f"plot {args.plot}"] if args.plot is not None else []) + \
        ([f"table {out}"] if out is not None else [])
    if saved:
        print("saved: " + ", ".join(saved))
    return 0
