"""Numba kernels of the AB-divergence's stored pairs on the sparse-P engines (:mod:`.approx_ab`;
compiled on first use and cached on disk): each stored pair's terms (those of the fused exact
engine's :func:`.exact_ab_kernels.row_ab`) less the ones the all-pairs sums count for it (``P = 0``,
then floored as the branch floors it), in closed form, and the per-point constants of a sparse P.

Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import log1, vlog
from .csr_row_kernels import gather_row, widest_row
from .exact_ab_kernels import (ALPHA, ALPHA0, BETA, BETA0, EPS, F, FLOOR, GENERAL, INV_Z, LAM,
                               LAMBDA0, OB, OL, ZERO, gauss_q_power, row_q, vpow_part, vpower)
from .output_kernel_functions import GAUSSIAN_KERNEL, power


CHUNKS = 256  # rows are cut into this many blocks (scratch made once per block), any thread count


@njit(cache=True, error_model="numpy")
def _p_term_params(branch, prm):
    """``(floor, p0, e_p, t0)``: whether the branch floors ``P`` at eps, the ``P`` an unstored pair
    (and the diagonal) has, the power of ``P`` in ``D`` and the term ``D`` subtracts (its value at
    ``p0``)."""
    eps, a, b = prm[EPS], prm[ALPHA], prm[BETA]
    floor = branch != GENERAL or prm[FLOOR] != 0.0
    p0 = eps if floor else 0.0
    e_p = b if branch == ALPHA0 else a
    if branch == ALPHA0:
        t0 = log1(max(power(eps, b), eps))
    elif branch == ZERO:
        t0 = log1(eps)
    else:
        t0 = power(p0, a) if p0 > 0.0 else 0.0
    return floor, p0, e_p, t0


@njit(parallel=True, cache=True, error_model="numpy")
def ab_p_terms(indptr, indices, data, branch, prm, out):
    """``out[e]``: the difference ``D`` of P's term between stored entry ``e`` (``p = f P_ij``,
    floored as the branch floors it) and an unstored pair (``P^a``; ``log max(P^b, eps)`` for
    ``absnea0``; ``log P`` for ``absne00``; 0 on the diagonal, whose P is taken as ``p0``): a
    function of P and the exaggeration alone, made once per exaggeration (one power of ``P`` per
    entry, the largest share of :func:`ab_stored`'s time when it made them every evaluation)."""
    n = indptr.shape[0] - 1
    f, eps = prm[F], prm[EPS]
    floor, p0, e_p, t0 = _p_term_params(branch, prm)
    blocks = min(CHUNKS, n)
    for blk in prange(blocks):
        for i in range(blk * n // blocks, (blk + 1) * n // blocks):
            lo = indptr[i]
            m = indptr[i + 1] - lo
            dp = out[lo:lo + m]
            for e in range(m):
                p = f * data[lo + e]
                dp[e] = p0 if indices[lo + e] == i else (max(p, eps) if floor else p)
            if branch == ZERO:
                vlog(dp, dp, m)
            else:
                vpower(dp, e_p, m)
                if branch == ALPHA0:
                    for e in range(m):
                        dp[e] = max(dp[e], eps)
                    vlog(dp, dp, m)
            for e in range(m):
                dp[e] -= t0


@njit(parallel=True, cache=True, error_model="numpy")
def ab_stored(indptr, indices, D, Y, branch, wk, prm, want_cost, cc, ds, F_out):
    """Per row ``i`` over its stored entries (a diagonal entry adds nothing), the differences between
    the pair's terms at ``P_ij`` and at ``P = 0`` (floored as the branch floors it): ``cc[i]`` of
    the cost terms (with ``want_cost``), ``ds[i]`` of the branch's share of ``S`` and
    ``F_out[i] = sum_j (kk_ij - kk0_ij) (y_i - y_j)`` of the stiffness ``kk = c g A``
    (``prm``: :mod:`.exact_ab_kernels`' parameters, ``1 / Z`` filled in; ``D`` the P terms of
    :func:`ab_p_terms`).

    Each branch's difference is taken in closed form, the terms of ``q`` alone cancelling: with
    ``D`` the difference of P's term, ``A`` differs by ``D (Q^b + ob)`` (general; ``Q^b`` in its
    split form), ``D`` (``absneb0``, whose share of ``S`` is ``Q^a``: no difference), ``D / Q^a``
    (``absneamb``), ``Q^b D`` (``absnea0``) or ``D`` (``absne00``). At most one power of ``q`` per
    entry, a row at a time in vectorised passes (the exact engine's row function
    :func:`.exact_ab_kernels.row_ab` twice took six)."""
    n, k = Y.shape
    eps, inv_z = prm[EPS], prm[INV_Z]
    a, b, ob = prm[ALPHA], prm[BETA], prm[OB]
    gauss = wk == GAUSSIAN_KERNEL
    scale = 4.0 / b if branch == ALPHA0 else (4.0 if branch == ZERO else 4.0 / a)
    log_eps = log1(eps)
    # the Gaussian's general branch reads q only as q^b: from log q, without exp and log
    log_q_direct = branch == GENERAL and gauss
    log_inv_z = log1(inv_z)
    width = widest_row(indptr)
    blocks = min(CHUNKS, n)
    for blk in prange(blocks):
        d0 = np.empty(width)
        d1 = np.empty(width)
        d2 = np.empty(width)
        x = np.empty(width)
        g = np.empty(width)
        q = np.empty(width)
        qt = np.empty(width)
        if log_q_direct:
            g[:] = 1.0
        for i in range(blk * n // blocks, (blk + 1) * n // blocks):
            lo = indptr[i]
            m = gather_row(indptr, indices, Y, i, d0, d1, d2, x)
            dp = D[lo:lo + m]
            # the terms of q: A's difference into x, the cost's into qt
            if log_q_direct:  # q^b (less 1 where split) into qt; g = 1 (set per block)
                gauss_q_power(x, qt, b, ob != 0.0, log_inv_z, log_eps, m)
            else:
                row_q(gauss, inv_z, eps, x, g, q, m)
            if branch == GENERAL:
                if not log_q_direct:
                    vpow_part(q, b, ob != 0.0, qt, x, m)  # x: scratch (overwritten next)
                for e in range(m):
                    x[e] = dp[e] * (qt[e] + ob)
                if want_cost:
                    for e in range(m):
                        qt[e] = -dp[e] * qt[e] / (a * b)
            elif branch == BETA0:
                if want_cost:
                    for e in range(m):
                        qt[e] = q[e]
                    vpower(qt, a, m)
                    vlog(qt, qt, m)
                    for e in range(m):
                        qt[e] = -dp[e] * qt[e] / (a * a)
                for e in range(m):
                    x[e] = dp[e]
            elif branch == LAMBDA0:
                for e in range(m):
                    qt[e] = q[e]
                vpower(qt, a, m)
                for e in range(m):
                    r = dp[e] / qt[e] if qt[e] > 0.0 else dp[e]
                    x[e] = r
                    qt[e] = r / (a * a)
            elif branch == ALPHA0:
                for e in range(m):
                    qt[e] = q[e]
                vpower(qt, b, m)
                for e in range(m):
                    v = qt[e] * dp[e]
                    x[e] = v
                    qt[e] = -v / (b * b)
            else:
                if want_cost:
                    vlog(q, qt, m)
                    for e in range(m):
                        qt[e] = 0.5 * dp[e] * (dp[e] + 2.0 * (log_eps - qt[e]))
                for e in range(m):
                    x[e] = dp[e]
            c = 0.0
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for e in range(m):
                dk = scale * g[e] * x[e]
                if want_cost:
                    c += qt[e]
                a0 += dk * d0[e]
                a1 += dk * d1[e]
                a2 += dk * d2[e]
            cc[i] = c
            ds[i] = 0.0 if branch == BETA0 else pairwise_sum(x, m)
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
