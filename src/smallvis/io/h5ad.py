"""Reading an AnnData ``.h5ad`` file (single-cell data) for the command line.

The matrix embedded is ``X``, a layer (``layer``) or an ``obsm`` entry (``obsm``, e.g. ``"X_pca"``);
a label column comes from ``obs``. With ``anndata`` installed it reads the file; otherwise the file
is read with ``h5py`` alone (the ``smallvis[anndata]`` extra), which understands the on-disk layout
anndata writes: dense arrays, CSR/CSC groups, and categorical or plain ``obs`` columns. A sparse
matrix stays sparse (CSR): the neighbour search and the sparse metrics read it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["H5adTable", "read_h5ad"]


@dataclass
class H5adTable:
    X: np.ndarray
    labels: np.ndarray | None
    label_name: str | None
    columns: list
    what: str  # "X", "layers/<name>" or "obsm/<name>"


def read_h5ad(path, labels=None, *, layer=None, obsm=None) -> H5adTable:
    """The matrix to embed and the label column of an ``.h5ad`` file (see the module docstring)."""
    if layer is not None and obsm is not None:
        raise ValueError("give --layer or --obsm, not both")
    try:
        import h5py
    except ImportError:
        raise ValueError("reading .h5ad files needs h5py: pip install 'smallvis[anndata]' "
                         "(or pip install h5py)") from None
    try:
        fh = h5py.File(path, "r")
    except OSError as err:
        raise ValueError(f"cannot read {path} as an .h5ad (HDF5) file: {err}") from None
    with fh:
        if obsm is not None:
            node, what = _child(fh, "obsm", obsm), f"obsm/{obsm}"
        elif layer is not None:
            node, what = _child(fh, "layers", layer), f"layers/{layer}"
        else:
            if "X" not in fh:
                raise ValueError(f"{path} has no X matrix (give --obsm or --layer)")
            node, what = fh["X"], "X"
        X = _matrix(node, what)
        label_values = None
        if labels is not None:
            label_values = _obs_column(fh, str(labels), path)
        columns = _var_names(fh, X.shape[1]) if what != f"obsm/{obsm}" else \
            [f"{obsm}_{j + 1}" for j in range(X.shape[1])]
    return H5adTable(X=X, labels=label_values, label_name=None if labels is None else str(labels),
                     columns=columns, what=what)


def _child(fh, group: str, name: str):
    if group not in fh or name not in fh[group]:
        have = sorted(fh[group].keys()) if group in fh else []
        raise ValueError(f"the file has no {group} entry {name!r}"
                         + (f"; it has: {', '.join(have)}" if have else ""))
    return fh[group][name]


def _matrix(node, what: str) -> np.ndarray:
    import h5py

    if isinstance(node, h5py.Dataset):
        return np.asarray(node[()], dtype=np.float64)
    kind = _text(node.attrs.get("encoding-type", ""))
    if kind not in ("csr_matrix", "csc_matrix"):
        raise ValueError(f"{what} is a {kind or 'group'} this reader does not know")
    from scipy import sparse

    shape = tuple(int(v) for v in node.attrs["shape"])
    make = sparse.csr_matrix if kind == "csr_matrix" else sparse.csc_matrix
    M = make((node["data"][()], node["indices"][()], node["indptr"][()]), shape=shape)
    return M.tocsr().astype(np.float64)


def _obs_column(fh, name: str, path) -> np.ndarray:
    import h5py

    obs = fh["obs"] if "obs" in fh else None
    if obs is None or name not in obs:
        have = [k for k in obs.keys() if k != "__categories"] if obs is not None else []
        raise ValueError(f"{path} has no obs column {name!r}"
                         + (f"; it has: {', '.join(sorted(have))}" if have else ""))
    node = obs[name]
    if isinstance(node, h5py.Group):  # categorical: codes into categories, -1 missing
        codes = node["codes"][()]
        categories = np.array([_text(c) for c in node["categories"][()]], dtype=object)
        out = np.empty(codes.shape[0], dtype=object)
        out[codes >= 0] = categories[codes[codes >= 0]]
        out[codes < 0] = None
        return out
    values = node[()]
    if values.dtype.kind in "SO":
        return np.array([_text(v) for v in values], dtype=object)
    return np.asarray(values)


def _var_names(fh, p: int) -> list:
    var = fh["var"] if "var" in fh else None
    if var is not None:
        key = _text(var.attrs.get("_index", "_index"))
        if key in var and var[key].shape == (p,):
            return [_text(v) for v in var[key][()]]
    return [f"V{j + 1}" for j in range(p)]


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
