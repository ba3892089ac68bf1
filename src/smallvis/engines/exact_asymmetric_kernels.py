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
from .._util.vmath import log1
from .exact_kernels import _row_d2, add_pair_forces, clear_chunk, reduce_chunks
from .exact_row_kernels import row_costly_weights, row_costly_weights_inplace
from .output_kernel_functions import T_KERNEL, t_weight

# columns per block of plogp_cols (contiguous reads of each row's block)
_COL_BLOCK = 64


@njit(cache=True, error_model="numpy")
def _row_d2_2d(Yt, i, d2, m):
    """``d2[j] = |y_i - y_(i+1+j)|^2`` for ``j < m`` in two dimensions, one loop (the bits of
    :func:`.exact_kernels._row_d2`)."""
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    for j in range(m):
        dx = a - y0[j]
        dy = b - y1[j]
        d2[j] = dx * dx + dy * dy


@njit(cache=True, error_model="numpy")
def _row_pair_d2(Yt, i, d2, m):
    """Row ``i``'s squared distances to the points after it (any dimension)."""
    if Yt.shape[0] == 2:
        _row_d2_2d(Yt, i, d2, m)
    else:
        _row_d2(Yt, i, d2)


@njit(cache=True, error_model="numpy")
def _scale_rows(bi, bt, d2, xb, m):
    """``xb[j] = bt[j] d2[j]``, then ``d2[j] *= bi`` (the arguments of ``w_ji`` and ``w_ij``;
    each loop over distinct arrays or in place, so both vectorise)."""
    for j in range(m):
        xb[j] = bt[j] * d2[j]
    for j in range(m):
        d2[j] *= bi


@njit(cache=True, error_model="numpy")
def _row_force_terms(prow, pcol, fg, floor, zi, zt, bi, bt, ui, ut, wa, ga, wb, gb, kk, m):
    """The stiffness ``kk[j] = K_ij`` of the pairs ``(i, i + 1 + j)``, ``j < m``, from the kernel
    weights ``wa`` / ``wb`` and gradient factors ``ga`` / ``gb`` of ``(beta_i d2)`` /
    ``(beta_j d2)`` (not yet times the point weights ``u_i u_j`` nor the precisions); ``floor``:
    Q's floor (``-inf`` for none)."""
    for j in range(m):
        uij = ui * ut[j]
        qij = wa[j] * uij * zi
        qji = wb[j] * uij * zt[j]
        qij = floor if qij < floor else qij
        qji = floor if qji < floor else qji
        kk[j] = 2.0 * ((fg * prow[j] - qij) * (bi * ga[j]) + (fg * pcol[j] - qji) * (bt[j] * gb[j]))


@njit(cache=True, error_model="numpy")
def _row_forces_2d(Yt, i, prow, pcol, fg, floor, zi, zt, bi, bt, ui, ut, wa, ga, wb, gb, g0,
                   g1, t0s, t1s, m):
    """:func:`_row_force_terms` and the forces in one loop (two dimensions): ``K_ij (y_i - y_j)``
    subtracted from ``g0[j], g1[j]`` (the points after ``i``); returns the force on ``i`` (the
    pairwise sums of the terms, kept in ``t0s``, ``t1s``)."""
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    for j in range(m):
        uij = ui * ut[j]
        qij = wa[j] * uij * zi
        qji = wb[j] * uij * zt[j]
        qij = floor if qij < floor else qij
        qji = floor if qji < floor else qji
        kk = 2.0 * ((fg * prow[j] - qij) * (bi * ga[j]) + (fg * pcol[j] - qji) * (bt[j] * gb[j]))
        t0 = kk * (a - y0[j])
        t1 = kk * (b - y1[j])
        t0s[j] = t0
        t1s[j] = t1
        g0[j] -= t0
        g1[j] -= t1
    return pairwise_sum(t0s, m), pairwise_sum(t1s, m)


@njit(cache=True, error_model="numpy")
def _row_forces_t2(Yt, i, prow, pcol, fg, floor, zi, zt, ui, ut, g0, g1, t0s, t1s, m):
    """:func:`_row_forces_2d` for the Student-t kernel without precisions, its weights computed in
    the loop (no distance or weight rows; the same bits)."""
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    for j in range(m):
        dx = a - y0[j]
        dy = b - y1[j]
        w = t_weight(dx * dx + dy * dy)
        uij = ui * ut[j]
        qij = w * uij * zi
        qji = w * uij * zt[j]
        qij = floor if qij < floor else qij
        qji = floor if qji < floor else qji
        kk = 2.0 * ((fg * prow[j] - qij) * w + (fg * pcol[j] - qji) * w)
        t0 = kk * dx
        t1 = kk * dy
        t0s[j] = t0
        t1s[j] = t1
        g0[j] -= t0
        g1[j] -= t1
    return pairwise_sum(t0s, m), pairwise_sum(t1s, m)


