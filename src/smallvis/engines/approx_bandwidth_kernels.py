"""Numba kernels of the per-point output bandwidths on the Barnes-Hut engine
(:mod:`.approx_bandwidth`; compiled on first use and cached on disk): the output kernel
evaluated at ``beta d2`` with the precision ``beta`` of each source point (:func:`beta_nodes`,
:func:`source_sums`; the query point's is :func:`.bh_radial_kernels.radial_sums` with ``beta``), and
the terms over the stored entries of a sparse P (:func:`stored_attraction`, :func:`stored_cross`).

Every point's sums are sequential over the same preordered tree (:func:`.bh_kernels.preorder`) in
the same order, and rows of P are independent, so the results do not depend on the number of
threads. Coordinates are at most three, held in registers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .bh_kernels import moments, second_moments
from .bh_radial_kernels import H_REL, taylor
from .radial_kernels import grad_factor, log_weight, radial, weight as radial_weight


@njit(cache=True, error_model="numpy")
def beta_nodes(Y, node, skip, order, c, logb):
    """The preordered tree (``node``, ``skip``, ``order`` of :func:`.bh_kernels.preorder`) with
    the sources' charges ``c`` (n,, >= 0) and log-precisions ``logb`` (n,): rows of
    ``k + 5 + k (k + 1) / 2``, the charge-weighted centre (k; a leaf keeps its location), the
    charge, the squared side, the charge-weighted mean and standard deviation of ``log beta``, the
    number of points, the charge-weighted second moments about the centre
    (:func:`.bh_kernels.second_moments`). Also
    ``first`` (m,): where a leaf's points start in ``order`` (its points are the next ones)."""
    m = skip.shape[0]
    k = Y.shape[1]
    out = np.zeros((m, k + 5 + k * (k + 1) // 2))
    cy = np.zeros((m, k))
    mom = np.zeros((m, 3))  # charge, charge log b, charge (log b)^2
    first = np.zeros(m, dtype=np.int64)
    t = 0
    for p in range(m):
        if skip[p] == p + 1:
            first[p] = t
            for e in range(t, t + int(node[p, k])):
                i = order[e]
                mom[p, 0] += c[i]
                mom[p, 1] += c[i] * logb[i]
                mom[p, 2] += c[i] * logb[i] * logb[i]
                for d in range(k):
                    cy[p, d] += c[i] * Y[i, d]
            t += int(node[p, k])
    for p in range(m - 1, -1, -1):
        if skip[p] != p + 1:
            q = p + 1
            while q < skip[p]:
                for s in range(3):
                    mom[p, s] += mom[q, s]
                for d in range(k):
                    cy[p, d] += cy[q, d]
                q = skip[q]
    for p in range(m):
        ch = mom[p, 0]
        for d in range(k):
            out[p, d] = cy[p, d] / ch if ch > 0.0 and skip[p] != p + 1 else node[p, d]
        out[p, k] = ch
        out[p, k + 1] = node[p, k + 1]
        if ch > 0.0:
            mean = mom[p, 1] / ch
            var = mom[p, 2] / ch - mean * mean
            out[p, k + 2] = mean
            out[p, k + 3] = math.sqrt(var) if var > 0.0 else 0.0
        out[p, k + 4] = node[p, k]
    second_moments(out, skip, k, k + 5)
    return out, first


@njit(parallel=True, cache=True, error_model="numpy")
def source_sums(Y, bnode, skip, order, first, theta, eps, tol, code, kp, fn, c, beta, quad, V):
    """``V[i] = sum_{j != i} c_j beta_j fn(beta_j d2_ij) (y_i - y_j)`` at the sources' precisions
    (:func:`beta_nodes`' tree). Leaves are summed point by point with each point's own precision
    and location (exact but for the ``eps`` in ``d2``); a cell summarised from afar contributes its
    charge ``C`` at its centre as two half charges at the precisions ``exp(mu +- sigma)`` (``mu``,
    ``sigma`` the mean and deviation of its sources' ``log beta``: their first two moments kept);
    a leaf within ``tol`` of ``y_i`` (the point itself, duplicates) is skipped. With ``quad`` each
    half charge also carries half the cell's second moment ``M`` (its quadrupole terms,
    :func:`.bh_radial_kernels.radial_sums`, for ``psi(d2) = b fn(b d2)``)."""
    n, k = Y.shape
    m = skip.shape[0]
    theta2 = theta * theta
    for t in prange(n):
        i = order[t]
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        p = 0
        while p < m:
            nxt = skip[p]
            rec = bnode[p]
            e0 = y0 - rec[0]
            e1 = y1 - rec[1] if k > 1 else 0.0
            e2 = y2 - rec[2] if k > 2 else 0.0
            d2 = eps + (e0 * e0 + e1 * e1 + e2 * e2)
            if nxt == p + 1:
                if not (abs(e0) < tol and abs(e1) < tol and abs(e2) < tol):
                    for u in range(first[p], first[p] + int(rec[k + 4])):
                        j = order[u]
                        f0 = y0 - Y[j, 0]
                        f1 = y1 - Y[j, 1] if k > 1 else 0.0
                        f2 = y2 - Y[j, 2] if k > 2 else 0.0
                        bj = beta[j]
                        x = bj * (eps + (f0 * f0 + f1 * f1 + f2 * f2))
                        f = c[j] * bj * radial(fn, code, kp, 0.0, x)
                        a0 += f * f0
                        a1 += f * f1
                        a2 += f * f2
                p = nxt
                continue
            if not rec[k + 1] < theta2 * d2:
                p += 1
                continue
            if rec[k] > 0.0 and quad:
                m00, m01, m02, m11, m12, m22 = moments(rec, k, k + 5)
                q0 = m00 * e0 + m01 * e1 + m02 * e2
                q1 = m01 * e0 + m11 * e1 + m12 * e2
                q2 = m02 * e0 + m12 * e1 + m22 * e2
                tr = m00 + m11 + m22
                rmr2 = 2.0 * (e0 * q0 + e1 * q1 + e2 * q2)
                for sign in (1.0, -1.0):
                    b = math.exp(rec[k + 2] + sign * rec[k + 3])
                    x = b * d2
                    h = H_REL * x
                    f, g1, g2 = taylor(fn, code, kp, 0.0, x, h, radial_weight(code, kp, x),
                                       radial_weight(code, kp, x + h),
                                       radial_weight(code, kp, x - h), b)
                    f = 0.5 * b * (rec[k] * f + g1 * tr + g2 * rmr2)
                    g1 *= b
                    a0 += f * e0 + g1 * q0
                    a1 += f * e1 + g1 * q1
                    a2 += f * e2 + g1 * q2
            elif rec[k] > 0.0:
                hi = math.exp(rec[k + 2] + rec[k + 3])
                lo = math.exp(rec[k + 2] - rec[k + 3])
                f = 0.5 * rec[k] * (hi * radial(fn, code, kp, 0.0, hi * d2)
                                    + lo * radial(fn, code, kp, 0.0, lo * d2))
                a0 += f * e0
                a1 += f * e1
                a2 += f * e2
            p = nxt
        V[i, 0] = a0
        if k > 1:
            V[i, 1] = a1
        if k > 2:
            V[i, 2] = a2


@njit(parallel=True, cache=True, error_model="numpy")
def stored_attraction(indptr, indices, data, Y, code, kp, beta, own, A):
    """``A[i] = sum_j P_ij s g(s d2_ij) (y_i - y_j)`` over the stored entries of row ``i``, with
    ``s = beta_i`` (``own``) or ``beta_j``."""
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
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            s = beta[i] if own else beta[j]
            x = s * (e0 * e0 + e1 * e1 + e2 * e2)
            pg = data[e] * s * grad_factor(code, kp, x, radial_weight(code, kp, x))
            a0 += pg * e0
            a1 += pg * e1
            a2 += pg * e2
        A[i, 0] = a0
        if k > 1:
            A[i, 1] = a1
        if k > 2:
            A[i, 2] = a2


@njit(parallel=True, cache=True, error_model="numpy")
def stored_cross(indptr, indices, data, Y, code, kp, beta, own, log_z, clamp, eps, cross):
    """``cross[i] = sum_j P_ij log q`` over the stored entries of row ``i`` (``P_ij > 0``), with
    ``log q = log w(s d2_ij) - log Z`` (``s = beta_i`` where ``own``, else ``beta_j``; ``log_z``:
    ``log Z`` (1,) or ``log Z_i`` (n,)) floored at ``log eps`` with ``clamp``."""
    n, k = Y.shape
    log_eps = math.log(eps)
    per_row = log_z.shape[0] > 1
    for i in prange(n):
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        lz = log_z[i] if per_row else log_z[0]
        acc = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            if data[e] == 0.0:
                continue
            j = indices[e]
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            s = beta[i] if own else beta[j]
            x = s * (e0 * e0 + e1 * e1 + e2 * e2)
            lq = log_weight(code, kp, x, 0.0) - lz
            if clamp and lq < log_eps:
                lq = log_eps
            acc += data[e] * lq
        cross[i] = acc
