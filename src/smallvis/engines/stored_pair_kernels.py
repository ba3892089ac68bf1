"""Numba kernels of the approximate engines over the stored entries of a sparse P (CSR: ``indptr``,
``indices``, ``data``), for any output kernel of :mod:`.radial_kernels` (compiled on first use and
cached on disk): the exact, pair-local half of every cost these engines serve. The kernels are the
radial declarations of :mod:`smallvis.methods.output_kernels` (a new one needs no edit here).

Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads. Coordinates are at most three (the engines' limit), held in registers.
"""

from __future__ import annotations

import math

from numba import prange

from .._util.jit import njit
from .output_kernel_functions import (GAUSSIAN_KERNEL, T_KERNEL, gaussian_grad, t_grad,
                                      t_weight)
from .radial_kernels import grad_factor, log_weight, weight

# the f-divergences of :func:`fdiv_stored`
RKL, JS, CHI2, HELLINGER = 0, 1, 2, 3


@njit(parallel=True, cache=True, error_model="numpy")
def attraction(indptr, indices, data, Y, code, kp, A):
    """``A[i] = sum_j P_ij g_ij (y_i - y_j)`` over the stored entries of row ``i``, with ``g`` the
    kernel's gradient factor. The Student-t and Gaussian kernels have their own loops (the same
    arithmetic: the Gaussian's ``g = 1`` needs no weight; the generic loop, 2x and 4x slower at
    70,000 points, computes it)."""
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
        elif code == GAUSSIAN_KERNEL:
            for e in range(indptr[i], indptr[i + 1]):
                j = indices[e]
                e0 = y0 - Y[j, 0]
                e1 = y1 - Y[j, 1] if k > 1 else 0.0
                e2 = y2 - Y[j, 2] if k > 2 else 0.0
                pg = data[e] * gaussian_grad(0.0, 0.0)
                a0 += pg * e0
                a1 += pg * e1
                a2 += pg * e2
        else:
            for e in range(indptr[i], indptr[i + 1]):
                j = indices[e]
                e0 = y0 - Y[j, 0]
                e1 = y1 - Y[j, 1] if k > 1 else 0.0
                e2 = y2 - Y[j, 2] if k > 2 else 0.0
                d2 = e0 * e0 + e1 * e1 + e2 * e2
                pg = data[e] * grad_factor(code, kp, d2, weight(code, kp, d2))
                a0 += pg * e0
                a1 += pg * e1
                a2 += pg * e2
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
def fdiv_stored(div, indptr, indices, data, Y, f, Z, eps, cost, total, F):
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

    ``dy = y_i - y_j``.
    """
    n, k = Y.shape
    log_eps = math.log(eps)
    log2 = math.log(2.0)
    inv_z = 1.0 / Z
    for i in prange(n):
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        c = 0.0
        t = 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            w = 1.0 / (1.0 + (e0 * e0 + e1 * e1 + e2 * e2))
            q = w * inv_z
            p = f * data[e]
            if div == RKL:
                lp = math.log(p) if p > eps else log_eps
                v = q * (log_eps - lp)
                c += v
                t += v
                fk = w * w * (lp - log_eps)
            elif div == JS:
                m = 0.5 * (p + q)
                el = math.log(q / m) - log2
                pc = p if p > eps else eps
                c += 0.5 * (pc * math.log(pc) - (p * math.log(m) if p != 0.0 else 0.0) + q * el)
                t += q * el
                fk = w * w * el
            elif div == CHI2:
                r = p * p / q
                c += (p - q) * (p - q) / q - q
                t += r
                fk = w * r
            else:
                s = math.sqrt(p * q)
                c += (math.sqrt(p) - math.sqrt(q)) ** 2 - q
                t += s
                fk = w * s
            a0 += fk * e0
            a1 += fk * e1
            a2 += fk * e2
        cost[i] = c
        total[i] = t
        F[i, 0] = a0
        if k > 1:
            F[i, 1] = a1
        if k > 2:
            F[i, 2] = a2