@njit(cache=True, error_model="numpy")
def _row_weights_t2(Yt, i, ui, ut, w, cb, m):
    """Row ``i``'s Student-t weights times ``u_i u_j`` into ``w`` and added to ``cb`` (two
    dimensions, one loop; the bits of the distance, weight and product loops)."""
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    for j in range(m):
        dx = a - y0[j]
        dy = b - y1[j]
        wj = t_weight(dx * dx + dy * dy) * (ui * ut[j])
        w[j] = wj
        cb[j] += wj


@njit(cache=True, error_model="numpy")
def _row_cross(prow, pcol, f, floor, by_row, zi, zt, ui, ut, wa, wb, terms, cb, m):
    """The cross terms ``xlogy(f P, q)`` of the pairs ``(i, i + 1 + j)``: point i's into
    ``terms``, those of the points after it added to ``cb`` (``P_ij log q_ij`` is point i's by
    rows, point j's by columns). Every branch computed and selected (vmath's log): the loop
    vectorises."""
    for j in range(m):
        uij = ui * ut[j]
        qij = wa[j] * uij * zi
        qji = wb[j] * uij * zt[j]
        qij = floor if qij < floor else qij
        qji = floor if qji < floor else qji
        pij = f * prow[j]
        pji = f * pcol[j]
        vij = pij * log1(qij)
        vji = pji * log1(qji)
        vij = vij if (pij != 0.0 or qij != qij) else 0.0  # xlogy(0, q) = 0 (NaN stays NaN)
        vji = vji if (pji != 0.0 or qji != qji) else 0.0
        terms[j] = vij if by_row else vji
        cb[j] += vji if by_row else vij


