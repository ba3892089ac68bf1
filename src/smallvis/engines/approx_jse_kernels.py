"""Numba kernels of JSE's stored pairs on the sparse-P engines (:mod:`.approx_jse`; compiled on
first use and cached on disk): the differences between each stored pair's true terms (the dense
engine's, with ``q`` and the mixture floored at ``eps``) and the ones the all-pairs sums count for
it (``P = 0``, ``q`` unfloored: ``log(q / M) = -log(1 - kappa)``), over the rows of a CSR matrix.
Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads. Coordinates are at most three, held in registers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit


@njit(cache=True, error_model="numpy")
def _pair(p, lq, kappa, eps, log_eps):
    """``(qf, L, log M/P term, constant)`` of a pair with ``p = f P_ij`` and ``log q = lq``
    (unfloored): ``qf = max(q, eps)``, ``L = log(qf / M)`` (floored mixture ``M``), the pair's
    ``p log(M / p)`` and its share ``pc log pc - p log p`` of the constant."""
    lqf = lq if lq > log_eps else log_eps
    qf = math.exp(lqf)
    m = kappa * p + (1.0 - kappa) * qf
    floored = m < eps
    if floored:
        L = lqf - log_eps
    else:
        L = -math.log1p(kappa * (p / qf - 1.0))
    plmp = 0.0
    const = 0.0
    if p >= eps:
        if floored:
            plmp = p * (log_eps - math.log(p))
        else:
            plmp = p * math.log1p((1.0 - kappa) * (qf / p - 1.0))
    else:
        const = eps * log_eps
        if p > 0.0:
            const -= p * math.log(p)
            plmp = p * (math.log(m if m > eps else eps) - math.log(p))
    return qf, L, plmp, const


@njit(parallel=True, cache=True, error_model="numpy")
def stored_sums(indptr, indices, data, Y, f, log_norm, kappa, eps, kq, fwd):
    """Per row ``i`` over its stored entries (``log q = -d2 - log N_i``): ``kq[i] = sum qf L -
    q c`` (``c = -log(1 - kappa)``, what the all-pairs sums count) and ``fwd[i] = sum const -
    p log(M / p)``, less ``eps log eps`` per entry (the all-pairs constant counts every pair at
    ``P = 0``)."""
    n, k = Y.shape
    log_eps = math.log(eps)
    c = -math.log1p(-kappa)
    for i in prange(n):
        a = 0.0
        b = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                continue
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            lq = -d2 - log_norm[i]
            qf, L, plmp, const = _pair(f * data[e], lq, kappa, eps, log_eps)
            a += qf * L - math.exp(lq) * c
            b += const - plmp - eps * log_eps
        kq[i] = a
        fwd[i] = b


@njit(parallel=True, cache=True, error_model="numpy")
def stored_forces(indptr, indices, data, Y, f, log_norm, shift, kappa, eps, owner_is_row, F):
    """``F[i] = sum_j dK_oj (y_i - y_j)`` over the stored entries of row ``i``, with ``dK`` the
    stored pair's row-form stiffness ``-qf (L - s) / kappa`` less the counted ``-q (c - s) /
    kappa`` of the pair's owner row ``o`` (``i`` when ``owner_is_row``, else ``j``: the matrix is
    then P's transpose) with its ``log N_o`` and ``s = shift[o]``."""
    n, k = Y.shape
    log_eps = math.log(eps)
    c = -math.log1p(-kappa)
    for i in prange(n):
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                continue
            o = np.int64(i) if owner_is_row else np.int64(j)  # one integer type
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            lq = -(e0 * e0 + e1 * e1 + e2 * e2) - log_norm[o]
            qf, L, _, _ = _pair(f * data[e], lq, kappa, eps, log_eps)
            s = shift[o]
            dk = (-qf * (L - s) + math.exp(lq) * (c - s)) / kappa
            a0 += dk * e0
            a1 += dk * e1
            a2 += dk * e2
        F[i, 0] = a0
        if k > 1:
            F[i, 1] = a1
        if k > 2:
            F[i, 2] = a2
