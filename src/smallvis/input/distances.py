"""Pairwise distances of the input and of the output (dense, float64)."""

from __future__ import annotations

import numpy as np


def squared_distances(X: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances, shape (n, n), tiny negatives clamped to 0, exact zeros on the diagonal."""
    sq = np.einsum("ij,ij->i", X, X)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.maximum(D2, 0.0, out=D2)
    np.fill_diagonal(D2, 0.0)
    return D2


def distances_from_input(X: np.ndarray, *, precomputed: bool) -> np.ndarray:
    """Euclidean distances ``R`` (n, n): the precomputed matrix itself, or computed from coordinates."""
    if precomputed:
        return X
    return np.sqrt(squared_distances(X))
