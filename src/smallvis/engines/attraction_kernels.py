"""Numba kernels shared by the sparse-P engines: the attractive half of a KL gradient over the stored
entries of a CSR matrix (compiled on first use and cached on disk).

Rows are independent (each row writes only its own force and cost), so the results do not depend on
the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit

from .output_kernel_functions import T_KERNEL


@njit(parallel=True, cache=True, error_model="numpy")
def attraction_cost(indptr, indices, data, Y, code, alpha, logw, plogp):
    """``logw[i] = sum_j P_ij log w_ij`` and ``plogp[i] = sum_j P_ij log P_ij`` over the stored
    entries of row ``i`` (a ``log1p`` per entry: kept out of :func:`attraction_rows`, which runs
    every iteration)."""
    n, k = Y.shape
    inv_alpha = 1.0 / alpha
    for i in prange(n):
        sw = 0.0
        sp = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            p = data[e]
            if p <= 0.0:
                continue
            j = indices[e]
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            if code == T_KERNEL:
                sw -= p * math.log1p(d2)
            else:
                sw -= p * (math.log1p(alpha * d2) * inv_alpha)
            sp += p * math.log(p)
        logw[i] = sw
        plogp[i] = sp


def csr_arrays(P):
    """``(indptr, indices, data)`` of a CSR matrix as int64 / float64 arrays for the kernels."""
    return (np.ascontiguousarray(P.indptr, dtype=np.int64),
            np.ascontiguousarray(P.indices, dtype=np.int64),
            np.ascontiguousarray(P.data, dtype=np.float64))


@njit(parallel=True, cache=True, error_model="numpy")
def attraction_rows(indptr, indices, data, Y, rows, code, alpha, A):
    """``A[r] = sum_j P_ij g_ij (y_i - y_j)`` for the rows ``i = rows[r]`` of the CSR matrix ``P``
    (``indptr``, ``indices``, ``data``; every row: ``rows = arange(n)``; a transform: its moving
    points), with ``g = w`` (Student-t, ``code == 0``) or ``g = w^alpha`` (heavy-tailed
    ``w = (1 + alpha d2)^(-1/alpha)``); entries added in their stored order. Up to three coordinates
    are kept in registers (an array store per entry is 2.5x slower)."""
    n, k = Y.shape
    for r in prange(rows.shape[0]):
        i = rows[r]
        for d in range(k):
            A[r, d] = 0.0
        if k > 3:
            for e in range(indptr[i], indptr[i + 1]):
                j = indices[e]
                d2 = 0.0
                for d in range(k):
                    diff = Y[i, d] - Y[j, d]
                    d2 += diff * diff
                pg = data[e] / (1.0 + d2) if code == T_KERNEL else data[e] / (1.0 + alpha * d2)
                for d in range(k):
                    A[r, d] += pg * (Y[i, d] - Y[j, d])
            continue
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            d2 = e0 * e0 + e1 * e1 + e2 * e2
            pg = data[e] / (1.0 + d2) if code == T_KERNEL else data[e] / (1.0 + alpha * d2)
            a0 += pg * e0
            a1 += pg * e1
            a2 += pg * e2
        A[r, 0] = a0
        if k > 1:
            A[r, 1] = a1
        if k > 2:
            A[r, 2] = a2
