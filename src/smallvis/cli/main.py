"""The ``smallvis`` command: embed a dataset or a table, compare methods, run sweeps, estimate the
intrinsic dimensionality, list methods and datasets.

::

    smallvis embed iris --plot iris.png --plot-costs costs.png --animate run.gif
    smallvis embed s1k --plot-point-costs worst.png
    smallvis embed train.csv --save-model m.pkl; smallvis transform new.csv --model m.pkl --plot new.png
    smallvis compare iris --methods tsne,umap,largevis,mmds --out cmp   # + cmp/report.html
    smallvis report cmp                      # rebuild the HTML report of a compare or sweep folder
    smallvis embed data.csv --labels species --method tsne --perplexity 15 --out emb.csv --metrics
    smallvis idp iris --plot dims.png
    smallvis idp data.csv --labels species --perplexities 5,10,20,40 --out dims.csv
    smallvis methods [NAME]
    smallvis datasets

Exit status: 0 on success; 2 for bad input (one line ``smallvis: error: ...`` on stderr, no
traceback; ``--verbose`` adds the traceback); 1 when out of memory; 130 when interrupted.
Library warnings are shown as one line ``smallvis: warning: ...``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

from .._version import __version__
from .options import PROG


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``smallvis: error: <message> (see 'smallvis embed --help')``."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


# ---------------------------------------------------------------------------------------------------
# entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, usage errors
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
    args.argv = argv
    logger, restore = _setup_logging(getattr(args, "verbose", False))
    try:
        with warnings.catch_warnings():  # Python's default filters; only the display changes
            warnings.showwarning = _show_warning
            return args.run(args)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. 'smallvis methods | head': the reader has gone, stop quietly
        try:
            sys.stdout = open(os.devnull, "w")  # no second error when Python flushes stdout at exit
        except OSError:
            pass
        return 0
    except RuntimeError as err:  # DivergenceError: the run failed, no output was written
        if type(err).__name__ != "DivergenceError":
            raise
        print(f"{PROG}: error: {_message(err)}", file=sys.stderr)
        return 1
    except MemoryError as err:  # our guard's message says what to do; a real one gets a hint
        hint = str(err) or "out of memory: try fewer points, --pca N, or another --engine"
        print(f"{PROG}: error: {hint}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, KeyError, OSError) as err:  # FileNotFoundError is an OSError
        if getattr(args, "verbose", False):
            traceback.print_exc()
        print(f"{PROG}: error: {_message(err)}", file=sys.stderr)
        return 2
    finally:
        restore()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Neighbour-embedding visualisation (t-SNE and relatives).")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    from .compare import add_compare_parser
    from .embed import add_embed_parser
    from .transform import add_transform_parser
    from .idp import add_idp_parser
    from .listing import add_listing_parsers
    from .report import add_report_parser
    from .sweep import add_sweep_parser

    add_embed_parser(sub)  # the order of 'smallvis --help'
    add_transform_parser(sub)
    add_idp_parser(sub)
    add_sweep_parser(sub)
    add_compare_parser(sub)
    add_report_parser(sub)
    add_listing_parsers(sub)
    return parser


# ---------------------------------------------------------------------------------------------------
# messages and logging


def _message(err: BaseException) -> str:
    if isinstance(err, KeyError) and err.args:
        text = str(err.args[0])
    elif isinstance(err, OSError) and err.filename and err.strerror:
        text = f"{err.strerror}: {err.filename}"
    else:
        text = str(err) or type(err).__name__
    return " ".join(text.split())


def _write_stderr(text: str) -> None:
    """Print a line on stderr without garbling a progress bar that may be on screen."""
    from tqdm import tqdm

    tqdm.write(text, file=sys.stderr)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    _write_stderr(f"{PROG}: warning: {' '.join(str(message).split())}")


class _BarSafeHandler(logging.Handler):
    def emit(self, record):
        try:
            _write_stderr(self.format(record))
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)


class _CLIFormatter(logging.Formatter):
    def format(self, record):
        if record.levelno >= logging.WARNING:
            return f"{PROG}: {record.levelname.lower()}: {' '.join(record.getMessage().split())}"
        return f"{self.formatTime(record, '%H:%M:%S')} {record.getMessage()}"


def _setup_logging(verbose: bool):
    """Show the library's warnings (and INFO with --verbose) on stderr; return (logger, undo)."""
    logger = logging.getLogger("smallvis")
    handler = _BarSafeHandler()
    handler.setFormatter(_CLIFormatter())
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.WARNING)

    def restore():
        logger.removeHandler(handler)
        logger.setLevel(old_level)

    return logger, restore

