"""``smallvis transform``: place new points next to an embedding saved with ``embed --save-model``.

::

    smallvis embed train.csv --labels digit --save-model digits.pkl --plot train.png
    smallvis transform test.csv --model digits.pkl --labels digit --out test_xy.csv --plot test.png

The plot shows the fitted points in grey and the new points on top, coloured by their labels.
A model file is a Python pickle: load only files you trust.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

from .._util.files import check_output_folder
from .options import add_data_dir_option, add_talk_options, whole_number
from ..io.source import load_source


def add_transform_parser(sub) -> None:
    t = sub.add_parser("transform", help="place new points next to a saved embedding",
                       description="Place the points of INPUT (a built-in dataset name or a "
                                   ".csv/.tsv/.txt/.npy/.h5ad file with the columns the model was fitted "
                                   "on) next to the embedding saved by 'smallvis embed ... "
                                   "--save-model FILE.pkl'. The fitted points do not move; the "
                                   "new ones are optimised under the same method on the same "
                                   "engine. A model file is a pickle: load only files you trust.")
    t.add_argument("input", metavar="INPUT")
    t.add_argument("--model", required=True, metavar="FILE.pkl",
                   help="the model written by 'smallvis embed --save-model'")
    t.add_argument("--labels", metavar="COLUMN",
                   help="label column of INPUT (name or 0-based index): colours, not used to place")
    add_data_dir_option(t)
    t.add_argument("--layer", metavar="NAME", help="AnnData .h5ad input: this layer, not X")
    t.add_argument("--obsm", metavar="NAME", help="AnnData .h5ad input: this obsm entry, not X")
    t.add_argument("--max-iter", type=whole_number, metavar="N",
                   help="iterations (epochs on the sgd engine); default 100 (sgd: 100, 30 above "
                        "10,000 points in all)")
    t.add_argument("--joint", action="store_true",
                   help="place the new points jointly (neighbours of one another), not each "
                        "against the fitted points only (bh, fft, sgd engines)")
    t.add_argument("--seed", type=whole_number, metavar="S", help="random seed (default: the fit's)")
    t.add_argument("--threads", type=whole_number, metavar="N", help="threads (default: the fit's)")
    t.add_argument("--out", metavar="FILE.csv|.npy", help="write the new points' coordinates")
    t.add_argument("--plot", metavar="FILE.png",
                   help="save a plot: the fitted points in grey, the new ones on top (overwrites)")
    t.add_argument("--force", action="store_true", help="let --out overwrite an existing file")
    add_talk_options(t, verbose="log the run")
    t.set_defaults(run=run_transform)


def load_model(path):
    """The transform model pickled in ``path``, with a clear error for anything else."""
    from ..api.transform import Model

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {str(path)!r} not found")
    try:
        with open(path, "rb") as fh:
            model = pickle.load(fh)
    except ValueError:  # a version the model refuses: its message says which
        raise
    except Exception as err:  # not a pickle, truncated, or from a library not installed
        raise ValueError(f"{path} is not a smallvis model (written by 'smallvis embed "
                         f"--save-model'): {type(err).__name__}: {err}") from None
    if not isinstance(model, Model):
        raise ValueError(f"{path} holds a {type(model).__name__}, not a smallvis model (written by "
                         "'smallvis embed --save-model')")
    return model


def run_transform(args) -> int:
    from .embed import write_coordinates

    out = Path(args.out) if args.out is not None else None
    if out is not None:
        if out.suffix.lower() not in (".csv", ".npy"):
            raise ValueError(f"--out must name a .csv or .npy file; got {args.out!r}")
        check_output_folder(out, "the coordinates (--out)")
        if out.exists() and not args.force:
            raise ValueError(f"{out} already exists: use --force to overwrite")
    if args.plot is not None:
        from ..plot import check_plot_path

        check_plot_path(args.plot)
    model = load_model(args.model)
    data = load_source(args.input, args.labels, args.data_dir, layer=args.layer, obsm=args.obsm)
    from ..api.transform import smallvis_transform

    Y = smallvis_transform(model, data.X, max_iter=args.max_iter, random_state=args.seed,
                           verbose=args.verbose, n_threads=args.threads, joint=args.joint)
    if args.plot is not None:
        plot_transform(model, Y, data, args.plot)
    if out is not None:
        write_coordinates(out, Y, data.labels, data.label_name, exclusive=not args.force)
    if not args.quiet:
        method = model.info.get("method")
        name = method[0] if isinstance(method, (tuple, list)) else method
        print(f"{Y.shape[0]} new points placed next to {model.n} fitted ones ({name}, "
              f"engine {model.info.get('engine')})"
              + (f"; coordinates in {out}" if out else "")
              + (f"; plot in {args.plot}" if args.plot else ""), file=sys.stdout)
    return 0


def plot_transform(model, Y, data, path) -> None:
    """The fitted points in light grey, the new points on top (coloured by their labels)."""
    import matplotlib

    if not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plot import plot_embedding

    fig, ax = plt.subplots(figsize=(7, 6))
    ax.scatter(model.Y[:, 0], model.Y[:, 1] if model.Y.shape[1] > 1 else model.Y[:, 0] * 0,
               s=4, c="0.85", linewidths=0, label="fitted")
    plot_embedding(Y[:, :2], data.labels, ax=ax, label_kind=data.label_kind,
                   label_name=data.label_name,
                   title=f"{Y.shape[0]} new points next to {model.n} fitted (grey)")
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
