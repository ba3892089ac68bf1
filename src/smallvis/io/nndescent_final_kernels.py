"""Numba kernel of the last step of :mod:`smallvis.io.nndescent` (compiled on first use and cached
on disk): the found neighbours' distances recomputed in float64 under the true metric, summed in
coordinate order as the exact search does, and each row ordered by them (ties: the lower index).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit

# the final distances' kinds
EUCLIDEAN_D, SQEUCLIDEAN_D, MANHATTAN_D, CHEBYSHEV_D, MINKOWSKI_D, COSINE_D, CORRELATION_D = range(7)


@njit(cache=True)
def _true_dist(X, i, j, kind, p, norms):
    m = X.shape[1]
    s = 0.0
    if kind == EUCLIDEAN_D or kind == SQEUCLIDEAN_D:
        for d in range(m):
            a = X[j, d] - X[i, d]
            s += a * a
        return math.sqrt(s) if kind == EUCLIDEAN_D else s
    if kind == MANHATTAN_D:
        for d in range(m):
            s += abs(X[i, d] - X[j, d])
        return s
    if kind == CHEBYSHEV_D:
        for d in range(m):
            a = abs(X[i, d] - X[j, d])
            if a > s:
                s = a
        return s
    if kind == MINKOWSKI_D:
        for d in range(m):
            s += abs(X[i, d] - X[j, d]) ** p
        return s ** (1.0 / p)
    for d in range(m):  # COSINE_D, CORRELATION_D: rows already centred for correlation
        s += X[i, d] * X[j, d]
    r = 1.0 - s / (norms[i] * norms[j])
    return min(max(r, 0.0), 2.0)


@njit(parallel=True, cache=True)
def final_neighbors(X, hi, kind, p, norms):
    """The found neighbours ordered by their true distances (float64, in coordinate order), ties by
    the lower index: (indices, distances), each (n, k)."""
    n, k = hi.shape
    idx = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    for i in prange(n):
        cand = np.sort(hi[i])
        key = np.empty(k)
        for t in range(k):
            key[t] = _true_dist(X, i, cand[t], kind, p, norms)
        order = np.argsort(key, kind="mergesort")
        for t in range(k):
            idx[i, t] = cand[order[t]]
            dist[i, t] = key[order[t]]
    return idx, dist
