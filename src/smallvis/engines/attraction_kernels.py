"""Numba kernels shared by the sparse-P engines: the attractive half of a KL gradient over the stored
entries of a CSR matrix (compiled on first use and cached on disk).

Rows are independent (each row writes only its own force and cost), so the results do not depend on
the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._jit import njit

from .exact_kernels import FAST, T_KERNEL


@njit(parallel=True, cache=True, fastmath=FAST, error_model="numpy")
def attraction(indptr, indices, data, Y, code, alpha, want_grad, want_cost, A, logw, plogp):
    """For every row ``i`` of the CSR matrix ``P`` (``indptr``, ``indices``, ``data``):

    - ``A[i] = sum_j P_ij g_ij (y_i - y_j)`` with ``g = w`` (Student-t, ``code == 0``) or
      ``g = w^alpha`` (heavy-tailed ``w = (1 + alpha d2)^(-1/alpha)``);
    - ``logw[i] = sum_j P_ij log w_ij`` and ``plogp[i] = sum_j P_ij log P_ij`` (with ``want_cost``).
    """
    n, k = Y.shape
    inv_alpha = 1.0 / alpha
    for i in prange(n):
        if want_grad:
            for d in range(k):
                A[i, d] = 0.0
        sw = 0.0
        sp = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            p = data[e]
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            if code == T_KERNEL:
                g = 1.0 / (1.0 + d2)
            else:
                g = 1.0 / (1.0 + alpha * d2)
            if want_grad:
                pg = p * g
                for d in range(k):
                    A[i, d] += pg * (Y[i, d] - Y[j, d])
            if want_cost and p > 0.0:  # log1p only here: a gradient-only call is 4x faster
                if code == T_KERNEL:
                    sw -= p * math.log1p(d2)
                else:
                    sw -= p * (math.log1p(alpha * d2) * inv_alpha)
                sp += p * math.log(p)
        if want_cost:
            logw[i] = sw
            plogp[i] = sp


def csr_arrays(P):
    """``(indptr, indices, data)`` of a CSR matrix as int64 / float64 arrays for the kernels."""
    return (np.ascontiguousarray(P.indptr, dtype=np.int64),
            np.ascontiguousarray(P.indices, dtype=np.int64),
            np.ascontiguousarray(P.data, dtype=np.float64))