@njit(parallel=True, cache=True, error_model="numpy")
def weight_rows(Yt, code, kp, beta, u, bounds, d2_scratch, w_scratch, g_scratch, cbuf, Z):
    """``Z[i] = sum_j w_ij`` (n,); ``beta``: the per-point precisions (n,), or empty for none;
    ``u``: the per-point output weights (n,) (``w_ij`` times ``u_i u_j``), or empty for none.
    Scratch: ``*_scratch`` and ``cbuf`` (chunks, n)."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    scaled = beta.shape[0] > 0
    ones = np.ones(n)
    bt_all = beta if scaled else ones
    u_all = u if u.shape[0] > 0 else ones
    t2 = Yt.shape[0] == 2 and code == T_KERNEL and not scaled  # one fused loop
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        wa, wb = d2_scratch[c], g_scratch[c]
        cbuf[c, lo:] = 0.0
        for i in range(lo, hi):
            m = n - i - 1
            if t2:
                _row_weights_t2(Yt, i, u_all[i], u_all[i + 1:], wa, cbuf[c, i + 1:], m)
                cbuf[c, i] += pairwise_sum(wa, m)
                continue
            _row_pair_d2(Yt, i, wa, m)
            if scaled:  # w_ij = w(beta_i d2), w_ji = w(beta_j d2)
                _scale_rows(bt_all[i], bt_all[i + 1:], wa, wb, m)
                row_costly_weights_inplace(code, kp, wb, m)
            row_costly_weights_inplace(code, kp, wa, m)
            ui = u_all[i]
            ut = u_all[i + 1:]
            cb = cbuf[c, i + 1:]
            if scaled:
                for j in range(m):
                    uij = ui * ut[j]
                    wa[j] *= uij
                    cb[j] += wb[j] * uij
            else:
                for j in range(m):
                    wj = wa[j] * (ui * ut[j])
                    wa[j] = wj
                    cb[j] += wj
            cbuf[c, i] += pairwise_sum(wa, m)
    reduce_chunks(bounds, np.empty((0, 0, 0)), cbuf, False, True, np.empty((0, 0)), Z)


@njit(parallel=True, cache=True, error_model="numpy")
def kl_pair_terms(P, PT, Yt, f, fg, code, kp, clamp, eps, by_row, inv_z, beta, u, bounds,
                  want_cost, want_grad, d2_scratch, wa_scratch, ga_scratch, wb_scratch,
                  gb_scratch, qa_scratch, qb_scratch, k_scratch, pc_scratch, gbuf, cbuf, G,
                  cross):
    """Per-pair pass: ``G`` (n, k) the gradient ``sum_j K_ij (y_i - y_j)`` (with ``fg P``) and
    ``cross`` (n,) the sums of ``xlogy(f P, Q)`` by rows (``by_row``) or by columns.

    ``PT``: P's transpose, C-ordered (P itself when P is symmetric), so that ``P[i + 1:, i]`` is
    read as a contiguous row; an empty (0, 0) array reads P's columns with a stride (slow for
    large n: every entry on its own cache line), copied row by row into ``pc_scratch``. ``inv_z``
    (n,): ``1 / Z_i``; ``beta`` (n,) the per-point precisions or empty; ``u`` (n,) the per-point
    output weights or empty; ``kp``: the kernel parameters; ``clamp``: Q floored at ``eps``.
    Scratch: ``*_scratch`` (chunks, n);
    ``gbuf`` (chunks, k, n) and ``cbuf`` (chunks, n) hold each chunk's partial sums; ``pc_scratch``
    (chunks, n), or (0, 0) when ``PT`` is given.

    Per row: the squared distances (one loop in two dimensions), the kernel's weights and gradient
    factors (vectorised loops; twice with precisions), then one loop for the forces (two
    dimensions: the stiffness and both points' forces fused) and one for the cost terms; the point
    weights, precisions and Q's floor are applied inside those loops, without branches.
    """
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    scaled = beta.shape[0] > 0
    transposed = PT.shape[0] == n
    ones = np.ones(n)
    bt_all = beta if scaled else ones
    u_all = u if u.shape[0] > 0 else ones
    floor = eps if clamp else -np.inf
    t2 = k == 2 and code == T_KERNEL and not scaled  # the weights computed in the force loop
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, kk, xb = d2_scratch[c], k_scratch[c], qb_scratch[c]
        wa, ga, wb, gb = wa_scratch[c], ga_scratch[c], wb_scratch[c], gb_scratch[c]
        terms = qa_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, k, want_grad, want_cost)
        for i in range(lo, hi):
            m = n - i - 1
            bi = bt_all[i]
            bt = bt_all[i + 1:]
            ui = u_all[i]
            ut = u_all[i + 1:]
            if not t2 or want_cost:  # the weight rows
                _row_pair_d2(Yt, i, d2, m)
                if scaled:  # w_ij = w(beta_i d2), w_ji = w(beta_j d2)
                    _scale_rows(bi, bt, d2, xb, m)
                    row_costly_weights(code, kp, d2, wa, ga, m)
                    row_costly_weights(code, kp, xb, wb, gb, m)
                else:
                    row_costly_weights(code, kp, d2, wa, ga, m)
            prow = P[i, i + 1:]
            if transposed:
                pcol = PT[i, i + 1:]
            else:  # a contiguous copy: the loops below read one layout
                pcol = pc_scratch[c, :m]
                pcol[:] = P[i + 1:, i]
            if want_grad and t2:
                s0, s1 = _row_forces_t2(Yt, i, prow, pcol, fg, floor, inv_z[i], inv_z[i + 1:],
                                        ui, ut, gbuf[c, 0, i + 1:], gbuf[c, 1, i + 1:], d2, kk,
                                        m)
                gbuf[c, 0, i] += s0
                gbuf[c, 1, i] += s1
            elif want_grad and k == 2:
                if scaled:
                    s0, s1 = _row_forces_2d(Yt, i, prow, pcol, fg, floor, inv_z[i],
                                            inv_z[i + 1:], bi, bt, ui, ut, wa, ga, wb, gb,
                                            gbuf[c, 0, i + 1:], gbuf[c, 1, i + 1:], d2, kk, m)
                else:
                    s0, s1 = _row_forces_2d(Yt, i, prow, pcol, fg, floor, inv_z[i],
                                            inv_z[i + 1:], bi, bt, ui, ut, wa, ga, wa, ga,
                                            gbuf[c, 0, i + 1:], gbuf[c, 1, i + 1:], d2, kk, m)
                gbuf[c, 0, i] += s0
                gbuf[c, 1, i] += s1
            elif want_grad:
                if scaled:
                    _row_force_terms(prow, pcol, fg, floor, inv_z[i], inv_z[i + 1:], bi, bt, ui,
                                     ut, wa, ga, wb, gb, kk, m)
                else:
                    _row_force_terms(prow, pcol, fg, floor, inv_z[i], inv_z[i + 1:], bi, bt, ui,
                                     ut, wa, ga, wa, ga, kk, m)
                add_pair_forces(Yt, i, kk, gbuf[c], m, d2)
            if want_cost:
                cb = cbuf[c, i + 1:]
                if scaled:
                    _row_cross(prow, pcol, f, floor, by_row, inv_z[i], inv_z[i + 1:], ui, ut, wa,
                               wb, terms, cb, m)
                else:
                    _row_cross(prow, pcol, f, floor, by_row, inv_z[i], inv_z[i + 1:], ui, ut, wa,
                               wa, terms, cb, m)
                cbuf[c, i] += pairwise_sum(terms, m)
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
