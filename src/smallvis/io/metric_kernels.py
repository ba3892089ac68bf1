"""Numba kernel of one input distance under a named metric (compiled on first use and cached on
disk): what a sampling engine needs when it draws pairs and computes their input distances on the
fly, without an n x n matrix (the sgd engine's SGD-MDS and ee's distance-weighted repulsion).

Rows come prepared by :func:`smallvis.io.metric.kernel_rows`: float64, C-ordered; for cosine and
correlation the rows are centred (correlation) and scaled to unit length, with one more column that
is 1 for a degenerate (all-zero or constant) row, whose distance is 1 to every other row and 0 to
another degenerate one (:mod:`smallvis.io.metric`'s rule). The distances equal
:meth:`~smallvis.io.metric.Metric.pairwise`'s up to rounding; ``SOURCE_PRECOMPUTED`` reads
``X[i, k]`` from a distance matrix.
"""

from __future__ import annotations

import math

from .._util.jit import njit

SOURCE_PRECOMPUTED = -1
CODES = {"euclidean": 0, "sqeuclidean": 1, "manhattan": 2, "chebyshev": 3, "minkowski": 4,
         "cosine": 5, "correlation": 5, "hamming": 6, "jaccard": 7, "canberra": 8,
         "braycurtis": 9, "haversine": 10}


@njit(cache=True)
def pair_distance(X, code, p, i, k):
    """Input distance of rows ``i`` and ``k`` of ``X`` under the metric ``code`` (:data:`CODES`;
    ``p``: minkowski's exponent), or ``X[i, k]`` for :data:`SOURCE_PRECOMPUTED`."""
    if code == SOURCE_PRECOMPUTED:
        return X[i, k]
    m = X.shape[1]
    if code <= 1:  # euclidean, sqeuclidean
        s = 0.0
        for d in range(m):
            diff = X[i, d] - X[k, d]
            s += diff * diff
        return s if code == 1 else math.sqrt(s)
    if code == 5:  # unit rows, the last column flags a degenerate row
        deg_i = X[i, m - 1] != 0.0
        deg_k = X[k, m - 1] != 0.0
        if deg_i or deg_k:
            return 0.0 if deg_i and deg_k else 1.0
        dot = 0.0
        for d in range(m - 1):
            dot += X[i, d] * X[k, d]
        return min(max(1.0 - dot, 0.0), 2.0)
    if code == 10:  # haversine: (latitude, longitude) in radians
        s_lat = math.sin(0.5 * (X[i, 0] - X[k, 0]))
        s_lon = math.sin(0.5 * (X[i, 1] - X[k, 1]))
        h = s_lat * s_lat + math.cos(X[i, 0]) * math.cos(X[k, 0]) * s_lon * s_lon
        return 2.0 * math.asin(math.sqrt(min(max(h, 0.0), 1.0)))
    s = 0.0
    t = 0.0
    for d in range(m):
        a = X[i, d]
        b = X[k, d]
        diff = abs(a - b)
        if code == 2:
            s += diff
        elif code == 3:
            s = max(s, diff)
        elif code == 4:
            s += diff ** p
        elif code == 6:
            s += 1.0 if a != b else 0.0
        elif code == 7:
            if a != 0.0 or b != 0.0:
                t += 1.0
                s += 1.0 if a != b else 0.0
        elif code == 8:
            total = abs(a) + abs(b)
            if total > 0.0:
                s += diff / total
        else:  # braycurtis
            s += diff
            t += abs(a + b)
    if code == 4:
        return s ** (1.0 / p)
    if code == 6:
        return s / m
    if code == 7:
        return s / t if t > 0.0 else 0.0
    if code == 9:
        return s / t if t > 0.0 else 0.0
    return s
