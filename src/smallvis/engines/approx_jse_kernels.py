"""Numba kernels of JSE's stored pairs on the sparse-P engines (:mod:`.approx_jse`; compiled on
first use and cached on disk): the differences between each stored pair's true terms (the dense
engine's, with ``q`` and the mixture floored at ``eps``) and the ones the all-pairs sums count for
it (``P = 0``, ``q`` unfloored: ``log(q / M) = -log(1 - kappa)``), over the rows of a CSR matrix.
Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads. Coordinates are at most three, held in registers. One pass over P's rows per
evaluation (:func:`jse_rows`), and one over its transpose for a row-normalised Q
(:func:`.approx_nerv_kernels.transposed_forces`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.vmath import log1p1
from .approx_nerv_kernels import CHUNK, TINY, row_norm, store_row_stiffness
from .csr_row_kernels import widest_row


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
def jse_rows(indptr, indices, data, tpos, Y, f, log_s, floor, kappa, eps, with_cost,
             log_norm, kq, fwd, FA, FB, AB):
    """JSE's stored pairs in one pass over the rows: ``log_norm[i]`` is ``log_s[i]``, or (where
    ``floor[i]``) at least the log-sum-exp of the row's stored weights; per entry ``e`` (``p = f
    P_ij``, ``log q = -d2 - log_norm[i]``, ``c = -log(1 - kappa)``, what the all-pairs sums
    count) ``u = qf L - q c`` and ``v = qf - q`` (0 on the diagonal), written as the stiffness
    difference ``(s v - u) / kappa = A + s B``, stored at ``AB[tpos[e]]`` (the entry's place in
    P's transpose, :func:`.approx_nerv_kernels.transposed_forces`; ``tpos`` empty: not stored);
    ``kq[i] = sum_e u``, ``FA[i] = sum A (y_i - y_j)``, ``FB[i] = sum B (y_i - y_j)`` and, with ``with_cost``, ``fwd[i] = sum const - p log(M / p)`` less ``eps log eps``
    per entry (the all-pairs constant counts every pair at ``P = 0``; else 0). One ``exp`` and one
    ``log1p`` per entry, both vectorised (:mod:`.._util.vmath`)."""
    n, k = Y.shape
    log_eps = math.log(eps)
    q_floor = math.exp(log_eps)
    c = -math.log1p(-kappa)
    inv_kappa = 1.0 / kappa
    width = widest_row(indptr)
    for ch in prange((n + CHUNK - 1) // CHUNK):
        d2 = np.empty(width)
        w = np.empty(width)
        x = np.empty(width)
        aa = np.empty(width)
        bb = np.empty(width)
        dx = np.empty((3, width))
        for i in range(ch * CHUNK, min(n, (ch + 1) * CHUNK)):
            start = indptr[i]
            m = indptr[i + 1] - start
            ln, scale = row_norm(indptr, indices, Y, i, log_s, floor, d2, dx, w)
            log_norm[i] = ln
            for t in range(m):  # q, and log1p's argument kappa (p / qf - 1) (vectorised)
                lq = -d2[t] - ln
                q = w[t] * (scale if lq > TINY else 0.0)  # no subnormal q
                w[t] = q
                qf = q if lq > log_eps else q_floor
                x[t] = kappa * (f * data[start + t] / qf - 1.0)
            for t in range(m):
                x[t] = log1p1(x[t])
            # the terms (vectorised), the row's sums, the cost, the stiffness to its place in the
            # transpose: apart, as one loop of them all runs at about half the speed
            for t in range(m):
                lq = -d2[t] - ln
                q = w[t]
                above = lq > log_eps
                lqf = lq if above else log_eps
                qf = q if above else q_floor
                mm = kappa * (f * data[start + t]) + (1.0 - kappa) * qf
                L = lqf - log_eps if mm < eps else -x[t]
                u = qf * L - q * c
                u = 0.0 if indices[start + t] == i else u  # the diagonal: nothing
                v = 0.0 if indices[start + t] == i else qf - q
                x[t] = u
                aa[t] = -u * inv_kappa
                bb[t] = v * inv_kappa
            a = 0.0
            for t in range(m):
                a += x[t]
            b = 0.0
            if with_cost:
                for t in range(m):
                    if indices[start + t] == i:
                        continue
                    lq = -d2[t] - ln
                    qf = w[t] if lq > log_eps else q_floor
                    p = f * data[start + t]
                    mm = kappa * p + (1.0 - kappa) * qf
                    plmp, const = _forward(p, qf, mm, kappa, eps, log_eps)
                    b += const - plmp - eps * log_eps
            kq[i] = a
            fwd[i] = b
            store_row_stiffness(i, start, m, aa, bb, dx, tpos, AB, FA, FB)
