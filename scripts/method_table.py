"""Write README.md's method x engine table and docs/coverage.md from the catalog
(``smallvis.engines.catalog``).

The table sits between the marker comments ``<!-- method-table:start -->`` and
``<!-- method-table:end -->``; everything between them is replaced. One row per family and set of
engines (methods in registry order), a tick where the engine runs the method natively.
docs/coverage.md is written whole: every (method, engine) pair, and for each pair not served the
engine's own reason (``catalog.refusal``).

    python scripts/method_table.py          # rewrite the table in README.md and docs/coverage.md
    python scripts/method_table.py --check  # exit 1 if either is out of date

``tests/test_catalog.py`` fails when the README's table or docs/coverage.md is not what this script
writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
COVERAGE = ROOT / "docs" / "coverage.md"
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


def render_coverage() -> str:
    """docs/coverage.md: the method x engine table with every refusal's reason."""
    from smallvis.engines.catalog import engine_names, list_methods, refusal

    engines = engine_names()
    infos = list_methods()
    lines = ["# Which engine runs which method", "",
             f"Generated from the catalog by `{COMMAND}`: do not edit by hand. A tick: the engine "
             "runs the method natively (with its default parameters); otherwise the engine's own "
             "reason, which is also what its refusal says (`SmallVis(method, engine=...)`). A cost "
             "or kernel \"not implemented on these engines\" is work not done yet, not a limit of "
             "the engine; the other reasons are why the engine cannot serve the method. `engine=\"auto\"` picks among the ticks "
             "([engines](engines.md)).", "",
             f"| method | family | {' | '.join(engines)} |",
             f"|---|---|{'|'.join(':-:' for _ in engines)}|"]
    reasons: dict[tuple, list[str]] = {}  # (engines, reason) -> methods
    for info in infos:
        cells = []
        for engine in engines:
            why = refusal(engine, info.name)
            cells.append(TICK if why is None else "·")
            if why is not None:
                reasons.setdefault((engine, why), []).append(info.name)
        lines.append(f"| {info.name} | {info.family} | {' | '.join(cells)} |")
    grouped: dict[tuple, tuple] = {}  # (methods, reason) -> engines
    for (engine, why), names in reasons.items():
        key = (tuple(names), why)
        grouped[key] = grouped.get(key, ()) + (engine,)
    lines += ["", "## Why not", ""]
    for engine in engines:
        rows = [(names, why, served) for (names, why), served in grouped.items()
                if served[0] == engine]
        if not rows:
            continue
        lines += [f"### {', '.join(rows[0][2]) if len({r[2] for r in rows}) == 1 else engine}", ""]
        for names, why, served in rows:
            where = "" if len({r[2] for r in rows}) == 1 else f" ({', '.join(served)})"
            lines.append(f"- **{', '.join(names)}**{where}: {why}.")
        lines.append("")
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
    old_coverage = COVERAGE.read_text(encoding="utf-8") if COVERAGE.exists() else ""
    coverage = render_coverage()
    if args.check:
        stale = [name for name, fresh in (("README.md's method table", new == text),
                                          ("docs/coverage.md", coverage == old_coverage))
                 if not fresh]
        if stale:
            print(f"{' and '.join(stale)} out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    for path, before, after in ((README, text, new), (COVERAGE, old_coverage, coverage)):
        if after != before:
            path.write_text(after, encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: rewritten")
        else:
            print(f"{path.relative_to(ROOT)}: up to date")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))  # this checkout's smallvis
    sys.exit(main())
