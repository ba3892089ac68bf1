"""``smallvis embed``: its options, the run, and what it writes (coordinates, the JSON sidecar,
plots and animations) and prints."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .._util.files import atomic_write, check_output_folder, jsonable
from .._version import __version__
from .options import (PROG, add_data_dir_option, add_talk_options, number_or_name, parse_params,
                      positive_number, whole_number)
from ..metrics import K_METRICS, METRIC_K, METRIC_NAMES, compute_metrics, pbic_inputs
from ..io.source import DATA_EXTENSIONS, load_source

_NOT_PARAMETERS = ("X", "epoch_callback", "ret_extra", "verbose", "progress")


def add_embed_parser(sub) -> None:
    """The ``embed`` subcommand's arguments (``sub`` is the main parser's subparsers)."""
    e = sub.add_parser("embed", help="embed a dataset or a CSV/TSV/NPY/h5ad file",
                       description="Embed INPUT (a built-in dataset name or a .csv/.tsv/.txt/.npy/.h5ad "
                                   "file; a file wins when both exist) and plot or save the result.")
    e.add_argument("input", metavar="INPUT")
    g = e.add_argument_group("method")
    g.add_argument("--method", default=None, help="method name (see 'smallvis methods'); default tsne")
    g.add_argument("--param", action="append", metavar="KEY=VALUE", help="method parameter (repeatable)")
    g.add_argument("--perplexity", type=number_or_name, metavar="P",
                   help="perplexity (or neighbour count k for kNN methods); default: the "
                   "method's (30; ncvis 15)")
    g.add_argument("--k", type=int, metavar="K", help="output dimensions; default 2")
    g = e.add_argument_group("input processing")
    g.add_argument("--scale", metavar="MODE", help="absmax (default), scale, range or none")
    g.add_argument("--metric", metavar="NAME",
                   help="input distance: euclidean (default), sqeuclidean, manhattan, chebyshev, "
                        "minkowski, cosine, correlation, hamming, jaccard, canberra, braycurtis, "
                        "haversine, or precomputed (INPUT is a distance matrix)")
    g.add_argument("--metric-param", action="append", metavar="KEY=VALUE",
                   help="metric parameter, e.g. p=3 for minkowski (repeatable)")
    g.add_argument("--pca", type=int, metavar="N", help="reduce the input to N principal components")
    g.add_argument("--whiten", action="store_true", help="whiten the PCA components (default N = 50)")
    g.add_argument("--labels", metavar="COLUMN",
                   help="label column of a file (name or 0-based index): colours the plot")
    add_data_dir_option(g)
    g.add_argument("--supervised", action="store_true",
                   help="use the --labels column to weaken affinities across classes (a supervised "
                        "embedding; missing labels and -1 are unlabelled)")
    g.add_argument("--target-weight", type=float, metavar="W",
                   help="with --supervised: weight of the labels in [0, 1]; default 0.5")
    g.add_argument("--target-metric", choices=("categorical", "l2"),
                   help="with --supervised: the labels are classes (default) or a continuous "
                        "target (l2)")
    g.add_argument("--layer", metavar="NAME", help="AnnData .h5ad input: embed this layer, not X")
    g.add_argument("--obsm", metavar="NAME",
                   help="AnnData .h5ad input: embed this obsm entry (e.g. X_pca), not X")
    g = e.add_argument_group("initialisation and optimisation")
    g.add_argument("--defaults", choices=("auto", "smallvis"), default="auto",
                   help="settings for what is not given: auto (default: a good picture for every "
                        "method; openTSNE's recipe for t-SNE, the sgd engine for umap/largevis/tumap/"
                        "ncvis) or smallvis (the R package's defaults and numbers)")
    g.add_argument("--init", metavar="NAME",
                   help="rand (default), pca, spca, laplacian, normlaplacian, or a .npy/.csv matrix")
    g.add_argument("--init-sdev", type=positive_number, metavar="S", help="rescale the initial columns to sd S")
    g.add_argument("--max-iter", type=whole_number, metavar="N", help="iterations (epochs with --engine sgd); default 1000 (sgd: "
                   "500, or 200 above 10,000 points; ncvis 50)")
    g.add_argument("--eta", type=number_or_name, metavar="ETA", help="learning rate or 'optsne'")
    g.add_argument("--opt", metavar="NAME",
                   help="optimiser: dbd (default), ndbd, adagrad, adadelta, rmsprop, adam, amsgrad, "
                   "adamax, nadam, steepd, mom, nag, gmom, l-bfgs, bfgs, cg, sd, specd")
    g.add_argument("--opt-param", action="append", metavar="KEY=VALUE",
                   help="optimiser parameter (repeatable)")
    g.add_argument("--exaggeration", type=positive_number, metavar="F", help="early exaggeration factor")
    g.add_argument("--stop-lying-iter", type=int, metavar="N", help="last early-exaggeration iteration")
    g.add_argument("--late-exaggeration", type=positive_number, metavar="F", help="late exaggeration factor")
    g.add_argument("--start-late-lying-iter", type=int, metavar="N",
                   help="iteration after which late exaggeration starts")
    g.add_argument("--engine", metavar="NAME",
                   help="auto (default), dense, exact, bh (Barnes-Hut), fft (FIt-SNE), sgd")
    g.add_argument("--engine-param", action="append", metavar="KEY=VALUE",
                   help="engine option, e.g. theta=0.5 (bh) or negative_sample_rate=5 (sgd); "
                        "repeatable")
    g.add_argument("--threads", type=whole_number, metavar="N",
                   help="numba threads (default 0: all; the result is the same for any N)")
    g.add_argument("--seed", type=whole_number, metavar="S",
                   help="random seed (default: a fresh one, printed and recorded for reuse)")
    g = e.add_argument_group("output")
    g.add_argument("--plot", metavar="FILE.png", help="save a scatter plot (overwrites)")
    g.add_argument("--out", metavar="FILE.csv|.npy",
                   help="save the coordinates, plus FILE.json with parameters, costs and metrics")
    g.add_argument("--plot-costs", metavar="FILE.png",
                   help="save the cost against iteration, exaggeration phases shaded (overwrites)")
    g.add_argument("--plot-point-costs", metavar="FILE.png",
                   help="save the layout coloured by each point's cost: the worst-placed points "
                        "stand out (overwrites)")
    g.add_argument("--animate", metavar="FILE.gif|.mp4",
                   help="save an animation of the optimisation, one frame per epoch (.mp4 needs "
                        "ffmpeg)")
    g.add_argument("--animate-every", type=int, metavar="N",
                   help="with --animate: a frame (and a cost evaluation) every N iterations; "
                        "default: every epoch (max-iter / 10)")
    g.add_argument("--save-model", metavar="FILE.pkl",
                   help="save what 'smallvis transform' needs to place new points next to this "
                        "embedding (refuses to overwrite without --force)")
    g.add_argument("--force", action="store_true",
                   help="let --out and --animate overwrite existing files")
    g.add_argument("--metrics", action="store_true",
                   help=f"compute kNN preservation, trustworthiness and continuity at k = "
                        f"{METRIC_K}, the R_NX AUC, random triplet accuracy and (KL methods) pBIC")
    add_talk_options(g, verbose="log progress details", quiet="no progress bar or summary")
    e.set_defaults(run=_cmd_embed)


def _smallvis_kwargs(args) -> dict:
    """The arguments for ``smallvis()`` that the command line sets (the rest keep their defaults)."""
    kw = {}
    params = parse_params(args.param, "--param")
    if args.method is not None or params:
        name = args.method or "tsne"
        kw["method"] = (name, params) if params else name
    opt_params = parse_params(args.opt_param, "--opt-param")
    if args.opt is not None or opt_params:
        name = args.opt or "dbd"
        kw["opt"] = (name, opt_params) if opt_params else name
    simple = {"perplexity": "perplexity", "k": "k", "init_sdev": "Y_init_sdev", "scale": "scale",
              "max_iter": "max_iter", "eta": "eta", "exaggeration": "exaggeration_factor",
              "stop_lying_iter": "stop_lying_iter", "late_exaggeration": "late_exaggeration_factor",
              "start_late_lying_iter": "start_late_lying_iter", "threads": "n_threads"}
    for option, name in simple.items():
        value = getattr(args, option)
        if value is not None:
            kw[name] = value
    engine_params = parse_params(args.engine_param, "--engine-param")
    if args.engine is not None or engine_params:
        name = args.engine or "auto"
        kw["engine"] = (name, engine_params) if engine_params else name
    if args.pca is not None:
        kw["pca"], kw["initial_dims"] = True, args.pca
    if args.whiten:
        kw["pca"] = "whiten"
    if args.init is not None:
        kw["Y_init"] = _init_value(args.init)
    if args.metric is not None:
        kw["metric"] = args.metric
    metric_params = parse_params(args.metric_param, "--metric-param")
    if metric_params:
        kw["metric_kwds"] = metric_params
    kw["defaults"] = args.defaults
    return kw


def _init_value(text: str):
    path = Path(text)
    if path.exists():
        from ..io.tabular import read_table

        return read_table(path).X
    if path.suffix.lower() in DATA_EXTENSIONS:
        raise FileNotFoundError(f"--init file not found: {text}")
    return text


def _check_outputs(args) -> tuple[Path | None, Path | None]:
    """Validate --out/--plot before the (possibly long) run: (coordinates path, sidecar path)."""
    out = sidecar = None
    if args.out is not None:
        out = Path(args.out)
        if out.suffix.lower() not in (".csv", ".npy"):
            raise ValueError(f"--out must name a .csv or .npy file; got {args.out!r}")
        check_output_folder(out, "the coordinates (--out)")
        sidecar = out.with_suffix(".json")
        existing = [p for p in (out, sidecar) if p.exists()]
        if existing and not args.force:
            raise ValueError(f"{existing[0]} already exists: use --force to overwrite")
    if args.plot is not None:
        from ..plot import check_plot_path

        check_plot_path(args.plot)
        if out is not None and Path(args.plot).resolve() in (out.resolve(), sidecar.resolve()):
            raise ValueError("--plot and --out must name different files")
    return out, sidecar


def _cmd_embed(args) -> int:
    kwargs = _smallvis_kwargs(args)
    out, sidecar = _check_outputs(args)
    snapshots, callback = _check_run_plots(args, kwargs, out, sidecar)
    model_path = check_model_path(args.save_model, args.force, out, sidecar, args.plot)
    data = load_source(args.input, args.labels, args.data_dir, layer=args.layer, obsm=args.obsm)
    if (args.target_weight is not None or args.target_metric is not None) \
            and not args.supervised:
        raise ValueError("--target-weight and --target-metric need --supervised")
    if args.supervised:
        if data.labels is None:
            raise ValueError("--supervised needs --labels COLUMN (the labels to supervise with)")
        kwargs["y"] = data.labels
        if args.target_weight is not None:
            kwargs["target_weight"] = args.target_weight
        if args.target_metric is not None:
            kwargs["target_metric"] = args.target_metric
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little") >> 1
    from ..api import smallvis

    # a bar only on a terminal (not in logs or pipes) and not with --verbose (which logs each epoch)
    progress = not (args.quiet or args.verbose) and sys.stderr.isatty()
    res = smallvis(data.X, ret_extra=["model"] if model_path else True, random_state=seed,
                   verbose=args.verbose, progress=progress, epoch_callback=callback, **kwargs)
    if res.diverged:  # --defaults smallvis warns and returns it; the command line writes nothing
        from ..api import DivergenceError

        raise DivergenceError(f"the optimisation of method {method_name(res.method)!r} diverged at "
                              f"iteration {res.iter}: try a smaller --eta, or --defaults auto")
    if args.plot_costs is not None:
        from ..plot.run import plot_costs

        plot_costs(res, path=args.plot_costs)
    if args.plot_point_costs is not None:
        from ..plot.run import plot_point_costs

        plot_point_costs(res, path=args.plot_point_costs)
    if args.animate is not None:
        from ..plot.run import animate

        animate(snapshots, args.animate, data.labels, title=method_name(res.method),
                label_kind=data.label_kind, label_name=data.label_name)
    if args.metrics:
        res.metrics = _quality(data.X, res, kwargs)
    title = plot_title(res)
    if args.plot is not None:
        from ..plot import plot_embedding

        plot_embedding(res.Y, data.labels, title=title, path=args.plot,
                       label_kind=data.label_kind, label_name=data.label_name)
    if out is not None:
        record = _record(args, kwargs, data, seed, res)
        _publish(out, sidecar, res.Y, data, record, force=args.force)
    if model_path is not None:
        save_model(model_path, res.extras.pop("model"), data, force=args.force)
    if not args.quiet:
        _report(args, data, res, seed, out, sidecar)
    return 0


def _quality(X, res, kwargs) -> dict:
    """--metrics under the run's metric (a kNN graph as input: kNN preservation only, since the
    rank metrics and triplets need every pair's distance)."""
    metric = kwargs.get("metric", "euclidean")
    if isinstance(metric, str) and metric.strip().lower().startswith("pre"):
        metric = "precomputed"  # neighbours read from the distance matrix's rows
    if kwargs.get("metric_kwds"):
        metric = (metric, kwargs["metric_kwds"])
    return compute_metrics(X, res.Y, **pbic_inputs(res), metric=metric)


