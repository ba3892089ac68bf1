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

from .._util.log import logger

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


HEAD_LINES = 50  # lines the delimiter and the header are decided from (checked on all rows after)
_HEAD_CHUNK = 1 << 16
_HEAD_LIMIT = 1 << 24


def _read_head(path: Path) -> tuple[list[str], int, str]:
    """The first ``HEAD_LINES + 1`` non-blank lines (decoded), how many file lines precede the first
    of them, and the encoding that decodes them. Only the start of the file is read: the full read
    is pandas' (its C parser reads a file far faster, and in far less memory, than Python)."""
    data = b""
    try:
        with _open_text(path) as fh:
            while len(data) < _HEAD_LIMIT:
                chunk = fh.read(_HEAD_CHUNK)
                data += chunk
                if not chunk or sum(1 for x in data.splitlines() if x.strip()) > HEAD_LINES + 1:
                    break
    except (OSError, EOFError, lzma.LZMAError) as err:
        raise ValueError(f"cannot read {path}: {err}") from None
    if b"\x00" in data:
        raise ValueError(f"cannot read {path}: it looks like a binary file, not delimited text")
    try:
        text, encoding = data.decode("utf-8-sig"), "utf-8-sig"
    except UnicodeDecodeError as err:
        # a multi-byte character cut at the end of the chunk is fine; anything else is not UTF-8
        if err.start >= len(data) - 4 and err.reason == "unexpected end of data":
            text, encoding = data[:err.start].decode("utf-8-sig"), "utf-8-sig"
        else:
            text, encoding = data.decode("latin-1"), "latin-1"
    lines = text.splitlines()
    if len(data) >= _HEAD_CHUNK and lines and not data.endswith((b"\n", b"\r")):
        lines = lines[:-1]  # the last line may be cut
    skipped = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return [line for line in lines if line.strip()][:HEAD_LINES + 1], skipped, encoding


def _read_text(path: Path):
    """DataFrame of float columns (numeric) and text columns, and the file line numbers of its rows
    (a lazy :class:`_LineNumbers`, computed only for an error message)."""
    head, skipped, encoding = _read_head(path)
    if not head:
        raise ValueError(f"{path} is empty")
    sep, n_first, n_rest = _sniff(head[:HEAD_LINES])
    first = _split(head[0], sep)
    lines = _LineNumbers(path, encoding)
    if n_first == n_rest - 1:  # write.table: the header has no name for the row names
        frame = _read_body(path, sep, encoding, skip=skipped + 1)
        head_names, offset = ["", *first], 1
    else:
        try:
            sample = _read_body(io.StringIO("\n".join(head[1:])), sep, None, skip=0) \
                if len(head) > 1 else None
        except ValueError:  # ragged rows: the full read below names the file's line
            sample = None
        has_header = _has_header(first, sample, whole=False)
        frame = _read_body(path, sep, encoding, skip=skipped + 1 if has_header else skipped)
        if _has_header(first, frame, whole=not has_header) != has_header:  # rows beyond the head
            has_header = not has_header
            frame = _read_body(path, sep, encoding, skip=skipped + 1 if has_header else skipped)
        head_names, offset = (first, 1) if has_header else (None, 0)
    lines.offset = offset
    if frame.shape[0] == 0:
        raise ValueError(f"{path} has a header but no data rows")
    names = _column_names(head_names, frame.shape[1])
    frame.columns = names
    if head_names is not None and head_names[0] == "" and frame.shape[1] > 1:
        logger.info("%s: first column has no name: treated as row names and dropped", path.name)
        frame = frame.drop(columns=names[0])
    return _typed_columns(frame, path, lines), lines


def _read_body(source, sep: str, encoding, skip: int):
    """The rows as pandas' C parser types them (numbers, or text), after ``skip`` file lines."""
    import pandas as pd

    kwargs = dict(sep=sep, header=None, skiprows=skip, skipinitialspace=True, engine="c",
                  compression="infer" if isinstance(source, Path) else None)
    try:
        try:
            return pd.read_csv(source, encoding=encoding, **kwargs)
        except UnicodeDecodeError:  # not UTF-8 after the head
            return pd.read_csv(source, encoding="latin-1", **kwargs)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, ValueError, OSError, EOFError, lzma.LZMAError) as err:
        msg = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
        raise ValueError(f"cannot parse {getattr(source, 'name', source)} as a table (delimiter "
                         f"{sep!r}): {msg}") from None


