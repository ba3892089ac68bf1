"""Numba kernels of NeRV's stored pairs on the sparse-P engines (:mod:`.approx_nerv`; compiled on
first use and cached on disk): the differences between each stored pair's true terms and the ones
the all-pairs sums count for it (``P = eps``, ``q`` unfloored), over the rows of a CSR matrix.
:func:`stored_sums`, :func:`stored_forces` and :func:`stored_logsumexp` serve bnerv
(:mod:`.approx_bnerv`), with per-row output precisions ``beta``: ``log q_ij = -beta_i d2_ij -
log N_i`` and each stiffness times its row's ``beta`` (``beta`` empty: NeRV's 1).
Rows are independent (each row writes only its own outputs), so the results do not depend on the
number of threads. Coordinates are at most three, held in registers.

nerv, snerv and rsrnerv take one pass over P's rows per evaluation (:func:`nerv_rows`): a row's
log-sum-exp floor on its normaliser, its reverse KL and its own stored forces come from one ``exp``
per entry (vectorised, :mod:`.._util.vmath`); ``log p`` is made once per exaggeration
(:func:`log_p`), and the stiffness is written per entry as ``A + s B``, linear in the row's
reverse KL ``s``, so that the transposed forces (:func:`transposed_forces`) are a pass of
products. The entries are stored in the order of blocks of P's columns (:func:`column_blocks`): a
row's writes go to a few runs, not one random place each, and the transposed pass reads them in
order, each block's forces held in cache.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.vmath import exp1, log1
from .csr_row_kernels import widest_row

NO_BETA = np.empty(0)  # the kernels' beta for NeRV (every row's precision 1)


@njit(parallel=True, cache=True, error_model="numpy")
def stored_sums(indptr, indices, data, Y, beta, f, log_norm, eps, rev, fwd):
    """Per row ``i`` over its stored entries (``p = max(f P_ij, eps)``, ``log q = -beta_i d2 -
    log N_i`` with ``beta`` (n,) the rows' precisions or empty for 1, ``qf = max(q, eps)``):
    ``rev[i] = sum qf log(qf / p) - q log(q / eps)`` and
    ``fwd[i] = sum p log(p / qf) - eps log(eps / q)``."""
    n, k = Y.shape
    log_eps = math.log(eps)
    q_floor = math.exp(log_eps)  # qf where q is floored (else q itself: the same bits as exp(lqf))
    scaled = beta.shape[0] > 0
    for i in prange(n):
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        r = 0.0
        w = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            lq = -(beta[i] if scaled else 1.0) * (e0 * e0 + e1 * e1 + e2 * e2) - log_norm[i]
            q = math.exp(lq)
            lqf = lq if lq > log_eps else log_eps
            qf = q if lq > log_eps else q_floor
            p = f * data[e]
            if p < eps:
                p = eps
            lp = math.log(p)
            r += qf * (lqf - lp) - q * (lq - log_eps)
            w += p * (lp - lqf) - eps * (log_eps - lq)
        rev[i] = r
        fwd[i] = w


@njit(parallel=True, cache=True, error_model="numpy")
def stored_forces(indptr, indices, data, Y, beta, f, log_norm, shift, lam, eps, owner_is_row, F):
    """``F[i] = sum_j beta_o dk_oj (y_i - y_j)`` over the stored entries of row ``i``, with ``dk``
    the stored pair's row-form stiffness less the one the all-pairs sums count,
    ``lam (p - qf) + (1 - lam) qf (log p - log qf + s) - lam (eps - q) - (1 - lam) q (log eps -
    log q + s)`` and ``log q = -beta_o d2 - log N_o``, of the pair's owner row ``o`` (``i`` when
    ``owner_is_row``, else ``j``: the matrix is then P's transpose) with its ``s = shift[o]``
    (``beta`` empty: 1)."""
    n, k = Y.shape
    log_eps = math.log(eps)
    q_floor = math.exp(log_eps)  # qf where q is floored (else q itself: the same bits as exp(lqf))
    scaled = beta.shape[0] > 0
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
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            bo = beta[o] if scaled else 1.0
            lq = -bo * (e0 * e0 + e1 * e1 + e2 * e2) - log_norm[o]
            q = math.exp(lq)
            lqf = lq if lq > log_eps else log_eps
            qf = q if lq > log_eps else q_floor
            p = f * data[e]
            if p < eps:
                p = eps
            s = shift[o]
            dk = (lam * (p - qf) + (1.0 - lam) * qf * (math.log(p) - lqf + s)
                  - (lam * (eps - q) + (1.0 - lam) * q * (log_eps - lq + s))) * bo
            a0 += dk * e0
            a1 += dk * e1
            a2 += dk * e2
        F[i, 0] = a0
        if k > 1:
            F[i, 1] = a1
        if k > 2:
            F[i, 2] = a2


@njit(parallel=True, cache=True, error_model="numpy")
def stored_logsumexp(indptr, indices, Y, beta, out):
    """``out[i] = log sum_j exp(-beta_i d2_ij)`` over the stored entries of row ``i`` (-inf:
    none; ``beta`` empty: 1)."""
    n, k = Y.shape
    scaled = beta.shape[0] > 0
    for i in prange(n):
        b = beta[i] if scaled else 1.0
        top = -math.inf
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            if -b * d2 > top:
                top = -b * d2
        total = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            d2 = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                d2 += diff * diff
            total += math.exp(-b * d2 - top)
        out[i] = top + math.log(total) if total > 0.0 else -math.inf


# -- nerv, snerv, rsrnerv: one pass per evaluation -------------------------------------------------
CHUNK = 256  # rows per task of the row passes (each row writes only its own outputs)
# weights and q under exp(TINY) are taken as 0: they change a sum by under 1e-304, and subnormal
# values (exp(-708) to exp(-745)) make every operation on them many times slower
TINY = -700.0


@njit(parallel=True, cache=True, error_model="numpy")
def log_p(data, f, eps, out):
    """``out[e] = log max(f data[e], eps)`` (NeRV's floored ``P``; :func:`nerv_rows`)."""
    m = data.shape[0]
    for c in prange((m + 4095) // 4096):
        for e in range(c * 4096, min(m, (c + 1) * 4096)):
            p = f * data[e]
            out[e] = log1(p if p > eps else eps)


@njit(cache=True, error_model="numpy", inline="always")
def _row_weights(indptr, indices, Y, i, d2, dx, w):
    """Row ``i``'s stored entries into the buffers: ``d2``, ``dx[d] = y_i - y_j`` and the weights
    relative to the largest, ``w = exp(-d2 - top)`` (0 under ``exp(TINY)``); returns ``(top,
    lse)``, ``top = -min d2`` and ``lse = log sum_j exp(-d2)`` (-inf: no entries)."""
    k = Y.shape[1]
    start = indptr[i]
    m = indptr[i + 1] - start
    top = -math.inf
    for t in range(m):
        j = indices[start + t]
        e0 = Y[i, 0] - Y[j, 0]
        e1 = Y[i, 1] - Y[j, 1] if k > 1 else 0.0
        e2 = Y[i, 2] - Y[j, 2] if k > 2 else 0.0
        dx[0, t] = e0
        dx[1, t] = e1
        dx[2, t] = e2
        d = e0 * e0 + e1 * e1 + e2 * e2
        d2[t] = d
        if -d > top:
            top = -d
    for t in range(m):  # vectorised; no subnormal weights (slow arithmetic), 0 instead
        x = -d2[t] - top
        w[t] = exp1(x if x > TINY else -math.inf)
    total = 0.0
    for t in range(m):
        total += w[t]
    return top, (top + math.log(total) if total > 0.0 else -math.inf)


@njit(cache=True, error_model="numpy", inline="always")
def row_norm(indptr, indices, Y, i, log_s, floor, d2, dx, w):
    """:func:`_row_weights` of row ``i``, then its log-normaliser ``ln``: ``log_s[i]``, raised to
    the row's own log-sum-exp where ``floor[i]`` (``np.fmax``: a NaN ``log_s`` gives it); returns
    ``(ln, scale)``, ``scale = exp(top - ln)`` the factor from the buffer's weights to q (0 for an
    empty row)."""
    top, lse = _row_weights(indptr, indices, Y, i, d2, dx, w)
    ln = log_s[i]
    if floor[i] and not ln >= lse:
        ln = lse
    scale = math.exp(top - ln) if indptr[i + 1] > indptr[i] else 0.0
    return ln, scale


@njit(cache=True, error_model="numpy", inline="always")
def store_row_stiffness(i, start, m, aa, bb, dx, tpos, AB, FA, FB):
    """Row ``i``'s stiffness differences written as ``A + s B`` (``aa``, ``bb``, offsets ``dx``):
    ``FA[i] = sum A (y_i - y_j)``, ``FB[i] = sum B (y_i - y_j)``, and each entry's ``(A, B)`` at its
    place in the column blocks' order (``AB[tpos[start + t]]``, :func:`column_blocks`, for
    :func:`transposed_forces`; ``tpos`` empty: not written, as a Q normalised over the matrix has no
    transposed forces)."""
    k = FA.shape[1]
    fa0 = 0.0
    fa1 = 0.0
    fa2 = 0.0
    fb0 = 0.0
    fb1 = 0.0
    fb2 = 0.0
    for t in range(m):
        a = aa[t]
        b = bb[t]
        fa0 += a * dx[0, t]
        fa1 += a * dx[1, t]
        fa2 += a * dx[2, t]
        fb0 += b * dx[0, t]
        fb1 += b * dx[1, t]
        fb2 += b * dx[2, t]
    if tpos.shape[0] > 0:  # a row-normalised Q's transposed forces read them
        for t in range(m):
            o = tpos[start + t]
            AB[o, 0] = aa[t]
            AB[o, 1] = bb[t]
    FA[i, 0] = fa0
    FB[i, 0] = fb0
    if k > 1:
        FA[i, 1] = fa1
        FB[i, 1] = fb1
    if k > 2:
        FA[i, 2] = fa2
        FB[i, 2] = fb2


@njit(parallel=True, cache=True, error_model="numpy")
def nerv_rows(indptr, indices, data, tpos, lp, Y, f, log_s, floor, eps, lam, with_cost,
              log_norm, rev, fwd, FA, FB, AB):
    """NeRV's stored pairs in one pass over the rows (``p = max(f P_ij, eps)``, ``lp = log p``
    from :func:`log_p`): ``log_norm[i]`` is ``log_s[i]``, or (where ``floor[i]``) at least the
    log-sum-exp of the row's stored weights; with ``log q = -d2 - log_norm[i]`` and ``qf =
    max(q, eps)``, ``rev[i] = sum qf log(qf / p) - q log(q / eps)``, ``fwd[i] = sum p log(p / qf)
    - eps log(eps / q)`` (``with_cost``; else 0) and per entry the stiffness difference of
    :func:`stored_forces` written as ``A + s B``, stored at the entry's place in the column blocks'
    order (``AB[tpos[e]] = (A, B)``, :func:`column_blocks`, for :func:`transposed_forces`; ``tpos``
    empty: not stored), with
    ``FA[i] = sum A (y_i - y_j)`` and ``FB[i] = sum B (y_i - y_j)`` over the row (its own stored
    forces are ``FA + s FB``)."""
    n, k = Y.shape
    log_eps = math.log(eps)
    q_floor = math.exp(log_eps)  # qf where q is floored
    width = widest_row(indptr)
    for c in prange((n + CHUNK - 1) // CHUNK):
        d2 = np.empty(width)
        w = np.empty(width)
        dx = np.empty((3, width))
        ra = np.empty(width)
        aa = np.empty(width)
        bb = np.empty(width)
        ff = np.empty(width)
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            start = indptr[i]
            m = indptr[i + 1] - start
            ln, scale = row_norm(indptr, indices, Y, i, log_s, floor, d2, dx, w)
            log_norm[i] = ln
            # three loops: the terms (vectorised), the row's sums, the stiffness to its place in
            # the column blocks (one loop of all three runs at about half the speed)
            for t in range(m):
                lq = -d2[t] - ln
                q = w[t] * (scale if lq > TINY else 0.0)
                above = lq > log_eps
                lqf = lq if above else log_eps
                qf = q if above else q_floor
                p = f * data[start + t]
                p = p if p > eps else eps
                lpe = lp[start + t]
                re = qf * (lqf - lpe) - q * (lq - log_eps)
                ra[t] = re
                ff[t] = p * (lpe - lqf) - eps * (log_eps - lq)
                aa[t] = lam * ((p - qf) - (eps - q)) - (1.0 - lam) * re
                bb[t] = (1.0 - lam) * (qf - q)
            r = 0.0
            wf = 0.0
            for t in range(m):
                r += ra[t]
                wf += ff[t]
            rev[i] = r
            fwd[i] = wf if with_cost else 0.0
            store_row_stiffness(i, start, m, aa, bb, dx, tpos, AB, FA, FB)


COLUMN_BLOCKS = 8  # blocks of P's columns (points) of transposed_forces, each a task


def column_blocks(indptr, indices, n):
    """``(tpos, cols, starts)`` of a CSR matrix with sorted column indices, its entries ordered by
    the block of :data:`COLUMN_BLOCKS` of ``ceil(n / COLUMN_BLOCKS)`` columns they fall in, then by
    row and column: ``tpos`` (nnz,) each entry's place in that order, ``cols`` (nnz,) the columns in
    that order and ``starts`` (COLUMN_BLOCKS, n + 1) where row ``j`` of block ``b`` begins
    (``starts[b, n]``: the block's end), for :func:`transposed_forces`."""
    width = -(-n // COLUMN_BLOCKS)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    block = indices // width
    order = np.argsort(block, kind="stable")  # entries are in (row, column) order already
    tpos = np.empty(indices.shape[0], dtype=np.int64)
    tpos[order] = np.arange(indices.shape[0])
    counts = np.bincount(block * n + rows, minlength=COLUMN_BLOCKS * n)
    flat = np.concatenate(([0], np.cumsum(counts)))
    starts = np.stack([flat[b * n:b * n + n + 1] for b in range(COLUMN_BLOCKS)])
    return tpos, np.ascontiguousarray(indices[order]), starts


@njit(parallel=True, cache=True, error_model="numpy")
def transposed_forces(cols, starts, AB, Y, shift, F):
    """``F[i] = sum_j (A + shift[j] B) (y_i - y_j)`` over the rows ``j`` of P that store ``(j,
    i)``, ``(A, B)`` that entry's stiffness (owned by row ``j``, written by :func:`nerv_rows` or
    JSE's :func:`.approx_jse_kernels.jse_rows` in the column blocks' order, ``cols`` its columns,
    ``starts`` where each row of each block begins; :func:`column_blocks`): the stored stiffness
    ``dk_ji`` at ``i``. Each task owns a block of columns and reads its rows in order, so each
    ``F[i]`` is summed in the order of ``j`` whatever the number of threads."""
    n, k = Y.shape
    width = -(-n // COLUMN_BLOCKS)
    for b in prange(COLUMN_BLOCKS):
        for i in range(b * width, min(n, (b + 1) * width)):
            for d in range(k):
                F[i, d] = 0.0
        for j in range(n):
            s = shift[j]
            y0 = Y[j, 0]
            y1 = Y[j, 1] if k > 1 else 0.0
            y2 = Y[j, 2] if k > 2 else 0.0
            for e in range(starts[b, j], starts[b, j + 1]):
                i = cols[e]
                dk = AB[e, 0] + s * AB[e, 1]
                F[i, 0] += dk * (Y[i, 0] - y0)
                if k > 1:
                    F[i, 1] += dk * (Y[i, 1] - y1)
                if k > 2:
                    F[i, 2] += dk * (Y[i, 2] - y2)


# -- rows the FFT grid does not resolve (:func:`.approx_nerv.exact_rows`): every pair summed --------
# Pairs whose weight relative to the row's largest is under exp(-CUT) are left out: the points are
# scanned in the order of their first coordinate (``order``, ``xs`` = the sorted coordinates) out to
# ``dx^2 <= d2_min + CUT``.
CUT = 60.0


@njit(cache=True, error_model="numpy")
def _window(xs, order, Y, i):
    """``(lo, hi, d2_min)``: the positions in ``xs`` within ``d2_min + CUT`` of point ``i`` along
    the first coordinate, ``d2_min`` its squared distance to its nearest other point."""
    n, k = Y.shape
    x = Y[i, 0]
    p = np.searchsorted(xs, x)
    best = math.inf
    for step in (-1, 1):
        t = p - 1 if step < 0 else p
        while 0 <= t < n:
            dx = xs[t] - x
            if dx * dx > best:
                break
            j = order[t]
            if j != i:
                d2 = 0.0
                for d in range(k):
                    diff = Y[i, d] - Y[j, d]
                    d2 += diff * diff
                if d2 < best:
                    best = d2
            t += step
    reach = math.sqrt(best + CUT)
    return np.searchsorted(xs, x - reach), np.searchsorted(xs, x + reach, side="right"), best


@njit(parallel=True, cache=True, error_model="numpy")
def row_terms(Y, order, xs, rows, log_eps, log_norm, mass, rev, Fa, Fd):
    """Over the points ``j != i`` (``i = rows[r]``; those of relative weight under ``exp(-CUT)``
    left out): ``log_norm[r] = log sum_j exp(-d2_ij)`` (-inf: none) and, with
    ``q = exp(-d2_ij - log_norm[r])``, ``mass[r] = sum_j q``, ``rev[r] = sum_j q (log q - log_eps)``,
    ``Fa[r] = sum_j q (y_i - y_j)`` and ``Fd[r] = sum_j d2_ij q (y_i - y_j)``."""
    n, k = Y.shape
    for r in prange(rows.shape[0]):
        i = rows[r]
        lo, hi, best = _window(xs, order, Y, i)
        top = -best
        # one pass with the weights relative to the largest, w' = exp(-d2 - top); q = w' / total
        total = 0.0
        acc = 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        b0 = 0.0
        b1 = 0.0
        b2 = 0.0
        for t in range(lo, hi):
            j = order[t]
            if j == i:
                continue
            e0 = Y[i, 0] - Y[j, 0]
            e1 = Y[i, 1] - Y[j, 1] if k > 1 else 0.0
            e2 = Y[i, 2] - Y[j, 2] if k > 2 else 0.0
            d2 = e0 * e0 + e1 * e1 + e2 * e2
            if d2 + top > CUT:  # d2 - d2_min: a weight under exp(-CUT) of the largest
                continue
            w = math.exp(-d2 - top)
            total += w
            acc -= w * d2
            a0 += w * e0
            a1 += w * e1
            a2 += w * e2
            b0 += d2 * w * e0
            b1 += d2 * w * e1
            b2 += d2 * w * e2
        ln = top + math.log(total) if total > 0.0 else -math.inf
        log_norm[r] = ln
        inv = 1.0 / total if total > 0.0 else 0.0
        m = total * inv
        acc = acc * inv - (ln + log_eps) * m
        mass[r] = m
        rev[r] = acc
        Fa[r, 0] = a0 * inv
        Fd[r, 0] = b0 * inv
        if k > 1:
            Fa[r, 1] = a1 * inv
            Fd[r, 1] = b1 * inv
        if k > 2:
            Fa[r, 2] = a2 * inv
            Fd[r, 2] = b2 * inv


@njit(parallel=True, cache=True, error_model="numpy")
def column_terms(Y, rows, rx, reach, log_norm, alpha, beta, F):
    """``F[i] = sum_r (alpha[r] - beta[r] d2) exp(-d2 - log_norm[r]) (y_i - y_j)`` with
    ``j = rows[r] != i`` and ``d2 = d2_ij``: the transposed stiffness of the listed rows (sorted by
    their first coordinate ``rx``) at every point, each point summing the rows in that order within
    ``reach`` along the first coordinate, and only the pairs with ``d2 + log_norm[r] <= CUT``."""
    n, k = Y.shape
    for i in prange(n):
        f0 = 0.0
        f1 = 0.0
        f2 = 0.0
        lo = np.searchsorted(rx, Y[i, 0] - reach)
        hi = np.searchsorted(rx, Y[i, 0] + reach, side="right")
        for r in range(lo, hi):
            j = rows[r]
            if j == i:
                continue
            e0 = Y[i, 0] - Y[j, 0]
            e1 = Y[i, 1] - Y[j, 1] if k > 1 else 0.0
            e2 = Y[i, 2] - Y[j, 2] if k > 2 else 0.0
            d2 = e0 * e0 + e1 * e1 + e2 * e2
            if d2 + log_norm[r] > CUT:
                continue
            s = (alpha[r] - beta[r] * d2) * math.exp(-d2 - log_norm[r])
            f0 += s * e0
            f1 += s * e1
            f2 += s * e2
        F[i, 0] = f0
        if k > 1:
            F[i, 1] = f1
        if k > 2:
            F[i, 2] = f2