def check_model_path(path, force: bool, *others) -> Path | None:
    """Validate --save-model before the run: a ``.pkl`` file that is not another output and does
    not exist (unless ``force``)."""
    if path is None:
        return None
    path = Path(path)
    if path.suffix.lower() != ".pkl":
        raise ValueError(f"--save-model must name a .pkl file; got {str(path)!r}")
    check_output_folder(path, "the model (--save-model)")
    if any(o is not None and Path(o).resolve() == path.resolve() for o in others):
        raise ValueError("--save-model must name a file of its own")
    if path.exists() and not force:
        raise ValueError(f"{path} already exists: use --force to overwrite")
    return path


def save_model(path: Path, model, data, *, force: bool) -> None:
    """Pickle the transform model (with the label column's name, for 'smallvis transform')."""
    import pickle

    model.info.update(label_name=data.label_name, label_kind=data.label_kind)
    atomic_write(path, lambda fh: pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL),
                 binary=True, exclusive=not force)


def _publish(out: Path, sidecar: Path, Y, data, record, force: bool) -> None:
    """Write the coordinates, then the sidecar; without --force neither overwrites a file that
    appeared during the run (two runs given one --out both pass the check before the run)."""
    exclusive = not force
    try:
        write_coordinates(out, Y, data.labels, data.label_name, exclusive=exclusive)
    except FileExistsError:
        raise ValueError(f"{out} appeared while this run was computing (another run writing "
                         "there?): not overwritten; use --force to overwrite") from None
    try:
        atomic_write(sidecar, lambda fh: fh.write(json.dumps(record, indent=1) + "\n"),
                     exclusive=exclusive)
    except FileExistsError:
        out.unlink(missing_ok=True)  # ours, written a moment ago: no half result
        raise ValueError(f"{sidecar} appeared while this run was computing (another run writing "
                         "there?): not overwritten; use --force to overwrite") from None


