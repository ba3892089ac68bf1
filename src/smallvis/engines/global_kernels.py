"""Numba kernel of g-SNE's global term on the sparse-P engines (compiled on first use and cached on
disk): the constant ``sum_j P^ log P^`` of its cost per point, with the global affinities
``P^_ij = (1 + |x_i - x_j|^2) / S`` made from the input coordinates pair by pair (never stored).

Rows are independent (each row writes only its own output, its sum in a fixed order), so the
results do not depend on the number of threads. Each task takes a block of rows against a block of
columns at a time (the columns' coordinates ``XT``, dimension-major, stay in cache), each squared
distance summed over the dimensions in order with the columns side by side (vectorised).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.vmath import log1

ROWS = 32  # rows per task
COLS = 256  # columns per block


@njit(parallel=True, cache=True, error_model="numpy")
def global_plogp_rows(X, XT, inv_s, eps, plogp):
    """``plogp[i] = sum_{j != i} P_c log P_c`` (``P_c = max(P^_ij, eps)``, summed in the order of
    ``j``); ``X`` (n, D) the input coordinates, ``XT`` their transpose (D, n), ``inv_s``
    ``1 / S``. The logarithms are :mod:`smallvis._util.vmath`'s (< 1 ulp)."""
    n, dim = X.shape
    for c in prange((n + ROWS - 1) // ROWS):
        lo, hi = c * ROWS, min(n, (c + 1) * ROWS)
        acc = np.empty(COLS)
        h = np.zeros(hi - lo)
        for j0 in range(0, n, COLS):
            m = min(COLS, n - j0)
            for i in range(lo, hi):
                for t in range(m):
                    acc[t] = 0.0
                for d in range(dim):
                    xi = X[i, d]
                    column = XT[d, j0:j0 + m]
                    for t in range(m):
                        diff = xi - column[t]
                        acc[t] += diff * diff
                for t in range(m):  # vectorised: then the diagonal's term is taken out (a 0 added)
                    p = (1.0 + acc[t]) * inv_s
                    p = p if p > eps else eps
                    acc[t] = p * log1(p)
                if j0 <= i < j0 + m:
                    acc[i - j0] = 0.0
                s = h[i - lo]
                for t in range(m):
                    s += acc[t]
                h[i - lo] = s
        for i in range(lo, hi):
            plogp[i] = h[i - lo]
