"""Write README.md's method x engine table from the catalog (``smallvis.engines.catalog``).

The table sits between the marker comments ``<!-- method-table:start -->`` and
``<!-- method-table:end -->``; everything between them is replaced. One row per family and set of
engines (methods in registry order), a tick where the engine runs the method natively.

    python scripts/method_table.py          # rewrite the table in README.md
    python scripts/method_table.py --check  # exit 1 if README.md's table is out of date

``tests/test_catalog.py`` fails when the README's table is not what this script writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
START = "<!-- method-table:start -->"
END = "<!-- method-table:end -->"
COMMAND = "python scripts/method_table.py"
TICK = "✓"


def render() -> str:
    """The table (markdown, without the markers), from the catalog."""
    from smallvis.engines.catalog import engine_names, list_methods

    engines = engine_names()
    rows: dict[tuple, list[str]] = {}  # (family, engines) -> names, in registry order
    for info in list_methods():
        rows.setdefault((info.family, info.engines), []).append(info.name)
    # rows of a family together, in the order the families first appear
    families = list(dict.fromkeys(family for family, _ in rows))
    lines = [f"| family | methods | {' | '.join(engines)} |",
             f"|---|---|{'|'.join(':-:' for _ in engines)}|"]
    for family in families:
        for (fam, served), names in rows.items():
            if fam != family:
                continue
            ticks = " | ".join(TICK if e in served else "" for e in engines)
            lines.append(f"| {family} | {', '.join(names)} | {ticks} |")
    return "\n".join(lines)


def replace_table(text: str, table: str) -> str:
    """``text`` with the block between the markers replaced by ``table``."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"README.md must hold one {START} ... {END} block")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{table}\n{END}{tail}"


def current_table(text: str) -> str:
    """The table README.md holds now (between the markers)."""
    return text.split(START)[1].split(END)[0].strip("\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that README.md's table is up to date")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    new = replace_table(text, render())
    if args.check:
        if new != text:
            print(f"README.md's method table is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        README.write_text(new, encoding="utf-8")
        print("README.md: method table rewritten")
    else:
        print("README.md: method table up to date")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))  # this checkout's smallvis
    sys.exit(main())
