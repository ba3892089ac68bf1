"""Reading a user's data table (CSV / TSV / whitespace text / ``.npy``) into a float64 matrix.

Rules, chosen to match what an R user of smallvis gets from ``read.csv`` + ``smallvis(df)``:

- File type by extension: ``.csv``, ``.tsv``, ``.txt``, ``.dat`` (delimiter sniffed: comma, tab,
  semicolon, bar, else whitespace), optionally compressed (``.gz``, ``.bz2``, ``.xz``), and ``.npy``.
- Header: the first row is a header when, in a column that is numeric below it, it holds text. Without
  a header the columns are named ``V1..Vp`` as in R. A header whose first name is empty (R's
  ``write.csv`` row names), or one name shorter than the rows (``write.table``), marks a row-names
  column, which is dropped.
- Text columns are dropped from the features and logged. They are never used as labels unless asked:
  ``labels`` is a column name or a 0-based column index (an int or a string of digits). The label
  column is removed from the features even when it is numeric.
- Errors are ``ValueError`` (``FileNotFoundError`` for a missing file) with a one-line message naming
  the file and the problem: unsupported type, unreadable or empty file, ragged rows, no numeric
  column, unknown label column (the message lists the columns), missing or infinite values (the
  message names the row, the line and the column).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._logging import logger

TEXT_EXTENSIONS = (".csv", ".tsv", ".txt", ".dat")
COMPRESSIONS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
SUPPORTED = ", ".join(TEXT_EXTENSIONS + (".npy",))
_DELIMITERS = (",", "\t", ";", "|")


@dataclass
class Table:
    """A table read from a file.

    Attributes
    ----------
    X : ndarray (n, p) float64
        The numeric feature columns.
    labels : ndarray (n,) or None
        The label column (numbers, or strings as an object array) when one was asked for.
    columns : list of str
        Names of the columns of ``X``.
    label_name : str or None
    dropped : list of str
        Text columns that were not used.
    path : str
    """

    X: np.ndarray
    labels: np.ndarray | None
    columns: list
    label_name: str | None = None
    dropped: list = field(default_factory=list)
    path: str = ""


def file_kind(path) -> str:
    """``"npy"`` or ``"text"`` from the file name; ``ValueError`` for anything else."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes = suffixes[:-1]
    ext = suffixes[-1] if suffixes else ""
    if ext == ".npy" and not Path(path).suffix.lower() in COMPRESSIONS:
        return "npy"
    if ext in TEXT_EXTENSIONS:
        return "text"
    raise ValueError(f"unsupported file type {ext or '(no extension)'!r} for {path}: use one of {SUPPORTED}")


