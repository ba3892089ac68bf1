"""Pairwise distances of the input and of the output (dense, float64)."""

from __future__ import annotations

import numpy as np


def shift_origin(X: np.ndarray) -> np.ndarray:
    """``X`` (n, p) translated so that each column's (lower) median is 0, for expanded distances.

    A translation changes no distance, and afterwards the squared norms in ``|x|^2 + |y|^2 - 2 x.y``
    are of the size of the spread, not of an offset common to every point (offset by 1e8, no digit
    of a unit distance survives the expansion). A median rather than the mean: it is one of the
    column's own values, so the subtraction is exact for data of one magnitude (Sterbenz) and keeps
    integer data integer, whose expanded distances are then exact (duplicates at distance 0).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n == 0:
        return X.copy()
    mid = (n - 1) // 2
    return X - np.partition(X, mid, axis=0)[mid]


def squared_distances(X: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances, shape (n, n), tiny negatives clamped to 0, exact zeros on the diagonal.

    Computed after :func:`shift_origin`, so an offset common to every point costs no precision, in the
    expanded form ``|x_i|^2 + |x_j|^2 - 2 x_i.x_j`` (the original's) except for the pairs where that
    form cancels (:func:`_refine_close_pairs`). Input and output distances alike: iris's duplicated
    row, split by a slightly asymmetric P, sits 1e-7 apart in a layout of size 100, where the expanded
    form reads noise, and costs with ``log(1 - w + eps)`` (largevis, the umap family) turn that noise
    into tens of units; from differences, such a cost is the configuration's, whatever the BLAS.
    """
    X = shift_origin(X)
    sq = np.einsum("ij,ij->i", X, X)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    _refine_close_pairs(D2, X, sq)
    np.maximum(D2, 0.0, out=D2)
    np.fill_diagonal(D2, 0.0)
    return D2


# the expanded form loses about log10(1 / this) digits where D2 is this small against |x|^2 + |y|^2
CANCELLATION = 1e-6


def _refine_close_pairs(D2: np.ndarray, X: np.ndarray, sq: np.ndarray) -> None:
    """Recompute, from coordinate differences, the entries of ``D2`` where the expanded form cancels
    (near neighbours and duplicates): duplicates come out exactly 0, close pairs to full precision."""
    close = D2 <= CANCELLATION * (sq[:, None] + sq[None, :])
    np.fill_diagonal(close, False)
    i, j = np.nonzero(close)
    if i.size:
        diff = X[i] - X[j]
        D2[i, j] = np.einsum("ij,ij->i", diff, diff)


def distances_from_input(X: np.ndarray, *, precomputed: bool) -> np.ndarray:
    """Euclidean distances ``R`` (n, n): the precomputed matrix itself, or computed from coordinates."""
    if precomputed:
        return X
    return np.sqrt(squared_distances(X))
