"""``smallvis methods [NAME]`` and ``smallvis datasets``: the registered methods and the built-in
datasets, listed or described."""

from __future__ import annotations

import argparse
import textwrap


def add_listing_parsers(sub) -> None:
    """The ``methods`` and ``datasets`` subcommands (``sub`` is the main parser's subparsers)."""
    m = sub.add_parser("methods", help="list the embedding methods",
                       description="List the registered methods, or describe one.")
    m.add_argument("name", nargs="?", metavar="NAME")
    m.set_defaults(run=_cmd_methods)
    d = sub.add_parser("datasets", help="list the built-in datasets",
                       description="List the built-in datasets usable as INPUT of 'smallvis embed'.")
    d.set_defaults(run=_cmd_datasets)


def _cmd_methods(args) -> int:
    from .._util.names import match_name
    from ..engines.catalog import list_methods

    infos = list_methods()
    if args.name:
        chosen = match_name(args.name, [i.name for i in infos], "method")
        info = next(i for i in infos if i.name == chosen)
        print(f"{info.name}  (family: {info.family}; engines: {', '.join(info.engines) or '-'})")
        print(textwrap.fill(info.description, 96, initial_indent="  ", subsequent_indent="  "))
        print("parameters (set with --param KEY=VALUE):")
        width = max((len(p) for p in info.params), default=0)
        for name, default in info.params.items():
            print(f"  {name:<{width}}  {default!r}")
        print(f"example: smallvis embed iris --method {info.name}")
        return 0
    width = max(len(i.name) for i in infos + [argparse.Namespace(name="NAME")])
    fam = max(len(i.family) for i in infos + [argparse.Namespace(family="FAMILY")])
    print(f"{'NAME':<{width}}  {'FAMILY':<{fam}}  DESCRIPTION")
    for info in infos:
        print(f"{info.name:<{width}}  {info.family:<{fam}}  {info.description}")
        params = ", ".join(f"{k}={v!r}" for k, v in info.params.items())
        indent = " " * (width + 2)
        print(f"{indent}engines: {', '.join(info.engines)}")
        print(textwrap.fill(f"params: {params}", 100, initial_indent=indent, subsequent_indent=indent + "  "))
    print(f"\n{len(infos)} methods; 'smallvis methods NAME' for details")
    print("engines: those that run the method natively ('exact' runs the others through the "
          "dense evaluation)")
    return 0


def _cmd_datasets(args) -> int:
    from ..datasets import list_datasets

    specs = list_datasets()
    rows = [(s.name, f"{s.n} x {s.dims}", s.label_kind, s.description) for s in specs]
    widths = [max(len(r[i]) for r in rows + [("NAME", "SIZE", "LABELS", "")]) for i in range(3)]
    print(f"{'NAME':<{widths[0]}}  {'SIZE':<{widths[1]}}  {'LABELS':<{widths[2]}}  DESCRIPTION")
    for r in rows:
        print(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}")
    return 0

