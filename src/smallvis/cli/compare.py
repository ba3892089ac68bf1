"""``smallvis compare``: several methods on the same input, side by side.

::

    smallvis compare iris --methods tsne,umap,largevis,mmds
    smallvis compare data.csv --labels species --methods tsne,umap --param umap.spread=2 --out cmp

Writes OUT/grid.png (one panel per method), OUT/metrics.csv and OUT/compare.json, and prints the
table. Exit status: 0 when every method ran, 1 when some failed (recorded with their message), 2 for
bad input (methods, parameters, input, output folder), 130 when interrupted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .options import (add_data_dir_option, add_talk_options, number_or_name, parse_value,
                      whole_number)
from ..metrics import METRIC_K
from ..io.source import load_source


def add_compare_parser(sub) -> None:
    """The ``compare`` subcommand's arguments (``sub`` is the main parser's subparsers)."""
    from ..experiments.compare import DEFAULT_METHODS

    c = sub.add_parser(
        "compare", help="run several methods on one input, side by side",
        description="Run each method on INPUT (a built-in dataset or a .csv/.tsv/.txt/.npy file) "
                    "from the same scaled-PCA start and seed, each with a step size that suits it; "
                    "write OUT/grid.png (one panel per method), OUT/metrics.csv (final cost, "
                    f"iterations, seconds, kNN preservation and other metrics at k = {METRIC_K}) "
                    "and OUT/compare.json (every run's parameters, the input's fingerprint, the "
                    "metrics), and print the table.")
    c.add_argument("input", metavar="INPUT")
    c.add_argument("--methods", default=",".join(DEFAULT_METHODS), metavar="A,B,...",
                   help="comma-separated method names, or 'all' (default "
                        f"{','.join(DEFAULT_METHODS)})")
    c.add_argument("--param", action="append", metavar="METHOD.KEY=VALUE",
                   help="a method's parameter, e.g. umap.spread=2 (repeatable)")
    c.add_argument("--perplexity", type=number_or_name, metavar="P",
                   help="perplexity (neighbour count for kNN methods) of every method; default: "
                        "each method's")
    c.add_argument("--max-iter", type=whole_number, metavar="N", help="iterations of every method; default "
                   "each method's (1000; epochs on the sgd engine)")
    c.add_argument("--engine", metavar="NAME", help="engine of every method (default auto)")
    c.add_argument("--defaults", choices=("auto", "smallvis"), default="auto",
                   help="auto (default): each method with the modern defaults, as 'smallvis embed "
                        "--method'; smallvis: the original's defaults with a step size per method "
                        "and one spca start")
    c.add_argument("--seed", type=whole_number, metavar="S",
                   help="random seed of every run (default: a fresh one, printed and recorded)")
    c.add_argument("--labels", metavar="COLUMN",
                   help="label column of a file (name or 0-based index): colours the plot")
    add_data_dir_option(c)
    c.add_argument("--out", metavar="DIR", help="output folder (default compare-<input name>); "
                   "an existing one is refused unless --force")
    c.add_argument("--force", action="store_true",
                   help="write into an existing output folder (replacing its grid.png, metrics.csv, "
                        "compare.json and report.html)")
    add_talk_options(c, verbose="log progress details")
    c.set_defaults(run=run_compare)


def parse_method_params(items) -> dict:
    """``["umap.spread=2", "tsne.eps=1e-9"]`` -> ``{"umap": {"spread": 2}, "tsne": {"eps": 1e-9}}``."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        method, dot, name = key.strip().partition(".")
        if not sep or not dot or not method or not name.isidentifier():
            raise ValueError(f"--param expects METHOD.KEY=VALUE (e.g. --param umap.spread=2); "
                             f"got {item!r}")
        out.setdefault(method, {})[name] = parse_value(value)
    return out


def run_compare(args) -> int:
    """Run ``smallvis compare`` with parsed ``args``; returns the exit status."""
    from ..experiments.compare import OUTPUTS, check_methods, check_out_dir, check_params, compare

    methods = check_methods(args.methods)  # bad names and parameters fail before anything runs
    params = check_params(parse_method_params(args.param), methods)
    kwargs = {name: value for name, value in (("perplexity", args.perplexity),
                                               ("max_iter", args.max_iter),
                                               ("engine", args.engine)) if value is not None}
    data = load_source(args.input, args.labels, args.data_dir)
    name = data.info.get("name") or Path(args.input).stem
    out = check_out_dir(args.out if args.out is not None else f"compare-{name}", args.force)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little") >> 1
    progress = not (args.quiet or args.verbose) and sys.stderr.isatty()
    info = {**data.info, "command": ["smallvis", *args.argv]}
    cmp = compare(data.X, methods, params=params, out_dir=out, force=args.force,
                  labels=data.labels, label_kind=data.label_kind, input_info=info,
                  random_state=seed, progress=progress, verbose=args.verbose,
                  defaults=args.defaults, **kwargs)
    table = cmp.table
    failed = table[table["status"] == "error"]
    if not args.quiet:
        from .sweep import print_table

        print_table(table)
        print(f"{len(table)} methods on {name} ({data.X.shape[0]} x {data.X.shape[1]}), seed "
              f"{seed}; saved {', '.join(str(out / name) for name in OUTPUTS if (out / name).exists())}")
    for row in failed.itertuples():
        print(f"smallvis: {row.method} failed: {row.error}", file=sys.stderr)
    return 1 if len(failed) else 0
