"""``smallvis report``: (re)write the HTML report of a compare or sweep output folder.

::

    smallvis report compare-iris
    smallvis report sweep-iris --force

Writes FOLDER/report.html (self-contained: opens offline) and prints its path. Exit status: 0 when
written, 2 for a folder that holds no compare or sweep output, or a report.html smallvis did not
write (replaced only with --force).
"""

from __future__ import annotations

from .options import add_talk_options


def add_report_parser(sub) -> None:
    """The ``report`` subcommand's arguments (``sub`` is the main parser's subparsers)."""
    r = sub.add_parser(
        "report", help="write the HTML report of a compare or sweep folder",
        description="Write FOLDER/report.html for the output folder of 'smallvis compare' or "
                    "'smallvis sweep': the small multiples, a sortable table of the metrics, every "
                    "run's parameters, the input's fingerprint, the date and the smallvis version, "
                    "in one self-contained page that opens offline. Compare and sweep runs write it "
                    "themselves; this rewrites it, e.g. after a sweep grew.")
    r.add_argument("folder", metavar="FOLDER")
    r.add_argument("--force", action="store_true",
                   help="replace a report.html that smallvis did not write")
    add_talk_options(r, verbose="tracebacks on errors")
    r.set_defaults(run=run_report)


def run_report(args) -> int:
    """Run ``smallvis report`` with parsed ``args``; returns the exit status."""
    from ..experiments.report import write_report

    path = write_report(args.folder, force=args.force)
    if not args.quiet:
        print(f"saved {path}")
    return 0