def _check_run_plots(args, kwargs, out, sidecar) -> tuple:
    """Validate --plot-costs/--plot-point-costs/--animate before the run. With --animate, set
    ``kwargs["epoch"]`` from --animate-every and return ``(snapshots, callback)``: the epoch
    callback appends ``(iteration, Y, cost)`` to the list; else ``(None, None)``."""
    if args.animate_every is not None and args.animate is None:
        raise ValueError("--animate-every needs --animate FILE.gif")
    plots = (args.plot, args.plot_costs, args.plot_point_costs, args.animate)
    for path in plots[1:3]:
        if path is not None:
            from ..plot import check_plot_path

            check_plot_path(path)
    paths = [Path(p).resolve() for p in plots if p is not None]
    paths += [p.resolve() for p in (out, sidecar) if p is not None]
    if len(set(paths)) < len(paths):
        raise ValueError("--plot, --plot-costs, --plot-point-costs, --animate and --out must name "
                         "different files")
    if args.animate is None:
        return None, None
    from ..plot.run import check_animation_path

    check_animation_path(args.animate, force=args.force)
    if args.k == 1:
        raise ValueError("--animate needs at least 2 output dimensions (--k)")
    if args.animate_every is not None:
        if args.animate_every < 1:
            raise ValueError(f"--animate-every must be >= 1; got {args.animate_every}")
        kwargs["epoch"] = args.animate_every
    snapshots = []
    return snapshots, lambda Y, it, cost: snapshots.append((it, Y.copy(), cost))


