"""Numba kernels of the fused exact engine for KL(P || Q) beyond the symmetric case of
:mod:`.exact_kernels` (compiled on first use and cached on disk): any P (not necessarily
symmetric), Q normalised over the whole matrix or per row, optional per-point output
precisions ``beta`` and optional per-point output weights ``u`` (weighted t-SNE's degrees).

.. math::
    w_{ij} = u_i u_j\\, w(\\beta_i d^2_{ij}), \\quad g_{ij} = \\beta_i\\, g(\\beta_i d^2_{ij}),
    \\quad q_{ij} = w_{ij} / Z_i,
    \\quad Z_i = \\textstyle\\sum_j w_{ij} \\ (\\text{row}) \\text{ or }
    Z_i = \\sum_{kl} w_{kl} \\ (\\text{matrix})

(``beta = 1`` without precisions, ``u = 1`` without weights; ``g = -d log w / d d^2`` is the
kernel's, the constant ``u_i u_j`` drops out of it). The dense force form's stiffness
``K = 2 (fP - Q) o g + [2 (fP - Q) o g]^T`` is symmetric, so a pair ``i < j``, visited once, adds
``K_ij (y_i - y_j)`` to point i and its opposite to point j, with

.. math:: K_{ij} = 2 [(f P_{ij} - q_{ij}) g_{ij} + (f P_{ji} - q_{ji}) g_{ji}]

Per-point costs are the dense engine's: the constant ``sum_i Pc_ij log Pc_ij`` (column sums,
``Pc = max(fP, eps)``) less the cross terms ``xlogy(fP, Q)`` summed by rows (row-normalised Q)
or by columns (matrix-normalised Q).

Two passes with the chunking of :mod:`.exact_kernels` (fixed chunks, per-chunk buffers added in
chunk order; the numbers do not depend on the number of threads): the row sums of W (a pair adds
``w_ij`` to row i and ``w_ji`` to row j), then the forces and costs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .exact_kernels import _row_d2, add_pair_forces, clear_chunk, reduce_chunks
from .output_kernel_dispatch import row_weights_grads

# columns per block of plogp_cols (contiguous reads of each row's block)
_COL_BLOCK = 64


@njit(cache=True, error_model="numpy")
def _row_weights(code, kp, scale, per_pair, d2, w, g, m):
    """``w[j] = w(s_j d2[j])`` and ``g[j] = s_j g(s_j d2[j])`` for ``j < m``, with ``s_j =
    scale[j]`` (``per_pair``) or ``scale[0]``; ``kp``: the kernel parameters
    (:func:`.exact_kernels.kernel_params`)."""
    if not per_pair and scale[0] == 1.0:
        row_weights_grads(code, kp, d2, w, g, m)
        return
    x = g  # the scaled distances, then the gradient factors
    for j in range(m):
        x[j] = (scale[j] if per_pair else scale[0]) * d2[j]
    row_weights_grads(code, kp, x, w, g, m)
    for j in range(m):
        g[j] *= scale[j] if per_pair else scale[0]


@njit(cache=True, error_model="numpy")
def _times_point_weights(u, i, w, m):
    """``w[j] *= u_i u_j`` for the pairs ``(i, i + 1 + j)``, ``j < m`` (the pair's importance)."""
    ui = u[i]
    ut = u[i + 1:]
    for j in range(m):
        w[j] *= ui * ut[j]


@njit(parallel=True, cache=True, error_model="numpy")
def weight_rows(Yt, code, kp, beta, u, bounds, d2_scratch, w_scratch, g_scratch, cbuf, Z):
    """``Z[i] = sum_j w_ij`` (n,); ``beta``: the per-point precisions (n,), or empty for none;
    ``u``: the per-point output weights (n,) (``w_ij`` times ``u_i u_j``), or empty for none.
    Scratch: ``*_scratch`` and ``cbuf`` (chunks, n)."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    scaled = beta.shape[0] > 0
    weighted = u.shape[0] > 0
    one = np.ones(1)
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, w, g = d2_scratch[c], w_scratch[c], g_scratch[c]
        cbuf[c, lo:] = 0.0
        for i in range(lo, hi):
            m = n - i - 1
            _row_d2(Yt, i, d2)
            _row_weights(code, kp, beta[i:i + 1] if scaled else one, False, d2, w, g, m)
            if weighted:
                _times_point_weights(u, i, w, m)
            cb = cbuf[c, i + 1:]
            if scaled:  # w_ji = w(beta_j d2_ij)
                cbuf[c, i] += pairwise_sum(w, m)
                _row_weights(code, kp, beta[i + 1:], True, d2, w, g, m)
                if weighted:
                    _times_point_weights(u, i, w, m)
                for j in range(m):
                    cb[j] += w[j]
            else:
                for j in range(m):
                    cb[j] += w[j]
                cbuf[c, i] += pairwise_sum(w, m)
    reduce_chunks(bounds, np.empty((0, 0, 0)), cbuf, False, True, np.empty((0, 0)), Z)


@njit(cache=True, error_model="numpy")
def _pair_row(prow, pcol, f, fg, clamp, eps, by_row, zi, zt, wa, ga, wb, gb, qa, qb, kk, m,
              want_grad, want_cost, terms, cb):
    """Row ``i``'s pairs ``(i, i + 1 + j)``, ``j < m``: ``q_ij``, ``q_ji`` into ``qa``, ``qb``; with
    ``want_grad`` the stiffness ``kk``; with ``want_cost`` the cross terms of point i into
    ``terms`` and those of the points after it added to ``cb``. ``prow`` = P[i, i+1:], ``pcol`` =
    P[i+1:, i] (a row of P's transpose, or the strided column itself)."""
    for j in range(m):
        qij = wa[j] * zi
        qji = wb[j] * zt[j]
        if clamp and qij < eps:
            qij = eps
        if clamp and qji < eps:
            qji = eps
        qa[j] = qij
        qb[j] = qji
        if want_grad:
            kk[j] = 2.0 * ((fg * prow[j] - qij) * ga[j] + (fg * pcol[j] - qji) * gb[j])
    if want_cost:
        for j in range(m):
            pij = f * prow[j]
            pji = f * pcol[j]
            vij = 0.0
            vji = 0.0
            if pij != 0.0 or qa[j] != qa[j]:  # xlogy(0, q) = 0 (NaN stays NaN)
                vij = pij * math.log(qa[j])
            if pji != 0.0 or qb[j] != qb[j]:
                vji = pji * math.log(qb[j])
            if by_row:  # point i gets P_ij log q_ij, point j gets P_ji log q_ji
                terms[j] = vij
                cb[j] += vji
            else:  # by columns: the other way round
                terms[j] = vji
                cb[j] += vij


@njit(parallel=True, cache=True, error_model="numpy")
def kl_pair_terms(P, PT, Yt, f, fg, code, kp, clamp, eps, by_row, inv_z, beta, u, bounds,
                  want_cost, want_grad, d2_scratch, wa_scratch, ga_scratch, wb_scratch,
                  gb_scratch, qa_scratch, qb_scratch, k_scratch, gbuf, cbuf, G, cross):
    """Per-pair pass: ``G`` (n, k) the gradient ``sum_j K_ij (y_i - y_j)`` (with ``fg P``) and
    ``cross`` (n,) the sums of ``xlogy(f P, Q)`` by rows (``by_row``) or by columns.

    ``PT``: P's transpose, C-ordered (P itself when P is symmetric), so that ``P[i + 1:, i]`` is
    read as a contiguous row; an empty (0, 0) array reads P's columns with a stride (slow for
    large n: every entry on its own cache line). ``inv_z`` (n,): ``1 / Z_i``; ``beta`` (n,) the
    per-point precisions or empty; ``u`` (n,) the per-point output weights or empty; ``kp``: the
    kernel parameters; ``clamp``: Q floored at ``eps``. Scratch: ``*_scratch`` (chunks, n);
    ``gbuf`` (chunks, k, n) and ``cbuf`` (chunks, n) hold each chunk's partial sums.
    """
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    scaled = beta.shape[0] > 0
    weighted = u.shape[0] > 0
    transposed = PT.shape[0] == n
    one = np.ones(1)
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, kk = d2_scratch[c], k_scratch[c]
        wa, ga, qa, qb = wa_scratch[c], ga_scratch[c], qa_scratch[c], qb_scratch[c]
        wb, gb = wb_scratch[c], gb_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, k, want_grad, want_cost)
        for i in range(lo, hi):
            m = n - i - 1
            _row_d2(Yt, i, d2)
            if scaled:  # w_ij = w(beta_i d2), w_ji = w(beta_j d2)
                _row_weights(code, kp, beta[i:i + 1], False, d2, wa, ga, m)
                _row_weights(code, kp, beta[i + 1:], True, d2, wb, gb, m)
                if weighted:
                    _times_point_weights(u, i, wa, m)
                    _times_point_weights(u, i, wb, m)
            else:
                _row_weights(code, kp, one, False, d2, wa, ga, m)
                if weighted:
                    _times_point_weights(u, i, wa, m)
                wb, gb = wa, ga
            cb = cbuf[c, i + 1:]
            # d2 is free from here: the cost terms' scratch, then the forces'
            if transposed:
                _pair_row(P[i, i + 1:], PT[i, i + 1:], f, fg, clamp, eps, by_row, inv_z[i],
                          inv_z[i + 1:], wa, ga, wb, gb, qa, qb, kk, m, want_grad, want_cost,
                          d2, cb)
            else:
                _pair_row(P[i, i + 1:], P[i + 1:, i], f, fg, clamp, eps, by_row, inv_z[i],
                          inv_z[i + 1:], wa, ga, wb, gb, qa, qb, kk, m, want_grad, want_cost,
                          d2, cb)
            if want_cost:
                cbuf[c, i] += pairwise_sum(d2, m)
            if want_grad:
                add_pair_forces(Yt, i, kk, gbuf[c], m, d2)
    reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, G, cross)


@njit(parallel=True, cache=True, error_model="numpy")
def plogp_cols(P, f, eps):
    """Column sums of ``Pc log Pc`` with ``Pc = max(f P, eps)`` (blocks of columns in parallel,
    each summed in row order)."""
    n = P.shape[0]
    out = np.empty(n)
    blocks = (n + _COL_BLOCK - 1) // _COL_BLOCK
    for b in prange(blocks):
        lo = b * _COL_BLOCK
        hi = min(n, lo + _COL_BLOCK)
        acc = np.zeros(hi - lo)
        for i in range(n):
            row = P[i, lo:hi]
            for j in range(hi - lo):
                pc = f * row[j]
                if pc < eps:
                    pc = eps
                acc[j] += pc * math.log(pc)
        out[lo:hi] = acc
    return out
