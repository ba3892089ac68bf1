"""Numba kernels of the approximate engines over the stored entries of a sparse P (CSR: ``indptr``,
``indices``, ``data``), for any output kernel of :mod:`.radial_kernels` (compiled on first use and
cached on disk): the exact, pair-local half of every cost these engines serve. The kernels are the
radial declarations of :mod:`smallvis.methods.output_kernels` (a new one needs no edit here).

Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads. Coordinates are at most three (the engines' limit), held in registers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.vmath import vlog, vpow_pos
from .csr_row_kernels import gather_row, widest_row
from .output_kernel_functions import (GAUSSIAN_KERNEL, HEAVY_TAILED_KERNEL, KP_A, KP_ALPHA, KP_B,
                                      KP_DOF, KP_GR_EPS, POWER_HEAVY_KERNEL, T_KERNEL, TDOF_KERNEL,
                                      UMAP_KERNEL, gaussian_grad, heavy_tailed_grad, power,
                                      t_grad, t_weight, tdof_grad)
from .radial_kernels import grad_factor, log_weight, weight

# the f-divergences of :func:`fdiv_stored`
RKL, JS, CHI2, HELLINGER = 0, 1, 2, 3
CHUNKS = 256  # rows are cut into this many blocks (scratch made once per block), any thread count


@njit(cache=True, error_model="numpy")
def attraction(indptr, indices, data, Y, code, kp, A):
    """``A[i] = sum_j P_ij g_ij (y_i - y_j)`` over the stored entries of row ``i``, with ``g`` the
    kernel's gradient factor. The Student-t and Gaussian kernels have their own loop (their ``g``
    costs a division or nothing); the others compute ``g`` a row at a time in vectorised passes
    (:func:`row_grads`)."""
    if code == T_KERNEL or code == GAUSSIAN_KERNEL:
        _attraction_cheap(indptr, indices, data, Y, code, A)
    else:
        _attraction_rows(indptr, indices, data, Y, code, kp, A)


@njit(parallel=True, cache=True, error_model="numpy")
def _attraction_cheap(indptr, indices, data, Y, code, A):
    """:func:`attraction` for the Student-t (``g = w``) and Gaussian (``g = 1``) kernels."""
    n, k = Y.shape
    for i in prange(n):
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        if code == T_KERNEL:
            for e in range(indptr[i], indptr[i + 1]):
                j = indices[e]
                e0 = y0 - Y[j, 0]
                e1 = y1 - Y[j, 1] if k > 1 else 0.0
                e2 = y2 - Y[j, 2] if k > 2 else 0.0
                pg = data[e] * t_grad(0.0, t_weight(e0 * e0 + e1 * e1 + e2 * e2))
                a0 += pg * e0
                a1 += pg * e1
                a2 += pg * e2
        else:
            for e in range(indptr[i], indptr[i + 1]):
                j = indices[e]
                e0 = y0 - Y[j, 0]
                e1 = y1 - Y[j, 1] if k > 1 else 0.0
                e2 = y2 - Y[j, 2] if k > 2 else 0.0
                pg = data[e] * gaussian_grad(0.0, 0.0)
                a0 += pg * e0
                a1 += pg * e1
                a2 += pg * e2
        A[i, 0] = a0
        if k > 1:
            A[i, 1] = a1
        if k > 2:
            A[i, 2] = a2


@njit(cache=True, error_model="numpy")
def row_grads(code, kp, x, g, m):
    """``g[j]`` the gradient factor of the kernel ``code`` at the squared distance ``x[j]``, for
    ``j < m`` (distinct arrays), in loops LLVM vectorises (:mod:`smallvis._util.vmath`). The
    factors that need no weight (heavy-tailed ``1 / (1 + alpha x)``, Student-t with ``dof``) skip
    it; UMAP's curve computes its weight with :func:`.output_kernel_functions.power`'s bits (0 where
    ``x + gr_eps <= 0``, as :func:`.radial_kernels.grad_factor`); the power form's ``g = w^b`` is
    ``(alpha x + 1)^(-b / alpha)`` from one ``log`` and one ``exp`` (the last bits differ from
    ``power(w, b)``). Other kernels: :func:`.radial_kernels.grad_factor` one entry at a time."""
    if code == HEAVY_TAILED_KERNEL:
        alpha = kp[KP_ALPHA]
        for j in range(m):
            g[j] = heavy_tailed_grad(x[j], 0.0, alpha)
    elif code == TDOF_KERNEL:
        dof = kp[KP_DOF]
        for j in range(m):
            g[j] = tdof_grad(x[j], 0.0, dof)
    elif code == POWER_HEAVY_KERNEL:
        alpha = kp[KP_ALPHA]
        for j in range(m):
            g[j] = alpha * x[j] + 1.0
        vpow_pos(g, -kp[KP_B] / alpha, g, m)
    elif code == UMAP_KERNEL:
        a, b, gr_eps = kp[KP_A], kp[KP_B], kp[KP_GR_EPS]
        for j in range(m):
            g[j] = max(x[j], 0.0)
        if b == 1.0 or b == 2.0 or b == 0.5 or b == -1.0:
            for j in range(m):
                g[j] = power(g[j], b)
        else:
            vpow_pos(g, b, g, m)
        for j in range(m):
            xj = max(x[j], 0.0)
            w = 1.0 / (1.0 + a * g[j])
            g[j] = b * (1.0 - w) / (xj + gr_eps) if xj + gr_eps > 0.0 else 0.0
    else:
        for j in range(m):
            g[j] = grad_factor(code, kp, x[j], weight(code, kp, x[j]))


@njit(parallel=True, cache=True, error_model="numpy")
def _attraction_rows(indptr, indices, data, Y, code, kp, A):
    """:func:`attraction` for the other kernels: per row, the offsets and squared distances of its
    stored entries into scratch, the gradient factors in one pass over them (:func:`row_grads`),
    then the sum in the stored order. Rows are cut into ``CHUNKS`` blocks (scratch made once per
    block) whatever the thread count."""
    n, k = Y.shape
    width = widest_row(indptr)
    blocks = min(CHUNKS, n)
    for blk in prange(blocks):
        d0 = np.empty(width)
        d1 = np.empty(width)
        d2 = np.empty(width)
        x = np.empty(width)
        g = np.empty(width)
        for i in range(blk * n // blocks, (blk + 1) * n // blocks):
            lo = indptr[i]
            m = gather_row(indptr, indices, Y, i, d0, d1, d2, x)
            row_grads(code, kp, x, g, m)
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for e in range(m):
                pg = data[lo + e] * g[e]
                a0 += pg * d0[e]
                a1 += pg * d1[e]
                a2 += pg * d2[e]
            A[i, 0] = a0
            if k > 1:
                A[i, 1] = a1
            if k > 2:
                A[i, 2] = a2


@njit(parallel=True, cache=True, error_model="numpy")
def kl_cost(indptr, indices, data, Y, code, kp, u, log_z, clamp, eps, cross):
    """``cross[i] = sum_j P_ij log q_ij`` over the stored entries of row ``i`` (``P_ij > 0``), with
    ``q = u_i u_j w / Z_i`` (``u`` empty: 1; ``log_z``: ``log Z`` (1,) or ``log Z_i`` (n,))
    floored at ``eps`` with ``clamp``."""
    n, k = Y.shape
    weighted = u.shape[0] > 0
    log_eps = math.log(eps)
    per_row = log_z.shape[0] > 1
    for i in prange(n):
        lz = log_z[i] if per_row else log_z[0]
        sc = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            p = data[e]
            if p <= 0.0:
                continue
            j = indices[e]
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            lq = log_weight(code, kp, d2, weight(code, kp, d2)) - lz
            if weighted:
                lq += math.log(u[i] * u[j])
            if clamp and lq < log_eps:
                lq = log_eps
            sc += p * lq
        cross[i] = sc


@njit(parallel=True, cache=True, error_model="numpy")
def rkl_log_p(data, f, eps, out):
    """``log Pc`` of every stored entry (``Pc = f P_ij``; ``log eps`` where ``Pc <= eps``): the
    term of :func:`fdiv_stored`'s ``RKL`` that depends on P alone (made once per exaggeration)."""
    log_eps = math.log(eps)
    for e in prange(data.shape[0]):
        p = f * data[e]
        out[e] = math.log(p) if p > eps else log_eps