def method_name(method) -> str:
    """Canonical name of a ``method`` argument (``"ts"`` -> ``"tsne"``)."""
    from ..methods import split_spec

    return split_spec(method)[0]


def plot_title(res) -> str:
    """``"<method>, perplexity <p> — final cost <c>"`` (perplexity left out when not a single number;
    the sgd engine's cost is a sampled estimate, marked ``~``)."""
    sgd = res.opt.get("name") == "sgd"
    parts = [method_name(res.method) + (" (sgd)" if sgd else "")]
    p = res.perplexity
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        parts.append(f"perplexity {p:g}")
    return ", ".join(parts) + f" — final cost {'~' if sgd else ''}{res.cost:.4g}"


def write_coordinates(path: Path, Y, labels=None, label_name=None, exclusive: bool = False) -> None:
    """Coordinates to ``.csv`` (header Y1..Yk, plus the label column) or ``.npy``, atomically
    (``exclusive``: ``FileExistsError`` rather than overwrite)."""
    import numpy as np

    if path.suffix.lower() == ".npy":
        atomic_write(path, lambda fh: np.save(fh, np.asarray(Y)), binary=True, exclusive=exclusive)
        return
    import pandas as pd

    frame = pd.DataFrame(np.asarray(Y), columns=[f"Y{j + 1}" for j in range(Y.shape[1])])
    if labels is not None:
        frame[label_name or "label"] = labels
    atomic_write(path, lambda fh: frame.to_csv(fh, index=False, lineterminator="\n"),
                 exclusive=exclusive)


