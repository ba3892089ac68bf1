"""Numba kernel of the exact blocked neighbour search: each row's ``k`` nearest from a block of
distance proxies, in parallel over rows (compiled on first use and cached on disk).

It makes the same choice as :func:`smallvis.io.neighbors._select_block` (whose docstring states
the rule): the ``k``-th smallest proxy, every candidate within ``slack`` of it, exact distances of the
candidates from coordinate differences, ordered by (distance, index). Rows are independent, so the
result does not depend on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit


@njit(cache=True)
def _sift_down(heap, m):
    """Restore the max-heap property of ``heap[:m]`` from the root."""
    i = 0
    v = heap[0]
    while True:
        c = 2 * i + 1
        if c >= m:
            break
        if c + 1 < m and heap[c + 1] > heap[c]:
            c += 1
        if heap[c] <= v:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = v


@njit(cache=True)
def _kth_smallest(a, k, heap):
    """The ``k``-th smallest value of ``a`` (a max-heap of the ``k`` smallest seen so far)."""
    m = 0
    for v in a:
        if m < k:  # sift up
            i = m
            m += 1
            while i > 0:
                parent = (i - 1) // 2
                if heap[parent] >= v:
                    break
                heap[i] = heap[parent]
                i = parent
            heap[i] = v
        elif v < heap[0]:
            heap[0] = v
            _sift_down(heap, k)
    return heap[0]


@njit(parallel=True, cache=True)
def select_rows(A, rows, k, slack, X, idx_out, dist_out):
    """For every row ``r`` of the proxy block ``A`` (b, n) (``inf`` at the point itself): the ``k``
    nearest neighbours of point ``rows[r]`` into ``idx_out[r]``, ``dist_out[r]`` (Euclidean
    distances recomputed from ``X``)."""
    b, n = A.shape
    p = X.shape[1]
    for r in prange(b):
        a = A[r]
        heap = np.empty(k)
        limit = _kth_smallest(a, k, heap) + slack[r]
        count = 0
        for j in range(n):
            if a[j] <= limit:
                count += 1
        cand = np.empty(count, dtype=np.int64)
        key = np.empty(count)
        i = rows[r]
        c = 0
        for j in range(n):
            if a[j] <= limit:
                cand[c] = j
                s = 0.0
                for d in range(p):
                    diff = X[j, d] - X[i, d]
                    s += diff * diff
                key[c] = math.sqrt(s) if j != i else np.inf
                c += 1
        # candidates are in index order, so a stable sort on the distance breaks ties by index
        order = np.argsort(key, kind="mergesort")
        for t in range(k):
            idx_out[r, t] = cand[order[t]]
            dist_out[r, t] = key[order[t]]


@njit(parallel=True, cache=True)
def candidate_sq(X, rows, cand):
    """Squared distances ``|x_rows[r] - x_cand[r, j]|^2`` summed coordinate by coordinate in order
    (the same arithmetic as :func:`select_rows`, so both rank near-ties alike)."""
    b, m = cand.shape
    p = X.shape[1]
    out = np.empty((b, m))
    for r in prange(b):
        i = rows[r]
        for t in range(m):
            j = cand[r, t]
            s = 0.0
            for d in range(p):
                diff = X[j, d] - X[i, d]
                s += diff * diff
            out[r, t] = s
    return out
