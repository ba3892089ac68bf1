"""One input source by name: a data file when one exists at the path, else a built-in dataset.

>>> from smallvis.io.source import load_source
>>> src = load_source("iris")
>>> src.X.shape, src.label_name, src.info["source"]
((150, 4), 'Species', 'dataset')

This sits above :mod:`smallvis.io.tabular` (files) and :mod:`smallvis.datasets` (names) and is what the
command line, :func:`smallvis.sweep` (``X`` given as a name or a path) and
:func:`smallvis.compare` read their input with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# what a name ending so means: a file (a missing one is an error, not a dataset lookup)
DATA_EXTENSIONS = (".csv", ".tsv", ".txt", ".dat", ".npy", ".gz", ".bz2", ".xz", ".h5ad")

__all__ = ["DATA_EXTENSIONS", "Source", "load_source"]


@dataclass
class Source:
    """A loaded input.

    Attributes
    ----------
    X : ndarray (n, p)
    labels : ndarray (n,) or None
    label_name : str or None
    label_kind : {"auto", "class", "continuous", "none"}
        ``"auto"`` for a file (the plot infers it); a dataset's own kind.
    info : dict
        Where the data came from, for records: ``source`` ("file" or "dataset"), the path and
        columns of a file, the name and description of a dataset, the label column.
    dropped : list of str
        A file's non-numeric columns left out of ``X``.
    """

    X: object
    labels: object
    label_name: str | None
    label_kind: str
    info: dict = field(default_factory=dict)
    dropped: list = field(default_factory=list)


def load_source(source: str, labels: str | None = None, data_dir: str | None = None, *,
                layer: str | None = None, obsm: str | None = None) -> Source:
    """A file when one exists at ``source``; else a built-in dataset (its files read from
    ``data_dir`` when given).

    ``labels`` names a file's label column (name or 0-based index); a dataset has its own.
    Errors: ``FileNotFoundError`` for a missing file (a name with a data extension or a path
    separator), ``InvalidNameError`` (a ``ValueError``) for an unknown name, ``ValueError`` for
    ``labels`` with a dataset or ``data_dir`` with a file. ``layer`` and ``obsm`` pick the matrix
    of an AnnData ``.h5ad`` file (:mod:`smallvis.io.h5ad`).
    """
    path = Path(source)
    h5ad = path.suffix.lower() == ".h5ad"
    if (layer is not None or obsm is not None) and not h5ad:
        raise ValueError("--layer and --obsm are for AnnData .h5ad files")
    if path.exists():
        if data_dir is not None:
            raise ValueError(f"--data-dir is for the downloaded datasets; {source} is a file")
        if h5ad:
            from .h5ad import read_h5ad

            t = read_h5ad(path, labels, layer=layer, obsm=obsm)
            info = {"source": "file", "path": str(path.resolve()), "matrix": t.what,
                    "label_column": t.label_name}
            return Source(t.X, t.labels, t.label_name, "auto", info)
        from .tabular import read_table

        t = read_table(path, labels)
        info = {"source": "file", "path": str(path.resolve()), "columns": t.columns,
                "label_column": t.label_name, "dropped_columns": t.dropped}
        return Source(t.X, t.labels, t.label_name, "auto", info, t.dropped)
    if path.suffix.lower() in DATA_EXTENSIONS or os.sep in source or "/" in source:
        raise FileNotFoundError(f"input file not found: {source}")
    from .._util.names import InvalidNameError
    from ..datasets import load_dataset

    try:
        ds = load_dataset(source, path=data_dir)
    except InvalidNameError as err:
        raise InvalidNameError(f"no file named {source!r}, and {err}") from None
    if labels is not None:
        raise ValueError(f"--labels is for files; dataset {ds.name!r} has its own labels "
                         f"({ds.label_name})")
    info = {"source": "dataset", "name": ds.name, "description": ds.description,
            "label_column": ds.label_name}
    return Source(ds.X, ds.labels, ds.label_name, ds.label_kind, info)
