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


@njit(cache=True, error_model="numpy", inline="always")
def _mixture(p, lq, kappa, eps, log_eps):
    """``(q, qf, L, m)`` of a pair with ``p = f P_ij`` and ``log q = lq``: ``q`` unfloored,
    ``qf = max(q, eps)``, ``L = log(qf / M)`` and ``m = M`` before its floor."""
    lqf = lq if lq > log_eps else log_eps
    qf = math.exp(lqf)
    q = qf if lq > log_eps else math.exp(lq)
    m = kappa * p + (1.0 - kappa) * qf
    if m < eps:
        L = lqf - log_eps
    else:
        L = -math.log1p(kappa * (p / qf - 1.0))
    return q, qf, L, m


@njit(cache=True, error_model="numpy", inline="always")
def _forward(p, qf, m, kappa, eps, log_eps):
    """``(p log(M / p), constant)``: the pair's forward term and its share ``pc log pc - p log p``
    of the constant (``pc = max(p, eps)``)."""
    if p >= eps:
        if m < eps:
            return p * (log_eps - math.log(p)), 0.0
        return p * math.log1p((1.0 - kappa) * (qf / p - 1.0)), 0.0
    if p > 0.0:
        return p * (math.log(m if m > eps else eps) - math.log(p)), eps * log_eps - p * math.log(p)
    return 0.0, eps * log_eps


@njit(parallel=True, cache=True, error_model="numpy")
def stored_sums(indptr, indices, data, Y, f, log_norm, kappa, eps, with_cost, kq, fwd, u, v):
    """Per row ``i`` over its stored entries ``e`` (``log q = -d2 - log N_i``, ``c = -log(1 -
    kappa)``, what the all-pairs sums count): ``u[e] = qf L - q c`` and ``v[e] = qf - q`` (0 on
    the diagonal), ``kq[i] = sum_e u[e]`` and, with ``with_cost``, ``fwd[i] = sum const -
    p log(M / p)`` less ``eps log eps`` per entry (the all-pairs constant counts every pair at
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
                u[e] = 0.0
                v[e] = 0.0
                continue
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            p = f * data[e]
            q, qf, L, m = _mixture(p, -d2 - log_norm[i], kappa, eps, log_eps)
            u[e] = qf * L - q * c
            v[e] = qf - q
            a += u[e]
            if with_cost:
                plmp, const = _forward(p, qf, m, kappa, eps, log_eps)
                b += const - plmp - eps * log_eps
        kq[i] = a
        fwd[i] = b


@njit(parallel=True, cache=True, error_model="numpy")
def stored_forces(indptr, indices, entry, Y, u, v, shift, kappa, owner_is_row, F):
    """``F[i] = sum_j dK_oj (y_i - y_j)`` over the stored entries of row ``i``, with ``dK`` the
    stored pair's row-form stiffness ``-qf (L - s) / kappa`` less the counted ``-q (c - s) /
    kappa``, i.e. ``(s v - u) / kappa`` with :func:`stored_sums`' ``u``, ``v`` of the pair's entry
    (``entry[e]``: an entry of P's transpose gives its entry in P; ``e`` itself when
    ``owner_is_row``) and ``s = shift[o]`` of its owner row ``o`` (``i`` when ``owner_is_row``,
    else ``j``)."""
    n, k = Y.shape
    for i in prange(n):
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            o = np.int64(i) if owner_is_row else np.int64(j)  # one integer type
            src = np.int64(e) if owner_is_row else entry[e]
            dk = (shift[o] * v[src] - u[src]) / kappa
            a0 += dk * (y0 - Y[j, 0])
            if k > 1:
                a1 += dk * (y1 - Y[j, 1])
            if k > 2:
                a2 += dk * (y2 - Y[j, 2])
        F[i, 0] = a0
        if k > 1:
            F[i, 1] = a1
        if k > 2:
            F[i, 2] = a2
