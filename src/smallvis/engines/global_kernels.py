"""Numba kernel of g-SNE's global term on the sparse-P engines (compiled on first use and cached on
disk): the per-point sums over all pairs that its cost needs, with the global affinities
``P^_ij = (1 + |x_i - x_j|^2) / S`` made from the input coordinates pair by pair (never stored).

Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads.
"""

from __future__ import annotations

from numba import prange

from .._util.jit import njit
from .._util.vmath import log1, log1p1


@njit(cache=True, error_model="numpy")
def _row(X, Y, i, lo, hi, inv_s, eps, with_plogp):
    """``(sum_j P^_ij log(1 + d2_ij), sum_j P_c log P_c)`` over ``lo <= j < hi``."""
    dim = X.shape[1]
    k = Y.shape[1]
    c = 0.0
    h = 0.0
    for j in range(lo, hi):
        r2 = 0.0
        for d in range(dim):
            diff = X[i, d] - X[j, d]
            r2 += diff * diff
        d2 = 0.0
        for d in range(k):
            diff = Y[i, d] - Y[j, d]
            d2 += diff * diff
        p = (1.0 + r2) * inv_s
        c += p * log1p1(d2)
        if with_plogp:
            pc = max(p, eps)
            h += pc * log1(pc)
    return c, h


@njit(parallel=True, cache=True, error_model="numpy")
def global_cost_rows(X, Y, inv_s, eps, with_plogp, cross, plogp):
    """Per row ``i`` over ``j != i``: ``cross[i] = sum_j P^_ij log(1 + d2_ij)`` and, with
    ``with_plogp``, ``plogp[i] = sum_j P_c log P_c`` (``P_c = max(P^_ij, eps)``); ``X`` (n, D) the
    input coordinates, ``Y`` (n, k) the output ones, ``inv_s`` ``1 / S``. The logarithms are
    :mod:`smallvis._util.vmath`'s (< 1 ulp)."""
    n = X.shape[0]
    for i in prange(n):
        c0, h0 = _row(X, Y, i, 0, i, inv_s, eps, with_plogp)
        c1, h1 = _row(X, Y, i, i + 1, n, inv_s, eps, with_plogp)
        cross[i] = c0 + c1
        if with_plogp:
            plogp[i] = h0 + h1
