"""Numba kernels of the AB-divergence's stored pairs on the sparse-P engines (:mod:`.approx_ab`;
compiled on first use and cached on disk): each stored pair's terms (the fused exact engine's
:func:`.exact_ab_kernels.row_ab`) less the ones the all-pairs sums count for it (``P = 0``, then
floored as the branch floors it), and the per-point constants of a sparse P.

Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .exact_ab_kernels import (ALPHA, ALPHA0, BETA, BETA0, EPS, F, FLOOR, GENERAL, LAM, LAMBDA0,
                               OB, OL, row_ab)
from .output_kernel_functions import power


CHUNKS = 256  # rows are cut into this many blocks (scratch made once per block), any thread count


@njit(parallel=True, cache=True, error_model="numpy")
def ab_stored(indptr, indices, data, Y, branch, wk, prm, cc, ds, F_out):
    """Per row ``i`` over its stored entries (a diagonal entry is skipped), the differences between
    the pair's terms at ``P_ij`` and at ``P = 0``: ``cc[i]`` of the cost terms, ``ds[i]`` of the
    branch's share of ``S`` and ``F_out[i] = sum_j (kk_ij - kk0_ij) (y_i - y_j)`` of the stiffness
    ``kk = c g A`` (``prm``: :mod:`.exact_ab_kernels`' parameters, ``1 / Z`` filled in)."""
    n, k = Y.shape
    width = 0
    for i in range(n):
        width = max(width, indptr[i + 1] - indptr[i])
    blocks = min(CHUNKS, n)
    for b in prange(blocks):
        x = np.empty(width)
        zero = np.zeros(width)
        d2 = np.empty(width)
        d2b = np.empty(width)
        kk1 = np.empty(width)
        kk0 = np.empty(width)
        k2 = np.empty(width)
        cc1 = np.empty(width)
        cc0 = np.empty(width)
        for i in range(b * n // blocks, (b + 1) * n // blocks):
            lo, hi = indptr[i], indptr[i + 1]
            m = hi - lo
            for e in range(m):
                j = indices[lo + e]
                s = 0.0
                for d in range(k):
                    diff = Y[i, d] - Y[j, d]
                    s += diff * diff
                d2[e] = s
                d2b[e] = s
                x[e] = 0.0 if j == i else data[lo + e]
            s1 = row_ab(branch, wk, prm, x, d2, kk1, k2, cc1, m, True)
            s0 = row_ab(branch, wk, prm, zero, d2b, kk0, k2, cc0, m, True)
            c = 0.0
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for e in range(m):
                j = indices[lo + e]
                dk = kk1[e] - kk0[e]
                c += cc1[e] - cc0[e]
                a0 += dk * (Y[i, 0] - Y[j, 0])
                if k > 1:
                    a1 += dk * (Y[i, 1] - Y[j, 1])
                if k > 2:
                    a2 += dk * (Y[i, 2] - Y[j, 2])
            cc[i] = c
            ds[i] = s1 - s0
            F_out[i, 0] = a0
            if k > 1:
                F_out[i, 1] = a1
            if k > 2:
                F_out[i, 2] = a2


@njit(cache=True, error_model="numpy")
def _pair_constants(branch, p, prm):
    """The two per-pair sums of :func:`.exact_ab_kernels.ab_constants` at ``p = f P_ij``."""
    eps, a, b, lam = prm[EPS], prm[ALPHA], prm[BETA], prm[LAM]
    if branch == GENERAL:
        pp = max(p, eps) if prm[FLOOR] != 0.0 else p
        return power(pp, lam), power(pp, a)
    if branch == BETA0:
        pc = max(p, eps)
        pa = power(pc, a)
        return pc * math.log(pa), pa
    if branch == LAMBDA0:
        return math.log(max(power(max(p, eps), a), eps)), 0.0
    if branch == ALPHA0:
        return max(power(max(p, eps), b), eps), 0.0
    return 0.0, 0.0


@njit(parallel=True, cache=True, error_model="numpy")
def ab_sparse_constants(indptr, indices, data, n, branch, prm):
    """:func:`.exact_ab_kernels.ab_constants` of the (n, n) matrix whose stored entries are those
    of the CSR arrays and whose other entries are 0: the stored entries' terms plus the unstored
    pairs' count times the term at ``P = 0``."""
    f = prm[F]
    a, b, lam = prm[ALPHA], prm[BETA], prm[LAM]
    z1, z2 = _pair_constants(branch, 0.0, prm)
    out = np.zeros((n, 2))
    for i in prange(n):
        s1 = 0.0
        s2 = 0.0
        stored = 0
        for e in range(indptr[i], indptr[i + 1]):
            if indices[e] == i:
                continue
            t1, t2 = _pair_constants(branch, f * data[e], prm)
            s1 += t1
            s2 += t2
            stored += 1
        rest = n - 1 - stored
        s1 += rest * z1
        s2 += rest * z2
        if branch == GENERAL:
            out[i, 0] = (s1 / (b * lam) - prm[OB] * s2 / (a * b)
                         + prm[OL] * (n - 1) / (a * lam))
            out[i, 1] = s2
        elif branch == BETA0:
            out[i, 0] = (s1 - s2) / (a * a)
            out[i, 1] = s2
        elif branch == LAMBDA0:
            out[i, 0] = (-s1 - n) / (a * a)
        elif branch == ALPHA0:  # the diagonal's max(0, eps) included, as the dense constant
            out[i, 0] = (s1 + prm[EPS]) / (b * b)
    return out