def _record(args, kwargs, data, seed, res) -> dict:
    """The JSON sidecar: resolved parameters, input, result summary, itercosts, metrics, timings."""
    import inspect
    from datetime import datetime, timezone

    from ..api import smallvis

    params = {name: p.default for name, p in inspect.signature(smallvis).parameters.items()
              if name not in _NOT_PARAMETERS}
    params.update(kwargs)
    params.update(res.settings)  # what --defaults auto chose
    params["random_state"] = seed
    if "Y_init" in kwargs and not isinstance(kwargs["Y_init"], str):
        params["Y_init"] = f"matrix from {args.init}"
    if "y" in kwargs:
        params["y"] = f"labels from column {data.label_name or args.labels}"
    result = res.to_dict()
    for bulky in ("Y", "costs", "model"):
        result.pop(bulky, None)
    result["method_name"] = method_name(res.method)
    result["final_cost"] = res.cost
    return jsonable({
        "smallvis_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": [PROG, *args.argv],
        "input": {**data.info, "n": int(data.X.shape[0]), "dims": int(data.X.shape[1])},
        "seed": seed,
        "parameters": params,
        "result": result,
        "metrics": res.metrics,
        "outputs": {"coordinates": args.out, "plot": args.plot},
    })


def _report(args, data, res, seed, out, sidecar) -> None:
    if data.dropped and args.labels is None:
        names = ", ".join(map(repr, data.dropped))
        print(f"note: non-numeric column(s) {names} not used; --labels {data.dropped[0]} "
              "would colour the plot by it")
    if res.metrics:
        shown = [f"{name.replace('_', ' ')}" + (f"@{res.metrics['k']}" if name in K_METRICS else "")
                 + f" {value:.4f}" for name, value in res.metrics.items() if name in METRIC_NAMES]
        if "rank_subsample" in res.metrics:
            shown.append(f"(rank metrics on {res.metrics['rank_subsample']} random points)")
        if shown:
            print("metrics: " + ", ".join(shown))
    where = []
    if args.plot is not None:
        where.append(f"plot {args.plot}")
    if out is not None:
        where.append(f"coordinates {out} (+ {sidecar.name})")
    if getattr(args, "plot_costs", None) is not None:
        where.append(f"cost curve {args.plot_costs}")
    if getattr(args, "animate", None) is not None:
        where.append(f"animation {args.animate}")
    if not where:
        print("nothing saved: add --plot FILE.png to see the embedding, --out FILE.csv to keep it")
    n, k = res.Y.shape
    sgd = res.opt.get("name") == "sgd"
    steps = f"{res.iter} epochs (sgd)" if sgd else f"{res.iter} iterations"
    saved = f"; {', '.join(where)}" if where else ""
    print(f"{method_name(res.method)}: {n} points -> {k}-D, {steps}, final cost "
          f"{'~' if sgd else ''}{res.cost:.4g}, {res.time_secs:.2f} s, seed {seed}{saved}")