@njit(parallel=True, cache=True, error_model="numpy")
def fdiv_stored(div, indptr, indices, data, log_p, Y, f, Z, eps, want_cost, cost, total, F):
    """The stored entries' part of an f-divergence between ``p = f P`` and the Student-t
    ``q = w / Z`` (:mod:`.approx_terms` puts the pieces together), per row ``i``:

    - ``RKL``: ``cost = total = sum q (log eps - log Pc)``, ``F = sum w^2 (log Pc - log eps) dy``
      (``Pc = max(p, eps)``: the pairs P does not store count as ``Pc = eps``);
    - ``JS``: with ``M = (p + q) / 2``, ``L = log(q / M)``:
      ``cost = sum [Pc log Pc - p log M + q (L - log 2)] / 2``, ``total = sum q (L - log 2)``,
      ``F = sum w^2 (L - log 2) dy``;
    - ``CHI2``: ``cost = sum (p - q)^2 / q - q``, ``total = sum p^2 / q``, ``F = sum w p^2 / q dy``;
    - ``HELLINGER``: ``cost = sum (sqrt p - sqrt q)^2 - q``, ``total = sum sqrt(p q)``,
      ``F = sum w sqrt(p q) dy``;

    ``dy = y_i - y_j``; ``log_p``: :func:`rkl_log_p` at ``f`` (``RKL``; others: unread). Without
    ``want_cost`` the ``cost`` of JS, CHI2 and HELLINGER is not computed (0; RKL's always is: its
    gradient reads it). JS's logarithms, CHI2's ``p^2 / q`` and HELLINGER's ``sqrt(p q)`` are
    taken a row at a time in vectorised passes (:mod:`smallvis._util.vmath`), then each
    divergence's sums in one loop of its own; rows are cut into ``CHUNKS`` blocks (scratch made
    once per block) whatever the thread count.
    """
    n, k = Y.shape
    log_eps = math.log(eps)
    log2 = math.log(2.0)
    inv_z = 1.0 / Z
    width = widest_row(indptr)
    blocks = min(CHUNKS, n)
    for blk in prange(blocks):
        d0 = np.empty(width)
        d1 = np.empty(width)
        d2 = np.empty(width)
        ws = np.empty(width)
        ls = np.empty(width)
        ms = np.empty(width)
        for i in range(blk * n // blocks, (blk + 1) * n // blocks):
            lo = indptr[i]
            m = gather_row(indptr, indices, Y, i, d0, d1, d2, ws)
            for e in range(m):
                ws[e] = 1.0 / (1.0 + ws[e])
            c = 0.0
            t = 0.0
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            if div == JS:
                for e in range(m):
                    q = ws[e] * inv_z
                    ms[e] = 0.5 * (f * data[lo + e] + q)
                    ls[e] = q / ms[e]
                vlog(ls, ls, m)
                if want_cost:
                    vlog(ms, ms, m)
            elif div == CHI2:  # p^2 / q per entry, vectorised
                for e in range(m):
                    p = f * data[lo + e]
                    ls[e] = p * p / (ws[e] * inv_z)
            elif div == HELLINGER:  # sqrt(p q) per entry, vectorised
                for e in range(m):
                    ls[e] = math.sqrt(f * data[lo + e] * (ws[e] * inv_z))
            # one loop per divergence: the sums in the order of the entries
            if div == RKL:
                for e in range(m):
                    w = ws[e]
                    lp = log_p[lo + e]
                    v = w * inv_z * (log_eps - lp)
                    c += v
                    t += v
                    fk = w * w * (lp - log_eps)
                    a0 += fk * d0[e]
                    a1 += fk * d1[e]
                    a2 += fk * d2[e]
            elif div == JS:
                for e in range(m):
                    w = ws[e]
                    q = w * inv_z
                    el = ls[e] - log2
                    if want_cost:
                        p = f * data[lo + e]
                        pc = p if p > eps else eps
                        c += 0.5 * (pc * math.log(pc) - (p * ms[e] if p != 0.0 else 0.0) + q * el)
                    t += q * el
                    fk = w * w * el
                    a0 += fk * d0[e]
                    a1 += fk * d1[e]
                    a2 += fk * d2[e]
            else:  # CHI2, HELLINGER: the row pass gave p^2 / q or sqrt(p q), t's term
                for e in range(m):
                    v = ls[e]
                    t += v
                    fk = ws[e] * v
                    a0 += fk * d0[e]
                    a1 += fk * d1[e]
                    a2 += fk * d2[e]
                if want_cost:
                    for e in range(m):
                        p = f * data[lo + e]
                        q = ws[e] * inv_z
                        if div == CHI2:
                            c += (p - q) * (p - q) / q - q
                        else:
                            c += (math.sqrt(p) - math.sqrt(q)) ** 2 - q
            cost[i] = c
            total[i] = t
            F[i, 0] = a0
            if k > 1:
                F[i, 1] = a1
            if k > 2:
                F[i, 2] = a2
