"""Shape and value checks shared by the API, the estimator and the CLI."""

from __future__ import annotations

import numpy as np


def check_distance_matrix(D: np.ndarray) -> None:
    """A precomputed distance matrix must be square, symmetric, non-negative, with a zero diagonal."""
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(
            f"metric='precomputed' needs a square distance matrix; got shape {D.shape}"
        )
    if np.any(D < 0):
        raise ValueError("the precomputed distance matrix has negative entries")
    if not np.allclose(np.diag(D), 0.0):
        raise ValueError("the precomputed distance matrix must have zeros on its diagonal")
    if not np.allclose(D, D.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(D).max()))):
        raise ValueError("the precomputed distance matrix is not symmetric")