def read_table(path, labels=None) -> Table:
    """Read ``path`` into a :class:`Table` (see the module docstring for the rules).

    Parameters
    ----------
    path : str or Path
    labels : str or int, optional
        Label column: a column name (exact, else case-insensitive) or a 0-based index.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a data file")
    if file_kind(path) == "npy":
        frame, lines = _read_npy(path), None
    else:
        frame, lines = _read_text(path)
    names = list(frame.columns)
    label_col = None if labels is None else _find_column(labels, names, path)
    numeric, text = [], []
    for name in names:
        if name != label_col:
            (numeric if frame[name].dtype.kind in "fiub" else text).append(name)
    if text:
        logger.info("%s: dropped non-numeric column(s) %s", path.name, ", ".join(map(repr, text)))
    if not numeric:
        raise ValueError(f"{path}: no numeric columns found (columns: {', '.join(names)})")
    X = frame[numeric].to_numpy(dtype=np.float64)
    _check_finite(X, numeric, lines, path)
    y = None if label_col is None else _label_values(frame[label_col])
    return Table(X=X, labels=y, columns=numeric, label_name=label_col, dropped=text, path=str(path))


def _read_npy(path: Path):
    import pandas as pd

    try:
        M = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        raise ValueError(f"cannot read {path} as a NumPy .npy file: {err}") from None
    if M.dtype.kind not in "fiub":
        raise ValueError(f"{path}: expected a numeric array; got dtype {M.dtype}")
    if M.ndim != 2 or M.size == 0:
        raise ValueError(f"{path}: expected a non-empty 2-D array (points in rows); got shape {M.shape}")
    return pd.DataFrame(M, columns=[f"V{j + 1}" for j in range(M.shape[1])])


def _open_text(path: Path):
    opener = COMPRESSIONS.get(path.suffix.lower(), open)
    return opener(path, "rb")


def _decode(data: bytes, path: Path) -> str:
    if b"\x00" in data:
        raise ValueError(f"cannot read {path}: it looks like a binary file, not delimited text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _sniff(lines: list[str]) -> tuple[str, int, int]:
    """(delimiter, fields in the first line, fields in the other lines) from the first non-blank lines.

    A delimiter qualifies when every line after the first splits into the same number (> 1) of fields
    and the first line into that many or one fewer; the one giving the most fields wins (ties: comma,
    tab, semicolon, bar). Otherwise the delimiter splitting the first line most is used (the parser then
    reports the ragged line), or whitespace when the first line holds none of them.
    """
    first, rest = lines[0], lines[1:] or lines[:1]
    best = None
    for delim in _DELIMITERS:
        n_first = len(next(csv.reader([first], delimiter=delim)))
        counts = {len(row) for row in csv.reader(rest, delimiter=delim)}
        if len(counts) == 1 and (n := counts.pop()) > 1 and n_first in (n, n - 1):
            if best is None or n > best[2]:
                best = (delim, n_first, n)
    if best is not None:
        return best
    widest = max(_DELIMITERS, key=lambda d: len(next(csv.reader([first], delimiter=d))))
    if widest in first:  # ragged rows: let the parser report the offending line
        n_first = len(next(csv.reader([first], delimiter=widest)))
        return widest, n_first, n_first
    counts = {len(line.split()) for line in rest}
    n = counts.pop() if len(counts) == 1 else len(rest[0].split())
    return r"\s+", len(first.split()), n


def _read_text(path: Path):
    """DataFrame of float columns (numeric) and object columns (text), and the file line numbers."""
    import pandas as pd

    try:
        with _open_text(path) as fh:
            text = _decode(fh.read(), path)
    except (OSError, EOFError, lzma.LZMAError) as err:
        raise ValueError(f"cannot read {path}: {err}") from None
    all_lines = text.splitlines()
    nonblank = [line for line in all_lines if line.strip()]
    if not nonblank:
        raise ValueError(f"{path} is empty")
    sep, n_first, n_rest = _sniff(nonblank[:50])
    short_header = n_first == n_rest - 1  # write.table: the header has no name for the row names
    lines = [i + 1 for i, line in enumerate(all_lines) if line.strip()]
    body = "\n".join(nonblank[1:] if short_header else nonblank)
    try:
        raw = pd.read_csv(io.StringIO(body), sep=sep, header=None, dtype=str,
                          skipinitialspace=True, engine="python" if sep == "|" else "c")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as err:
        msg = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
        raise ValueError(f"cannot parse {path} as a table (delimiter {sep!r}): {msg}") from None
    raw = raw.apply(lambda col: col.str.strip())
    if short_header:
        head, has_header, lines = ["", *_split(nonblank[0], sep)], True, lines[1:]
    else:
        has_header = _has_header(raw)
        head = [("" if pd.isna(v) else str(v)) for v in raw.iloc[0]] if has_header else None
        if has_header:
            raw, lines = raw.iloc[1:], lines[1:]
    if raw.shape[0] == 0:
        raise ValueError(f"{path} has a header but no data rows")
    names = _column_names(head, raw.shape[1])
    raw.columns = names
    if has_header and head[0] == "" and raw.shape[1] > 1:
        logger.info("%s: first column has no name: treated as row names and dropped", path.name)
        raw = raw.drop(columns=names[0])
    frame = pd.DataFrame(index=raw.index)
    for name in raw.columns:
        col = raw[name]
        if col.isna().all():
            logger.info("%s: column %r is empty: dropped", path.name, name)
            continue
        values = pd.to_numeric(col, errors="coerce")
        bad = values.isna() & col.notna()
        if bad.any() and not bad.all():
            first = bad.to_numpy().nonzero()[0][0]
            logger.warning("%s: column %r is not numeric (%r at line %d): not used as a feature",
                           path.name, name, col.iloc[first], lines[first])
        frame[name] = col if bad.any() else values.astype(np.float64)
    return frame, lines


def _split(line: str, sep: str) -> list[str]:
    if sep == r"\s+":
        return next(csv.reader([line.strip()], delimiter=" ", skipinitialspace=True))
    return [f.strip() for f in next(csv.reader([line], delimiter=sep))]


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _has_header(raw) -> bool:
    first, body = raw.iloc[0], raw.iloc[1:]
    numeric_below = [c for c in raw.columns
                     if body[c].notna().any() and body[c].dropna().map(_is_number).all()]
    if numeric_below:
        return any(isinstance(first[c], str) and not _is_number(first[c]) for c in numeric_below)
    return all(isinstance(v, str) and not _is_number(v) for v in first)


def _column_names(head, p: int) -> list[str]:
    if head is None:
        return [f"V{j + 1}" for j in range(p)]
    names, seen = [], set()
    for j, name in enumerate(list(head) + [""] * (p - len(head))):
        name = name or f"V{j + 1}"
        base, i = name, 1
        while name in seen:
            name, i = f"{base}.{i}", i + 1
        seen.add(name)
        names.append(name)
    return names


def _find_column(spec, names: list[str], path: Path) -> str:
    key = str(spec).strip()
    if key in names:
        return key
    folded = [n for n in names if n.lower() == key.lower()]
    if len(folded) == 1:
        return folded[0]
    if key.isdigit() and int(key) < len(names):
        return names[int(key)]
    raise ValueError(
        f"label column {spec!r} not found in {path}; available columns: {', '.join(names)} "
        f"(or a 0-based index 0-{len(names) - 1})"
    )


def _label_values(col) -> np.ndarray:
    if col.dtype.kind in "fiub":
        values = col.to_numpy(dtype=np.float64)
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
            return values.astype(np.int64)
        return values
    return col.fillna("NA").to_numpy(dtype=object)


def _check_finite(X: np.ndarray, columns: list[str], lines, path: Path) -> None:
    bad = ~np.isfinite(X)
    if not bad.any():
        return
    row, col = np.argwhere(bad)[0]
    what = "missing value" if np.isnan(X[row, col]) else "infinite value"
    where = f"data row {row + 1}" + (f" (line {lines[row]})" if lines is not None else "")
    raise ValueError(
        f"{path}: {what} at {where}, column {columns[col]!r} ({int(bad.sum())} missing or "
        f"infinite value(s) in all): remove or impute them, missing data is not allowed"
    )
