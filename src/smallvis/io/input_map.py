"""The fitted input processing as a map that new points go through: scaling, then PCA or whitening.

``smallvis()`` scales its input (``scale``) and may project it (``pca``) with constants computed from
the data it embeds. Placing new points next to a fitted embedding (transform) needs the *same*
constants applied to the new rows, not constants recomputed from them: :func:`fit_input_map` reads
them off the training input and what :func:`~smallvis.io.prepare.prepare_input` made of it, and
:meth:`InputMap.apply` maps new rows. Applied to the training rows it reproduces the processed
training data up to rounding (the processed training data itself is kept as it was).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .preprocess import apply_sparse_scaling, as_sparse_matrix, centre_columns, sparse_scaling


@dataclass
class InputMap:
    """``apply(X) = ((X[:, keep] - shift) / divisor - mean) @ rotation`` (each part optional)."""

    n_features: int
    keep: np.ndarray | None = None  # columns kept (scale="scale" drops constant ones)
    shift: np.ndarray | float = 0.0
    divisor: np.ndarray | float = 1.0
    mean: np.ndarray | None = None  # PCA: the scaled training data's column means
    rotation: np.ndarray | None = None  # PCA: (p, ncomp) loadings, whitening folded in
    sparse: bool = False  # fitted on a sparse matrix: scaled without centring, new rows kept sparse

    def apply(self, X: np.ndarray) -> np.ndarray:
        if getattr(self, "sparse", False):
            return self._apply_sparse(X)
        if hasattr(X, "tocsr"):
            X = X.toarray()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            got = X.shape[1] if X.ndim == 2 else f"an array of shape {X.shape}"
            raise ValueError(f"the new points must have the {self.n_features} columns the model was "
                             f"fitted on; got {got}")
        if self.keep is not None:
            X = X[:, self.keep]
        X = (X - self.shift) / self.divisor
        if self.rotation is not None:
            X = (X - self.mean) @ self.rotation
        return np.ascontiguousarray(X)


    def _apply_sparse(self, X):
        import scipy.sparse as sp

        X = as_sparse_matrix(X if hasattr(X, "tocsr") else sp.csr_matrix(np.asarray(X, float)),
                             what="X_new")
        if X.shape[1] != self.n_features:
            raise ValueError(f"the new points must have the {self.n_features} columns the model "
                             f"was fitted on; got {X.shape[1]}")
        X = apply_sparse_scaling(X, self.keep, self.divisor)
        if self.rotation is not None:
            return np.ascontiguousarray(X @ self.rotation - self.mean @ self.rotation)
        return X


def _fit_sparse_map(X, mode: str, processed, projected: bool) -> InputMap:
    keep, divisor = sparse_scaling(X, mode)
    out = InputMap(n_features=X.shape[1], keep=keep, divisor=divisor, sparse=True)
    if projected:
        scaled = apply_sparse_scaling(X, keep, divisor)
        mean = np.asarray(scaled.mean(axis=0)).ravel()
        cross = np.asarray(scaled.T @ processed) - np.outer(mean, processed.sum(axis=0))
        norms = np.linalg.norm(cross, axis=0)
        norms[norms == 0] = 1.0
        c = np.einsum("ij,ij->j", processed, processed) / norms
        out.mean, out.rotation = mean, cross / norms * c
    return out


def fit_input_map(X: np.ndarray, mode: str, processed: np.ndarray, *, projected: bool) -> InputMap:
    """The map that took ``X`` (raw numeric training input) to ``processed`` under scale mode
    ``mode`` (resolved) and, when ``projected``, a PCA (or whitening) afterwards.

    The scaling constants are recomputed as :func:`~smallvis.io.preprocess.scale_input` computes
    them. The projection is recovered from the scores themselves: with ``S`` the centred scaled
    data and ``T`` its (possibly whitened) scores ``U d c``, ``S^T T = V d^2 c``, whose columns have
    norms ``d^2 c`` (``V`` is orthonormal), and ``T^T T = d^2 c^2``; so ``V`` and ``c`` follow
    without a second SVD, whichever SVD (exact or randomised) the fit used.
    """
    if hasattr(X, "tocsr"):
        return _fit_sparse_map(X, mode, processed, projected)
    X = np.asarray(X, dtype=np.float64)
    out = InputMap(n_features=X.shape[1])
    if mode == "range":
        lo = float(X.min())
        top = float((X - lo).max())
        out.shift, out.divisor = lo, (top if top > 0 else 1.0)
    elif mode in ("absmax", "scale"):
        centred = centre_columns(X)
        shift = (X - centred).mean(axis=0)
        if mode == "absmax":
            top = abs(float(centred.max()))
            out.shift, out.divisor = shift, (top if top > 0 else 1.0)
        else:
            sd = np.sqrt(np.einsum("ij,ij->j", centred, centred) / (X.shape[0] - 1))
            keep = sd > 0
            out.keep, out.shift, out.divisor = keep, shift[keep], sd[keep]
    if projected:
        scaled = ((X[:, out.keep] if out.keep is not None else X) - out.shift) / out.divisor
        mean = scaled.mean(axis=0)
        cross = (scaled - mean).T @ processed  # V d^2 c
        norms = np.linalg.norm(cross, axis=0)
        norms[norms == 0] = 1.0
        c = np.einsum("ij,ij->j", processed, processed) / norms
        out.mean, out.rotation = mean, cross / norms * c
    return out
