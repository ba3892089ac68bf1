"""The program name, argument types and option groups that the subcommands share (``smallvis embed``,
``compare``, ``sweep``, ``idp``, ``report``): the subcommand modules import them from here, and
:mod:`smallvis.cli.main` imports the subcommands, so that none imports it back."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence

PROG = "smallvis"

__all__ = ["PROG", "add_data_dir_option", "add_talk_options", "number_or_name", "parse_params",
           "parse_value", "positive_number", "whole_number"]


def parse_value(text: str):
    """A KEY=VALUE value: int, float, true/false, none/null, a JSON list, else the string itself."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for convert in (int, float):
        try:
            return convert(t)
        except ValueError:
            pass
    if t.startswith("["):
        try:
            return json.loads(t)
        except json.JSONDecodeError:
            raise ValueError(f"cannot read {t!r} as a list; write e.g. [5, 30, 50]") from None
    return t


def parse_params(items: Sequence[str] | None, option: str) -> dict:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``; ``ValueError`` naming ``option`` when malformed."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ValueError(f"{option} expects KEY=VALUE (e.g. {option} eps=1e-9); got {item!r}")
        out[key] = parse_value(value)
    return out


def whole_number(text: str) -> int:
    """argparse type of --seed and --max-iter: an int >= 0 (a seed of -1 or -1 iterations would
    otherwise reach numpy's message, or run and return the initial coordinates)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def positive_number(text: str) -> float:
    """argparse type of the exaggeration factors and --init-sdev: finite and > 0 (``nan``, ``inf``
    and ``0`` parse as floats but mean nothing here)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def number_or_name(text: str):
    value = parse_value(text)
    if isinstance(value, bool) or value is None or isinstance(value, list):
        raise argparse.ArgumentTypeError(f"expected a number or a name, got {text!r}")
    return value


def add_talk_options(group, *, verbose: str, quiet: str = "print only errors") -> None:
    """The mutually exclusive ``--verbose/-v`` and ``--quiet/-q`` of every subcommand."""
    talk = group.add_mutually_exclusive_group()
    talk.add_argument("--verbose", "-v", action="store_true", help=verbose)
    talk.add_argument("--quiet", "-q", action="store_true", help=quiet)


def add_data_dir_option(group) -> None:
    """``--data-dir``: where a downloaded dataset's files are (each subcommand that reads INPUT)."""
    group.add_argument("--data-dir", metavar="DIR",
                       help="folder holding a downloaded dataset's files as distributed (e.g. the "
                       "four MNIST idx files, olivettifaces.mat); missing ones are downloaded into "
                       "it. Default: $SMALLVIS_DATA/<dataset> or ~/.cache/smallvis/<dataset>")
