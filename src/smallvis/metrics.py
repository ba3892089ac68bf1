"""Embedding quality metrics: arrays in, numbers out.

- :func:`knn_preservation` — mean neighbour preservation ``mnp@k`` as in the original's docs: the mean
  over points of the fraction of each point's ``k`` nearest input neighbours that are also among its
  ``k`` nearest output neighbours (1 = every neighbourhood kept).
- :func:`compute_metrics` — both at one ``k``, as the command line and sweeps report them.
- :func:`trustworthiness` — Venna & Kaski's trustworthiness (scikit-learn's implementation): penalises
  output neighbours that are far away in the input (1 = no intrusions).
"""

from __future__ import annotations

import numpy as np

from ._logging import logger

TRUSTWORTHINESS_MAX_N = 5000  # sklearn's version holds n x n distance matrices


def _check(X, Y, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if Y.ndim == 1:
        Y = Y[:, None]
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must be 2-D with the same number of rows; got {X.shape} and {Y.shape}")
    n = X.shape[0]
    if isinstance(k, bool) or int(k) != k or not 1 <= k < n:
        raise ValueError(f"k must be a whole number between 1 and n - 1 = {n - 1}; got {k!r}")
    return X, Y, int(k)


def _neighbours(Z: np.ndarray, k: int) -> np.ndarray:
    """Indices (n, k) of each point's k nearest neighbours, the point itself excluded."""
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=k).fit(Z).kneighbors(return_distance=False)


def knn_preservation(X, Y, k: int = 15) -> float:
    """Mean fraction of each point's ``k`` nearest input neighbours kept among its ``k`` output ones.

    Parameters
    ----------
    X : array (n, p)
        Input data (Euclidean distances).
    Y : array (n, d)
        Embedding.
    k : int
        Neighbourhood size, ``1 <= k < n``.

    Returns
    -------
    float in [0, 1]
    """
    X, Y, k = _check(X, Y, k)
    nx, ny = _neighbours(X, k), _neighbours(Y, k)
    both = np.sort(np.hstack([nx, ny]), axis=1)  # a shared neighbour appears twice, side by side
    kept = np.count_nonzero(both[:, 1:] == both[:, :-1])
    return float(kept / nx.size)


def trustworthiness(X, Y, k: int = 15) -> float:
    """Trustworthiness of the embedding at ``k`` neighbours (``sklearn.manifold.trustworthiness``).

    Requires ``k < n / 2``. Memory is O(n^2); callers should skip it for large ``n``
    (see ``TRUSTWORTHINESS_MAX_N``).
    """
    X, Y, k = _check(X, Y, k)
    if k >= X.shape[0] / 2:
        raise ValueError(f"trustworthiness needs k < n / 2 = {X.shape[0] / 2:g}; got k = {k}")
    from sklearn.manifold import trustworthiness as _tw

    return float(_tw(X, Y, n_neighbors=k))


# the neighbourhood size of the metrics the command line and sweeps report
METRIC_K = 15


def compute_metrics(X, Y, k: int = METRIC_K) -> dict:
    """kNN preservation (and trustworthiness where affordable) at ``k``; skipped when n is too small."""
    n = len(Y)
    out = {"k": k}
    if k >= n:
        logger.warning("metrics skipped: need more than %d points", k)
        return out
    out["knn_preservation"] = knn_preservation(X, Y, k)
    if k < n / 2 and n <= TRUSTWORTHINESS_MAX_N:
        out["trustworthiness"] = trustworthiness(X, Y, k)
    return out
