"""``smallvis sweep``: every run of a grid (methods x parameters x seeds) on one input, resumable,
locally in processes or on a Dask cluster; a CSV table, every embedding and small multiples.

::

    smallvis sweep iris --grid grid.yaml --out sweep-iris --jobs 4
    smallvis sweep data.csv --labels species --grid grid.json --scheduler tcp://host:8786

Exit status: 0 when every run succeeded, 1 when some failed (recorded with their message), 2 for bad
input (grid, input, output folder, scheduler), 130 when interrupted (finished runs are kept).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path

from .options import add_data_dir_option, add_talk_options
from ..metrics import METRIC_K
from ..io.source import load_source


EXAMPLE = """\
grid file (YAML or JSON; README section Sweeps):
  method: [tsne, umap]       # one name or a list; default tsne
  params:                    # smallvis() arguments: a list is swept, a value fixed
    perplexity: [5, 30]
    max_iter: 500
  method_params:             # optional, per method; lists swept
    umap: {spread: [1, 2]}
  seeds: 2                   # seeds 0, 1; or a list [1, 7]; default [0]
"""


def add_sweep_parser(sub) -> None:
    """The ``sweep`` subcommand's arguments (``sub`` is the main parser's subparsers)."""
    s = sub.add_parser(
        "sweep", help="run a grid of methods, parameters and seeds",
        description="Run every combination of a grid file's methods, parameters and seeds on INPUT "
                    "(a built-in dataset or a .csv/.tsv/.txt/.npy file), recording final cost, time, "
                    f"kNN preservation and trustworthiness at {METRIC_K} in OUT/results.csv, each "
                    "embedding in OUT/runs/, and small multiples in OUT/grid.png. A rerun skips the "
                    "runs already finished in OUT.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("input", metavar="INPUT")
    s.add_argument("--grid", required=True, metavar="FILE",
                   help="the grid: a .yaml/.yml or .json file")
    s.add_argument("--out", metavar="DIR", help="output folder (default sweep-<input name>)")
    s.add_argument("--labels", metavar="COLUMN",
                   help="label column of a file (name or 0-based index): colours the plot")
    add_data_dir_option(s)
    g = s.add_argument_group("where runs execute")
    g.add_argument("--jobs", "-j", type=_jobs, default=1, metavar="N",
                   help="runs at once in local processes (default 1: in this process; -1: one per CPU)")
    g.add_argument("--scheduler", metavar="ADDR",
                   help="run on a Dask cluster, e.g. tcp://host:8786 (needs smallvis[dask])")
    g.add_argument("--connect-timeout", type=_seconds, default=10.0, metavar="S",
                   help="seconds to wait for the scheduler (and a worker) before giving up; default 10")
    g = s.add_argument_group("output")
    g.add_argument("--no-plot", action="store_true", help="do not draw OUT/grid.png")
    g.add_argument("--no-resume", action="store_true",
                   help="run every run again, even those finished in OUT")
    g.add_argument("--force", action="store_true",
                   help="use OUT even if it holds another input's sweep (its runs are then "
                        "recomputed, never mixed) or other files; nothing is deleted")
    add_talk_options(g, verbose="log each run's details")
    s.set_defaults(run=run_sweep)


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number or -1 (one per CPU); "
                                         f"got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds; got {text!r}")
    return value


def run_sweep(args) -> int:
    """Run ``smallvis sweep`` with parsed ``args``; returns the exit status."""
    from ..experiments.sweep import sweep
    from ..experiments.sweep_grid import load_grid

    grid = load_grid(args.grid)  # a bad grid fails before the input is read
    if args.jobs != 1 and args.scheduler is not None:
        raise ValueError("give either --jobs or --scheduler, not both")
    data = load_source(args.input, args.labels, args.data_dir)
    name = data.info.get("name") or Path(args.input).stem
    out = Path(args.out) if args.out is not None else Path(f"sweep-{name}")
    quiet = args.quiet

    def report(line: str) -> None:
        if not quiet:
            print(line, flush=True)

    try:
        with _terminate_on_sigterm(out):
            table = sweep(data.X, grid, out, labels=data.labels, n_jobs=args.jobs,
                          scheduler=args.scheduler, connect_timeout=args.connect_timeout,
                          resume=not args.no_resume, force=args.force, plot=not args.no_plot,
                          verbose=args.verbose, report=report, label_name=data.label_name,
                          name=name)
    except ImportError as err:  # dask.distributed missing
        raise ValueError(str(err)) from None
    failed = table[table["status"] == "error"]
    diverged = int((table["status"] == "diverged").sum())
    if not quiet:
        print_table(table)
        attrs = table.attrs
        print(f"done: {int((table['status'] == 'ok').sum())} ok, "
              + (f"{diverged} diverged, " if diverged else "")
              + f"{len(failed)} failed, {attrs['skipped']} skipped (finished earlier), "
              f"{attrs['ran']} run now")
        saved = [f"table {out / 'results.csv'}", f"embeddings {out / 'runs'}"]
        if not args.no_plot:
            saved.append(f"plot {out / 'grid.png'}")
        print("saved: " + ", ".join(saved))
    for row in failed.itertuples():
        print(f"smallvis: run {row.id} failed: {row.error}", file=sys.stderr)
    return 1 if len(failed) else 0


@contextlib.contextmanager
def _terminate_on_sigterm(out: Path):
    """SIGTERM (a time limit, SLURM, ``docker stop``) ends the sweep as Ctrl-C does: the workers
    are killed, the lock released, finished runs kept; exit status 143 (128 + SIGTERM). Python's
    default would end this process alone and leave the workers running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        print(f"smallvis: terminated (SIGTERM): finished runs are kept in {out}", file=sys.stderr,
              flush=True)
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def print_table(table, limit: int = 50) -> None:
    """The results as an aligned table (text left, numbers right), without id, wall time, error."""
    cols = [c for c in table.columns if c not in ("id", "wall_secs", "error")]
    rows = [[_fmt(v) for v in row] for row in table[cols].head(limit).itertuples(index=False)]
    right = [table[c].dtype.kind in "iuf" or str(table[c].dtype) == "Int64" for c in cols]
    widths = [max(len(c), *(len(r[j]) for r in rows)) for j, c in enumerate(cols)]
    for row in [cols] + rows:
        print("  ".join(f"{cell:>{w}}" if r else f"{cell:<{w}}"
                        for cell, w, r in zip(row, widths, right)).rstrip())
    if len(table) > limit:
        print(f"... {len(table) - limit} more rows in results.csv")


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