def _is_text(col) -> bool:
    """A column pandas did not read as numbers (booleans count as text, as ``float()`` sees them)."""
    return col.dtype.kind not in "fiu"


def _numeric_below(frame, whole: bool) -> list:
    """Columns that are numeric below the first line (``whole``: ``frame`` still holds it)."""
    import pandas as pd

    body = frame.iloc[1:] if whole else frame
    out = []
    for name in body.columns:
        col = body[name]
        if not _is_text(col):
            if not np.isnan(col.to_numpy(dtype=np.float64)).all():
                out.append(name)
            continue
        present = col.dropna()
        if col.dtype.kind == "b" or present.empty or not _is_number(present.iloc[0]):
            continue  # text at once: no need to convert the whole column
        values = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
        if values.notna().all():
            out.append(name)
    return out


def _has_header(first: list[str], body, whole: bool) -> bool:
    """The first line is a header when, in a column numeric below it, it holds text; with no such
    column, when it holds text throughout."""
    if body is None:
        return all(_is_word(v) for v in first)
    below = _numeric_below(body, whole)
    if below:
        return any(_is_word(first[j]) for j in below if j < len(first))
    return all(_is_word(v) for v in first)


def _is_word(value: str) -> bool:
    """Text that is neither a number nor a missing-value marker."""
    value = value.strip()
    return value not in _na_strings() and not _is_number(value)


def _na_strings() -> frozenset:
    try:
        from pandas._libs.parsers import STR_NA_VALUES
    except ImportError:  # pragma: no cover - pandas moved it
        STR_NA_VALUES = {"", "NA", "N/A", "NaN", "nan", "NULL", "null", "None", "<NA>", "#N/A"}
    return frozenset(STR_NA_VALUES)


def _typed_columns(frame, path: Path, lines):
    """Numeric columns as read; text columns kept (stripped), with a warning naming the first
    non-number of a mostly numeric one; empty columns dropped."""
    import pandas as pd

    numeric = [name for name in frame.columns if not _is_text(frame[name])]
    empty = set()
    if numeric:  # one NumPy pass over the numeric block, not one pandas call per column
        block = frame[numeric].to_numpy(dtype=np.float64)
        empty = {name for name, e in zip(numeric, np.isnan(block).all(axis=0)) if e}
        del block
    out = {}
    for name in frame.columns:
        col = frame[name]
        if name in empty or (name not in numeric and col.isna().all()):
            logger.info("%s: column %r is empty: dropped", path.name, name)
            continue
        if name in numeric:
            out[name] = col
            continue
        text = col.map({True: "True", False: "False"}) if col.dtype.kind == "b" else \
            col.astype(str).where(col.notna()).str.strip()
        values = pd.to_numeric(text, errors="coerce")
        bad = values.isna() & text.notna()
        if not bad.any():
            out[name] = values.astype(np.float64)
            continue
        if not bad.all():
            first = int(bad.to_numpy().nonzero()[0][0])
            logger.warning("%s: column %r is not numeric (%r at line %d): not used as a feature",
                           path.name, name, text.iloc[first], lines[first])
        out[name] = text
    return pd.DataFrame(out, index=frame.index, copy=False)


class _LineNumbers:
    """File line number of each data row, counted (skipping blank lines) only when an error
    message asks for one: a table of 20,000 rows needs none of them when all is well."""

    def __init__(self, path: Path, encoding: str):
        self.path, self.encoding, self.offset, self._lines = path, encoding, 0, None

    def __getitem__(self, row: int) -> int:
        if self._lines is None:
            with _open_text(self.path) as fh:
                self._lines = [i + 1 for i, line in enumerate(fh) if line.strip()]
        return self._lines[row + self.offset]


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
