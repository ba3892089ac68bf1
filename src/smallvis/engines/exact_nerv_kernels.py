"""Numba kernels of the fused exact engine for the mixes of forward and reverse KL with Gaussian
output probabilities (NeRV, JSE; ``MixtureForm``), compiled on first use and cached on disk.

Per ordered pair ``(i, j)``, with ``beta_i`` the output precision (1 without) and ``log Z_i`` the
row's log-sum-exp (the same for every row with a matrix-normalised Q):

.. math::
    \\log q_{ij} = \\max(-\\beta_i d^2_{ij} - \\log Z_i, \\log \\varepsilon), \\qquad
    q_{ij} = \\exp(\\log q_{ij})

and the dense engine's pair terms (:mod:`smallvis.methods.nerv`), element for element:

- NeRV (``NERV``): ``p = max(f P_ij, eps)``, ``L = log p - log q``; cost sums ``A = sum p L`` and
  ``B = sum q L``; stiffness ``k = lambda (p - q) + (1 - lambda) q (L + s)`` with the shift
  ``s = -B`` (per row, or summed over the matrix);
- JSE (``JSE``): ``p = f P_ij``, ``m = kappa p + (1 - kappa) q``, ``L = log(q / m)`` (as
  ``-log1p(kappa (p / q - 1))``, or ``log q - log eps`` where ``m < eps``); ``A = sum p log(m / p)``
  with the dense engine's cases for ``p < eps``, ``B = sum q L``; ``k = -q (L - s) / kappa`` with
  ``s = B``.

The stiffness of a pair is ``2 (beta_i k_ij + beta_j k_ji)`` (row-normalised Q) or ``4 k_ij``
(matrix-normalised Q, P symmetric: ``k_ij = k_ji``). Its shift's part, ``c q s`` per direction
(``c = 1 - lambda`` for NeRV, ``1 / kappa`` for JSE), needs all of ``B``: the pass that sums ``B``
also gives the forces of the rest, and those of the shift's part come after it, from ``q`` alone
(:func:`shift_forces`: no P read, no logarithm), or with a matrix-normalised Q, where the shift is
one number, as that number times the forces of ``q`` from the same pass. Passes, each visiting
every unordered pair once in the fixed chunks of :mod:`.exact_kernels` (per-chunk buffers, added in
chunk order: the same bits for any number of threads): the row minima of ``d2`` (the
log-sum-exp's shift; in few dimensions :func:`.exact_nerv.nearest_d2` instead), the shifted row
sums of ``exp(-beta_i d2)``, the sums ``A`` and ``B`` with the forces of the stiffness without the
shift, then (row-normalised Q) the shift's forces. The last two take each row's pairs in blocks of
:data:`BLOCK`, every step of a block before the next block (the steps' arrays stay in cache), and
sum the row's terms over the whole row after: the numbers do not depend on the block size (the
shifted sums' pass goes in blocks too).

A row-normalised Q without precisions (nerv, rsrnerv, jse, rsrjse) evaluates one ``exp`` per pair
where both directions differ only in their row's shift: the direction with the larger exponent
takes its exponential, the other that times the per-point ratio ``e^(a_i - a_j)`` (at most 1),
given as a product of per-point factors (:func:`.exact_nerv.exp_ratios`, when the shifts' range
allows), in the sums' pass and both later ones.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import exp1, log1, log1p1
from .exact_kernels import _row_d2, clear_chunk, reduce_chunks

NERV, JSE = 0, 1
MIN_NORMAL = 2.2250738585072014e-308


@njit(cache=True, error_model="numpy", inline="always")
def _flush(x):
    """``x``, or 0 where ``x`` is subnormal: a product with a subnormal operand takes the CPU's slow
    path (tens of times a normal one; 5% of P's entries at 8,000 blobs). Used only where the
    result has the same bits either way: ``max(f P, eps)`` (``f P <= 2^-1021 f < eps``) and JSE's
    ``p / q - 1`` and ``kappa p + (1 - kappa) q`` (``q >= eps``: the subnormal ``p``'s share is
    below half an ulp)."""
    return 0.0 if abs(x) < MIN_NORMAL else x
# pairs per block of a row in the passes that take many steps per pair: every step's arrays of one
# block stay in the first levels of cache
BLOCK = 512


@njit(parallel=True, cache=True, error_model="numpy")
def row_min_d2(Yt, bounds, d2_scratch, mbuf, out):
    """``out[i] = min_{j != i} d2_ij`` (``mbuf``: (chunks, n) per-chunk minima)."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, mb = d2_scratch[c], mbuf[c]
        mb[lo:] = np.inf
        for i in range(lo, hi):
            m = n - i - 1
            _row_d2(Yt, i, d2)
            cm = mb[i + 1:]
            s = mb[i]
            for j in range(m):
                v = d2[j]
                s = min(s, v)
                cm[j] = min(cm[j], v)
            mb[i] = s
    for i in prange(n):
        s = np.inf
        for c in range(chunks):
            if bounds[c] <= i:
                s = min(s, mbuf[c, i])
        out[i] = s


@njit(parallel=True, cache=True, error_model="numpy")
def shifted_exp_rows(Yt, beta, amax, ratio, one_shift, bounds, d2_scratch, w_scratch, cbuf,
                     out):
    """``out[i] = sum_{j != i} exp(-beta_i d2_ij - amax_i)`` (``beta``: (n,) or empty for 1;
    ``one_shift``: no ``beta`` and every ``amax`` the same, so one ``exp`` per pair).
    ``ratio``: empty, or without ``beta`` (2, n) per-point factors ``(e^(amax_i - r),
    e^(r - amax_i))`` for a reference ``r`` (:func:`.exact_nerv.exp_ratios`): the exponential
    of a pair's direction with the smaller exponent is then that of the other times
    ``e^(amax_i - amax_j)`` or its inverse (at most 1): one ``exp`` per pair."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    scaled = beta.shape[0] > 0
    by_ratio = ratio.shape[0] == 2
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, w = d2_scratch[c], w_scratch[c]
        cbuf[c, lo:] = 0.0
        for i in range(lo, hi):
            m = n - i - 1
            bi = beta[i] if scaled else 1.0
            ai = amax[i]
            for b0 in range(0, m, BLOCK):  # blocks as mixture_sums: the row's sum after
                bm = min(BLOCK, m - b0)
                j0 = i + 1 + b0
                _block_d2(Yt, i, j0, d2, bm)
                at = amax[j0:]
                cb = cbuf[c, j0:]
                wb = w[b0:]
                if by_ratio:  # loops of few arrays: LLVM's runtime overlap checks stay few
                    for j in range(bm):
                        wb[j] = exp1(-d2[j] - min(ai, at[j]))
                    _split_pair(wb, cb, ai, at, ratio, i, j0, bm)
                elif one_shift:  # both directions' exponentials are the same number
                    for j in range(bm):
                        wb[j] = exp1(-d2[j] - ai)
                    for j in range(bm):
                        cb[j] += wb[j]
                else:
                    for j in range(bm):
                        bj = beta[j0 + j] if scaled else 1.0
                        wb[j] = exp1(-(bi * d2[j]) - ai)
                        cb[j] += exp1(-(bj * d2[j]) - at[j])
            cbuf[c, i] += pairwise_sum(w, m)
    reduce_chunks(bounds, np.empty((0, 0, 0)), cbuf, False, True, np.empty((0, 0)), out)


@njit(cache=True, error_model="numpy")
def _row_log_q(d2, beta, scaled, logz, per_pair, log_eps, lq, q, m):
    """``lq[j] = max(-beta d2[j] - log Z, log eps)`` and ``q[j] = exp(lq[j])`` for ``j < m``:
    ``beta[j]`` / ``logz[j]`` per pair (``scaled`` / ``per_pair``), else ``beta[0]`` / ``logz[0]``
    (``beta`` empty without precisions)."""
    for j in range(m):
        b = (beta[j] if per_pair else beta[0]) if scaled else 1.0
        lz = logz[j] if per_pair else logz[0]
        v = -(b * d2[j]) - lz
        if v < log_eps:
            v = log_eps
        lq[j] = v
        q[j] = exp1(v)


@njit(cache=True, error_model="numpy")
def _split_pair(u, other, ai, at, ratio, i, j0, m):
    """Given ``u[j]`` the exponential of a pair's larger exponent (the direction whose row shift
    ``a`` is smaller), ``u[j]`` becomes that of direction ``i -> j0 + j`` and ``other[j] +=`` that
    of ``j0 + j -> i``: the smaller one is ``u`` times ``e^(a_i - a_j)`` or ``e^(a_j - a_i)`` (at
    most 1), a product of ``ratio``'s factors (:func:`.exact_nerv.exp_ratios`)."""
    fi, inv_i = ratio[0, i], ratio[1, i]
    ft, inv = ratio[0, j0:], ratio[1, j0:]
    for j in range(m):
        a_big = ai <= at[j]
        uj = u[j]
        small = uj * (fi * inv[j] if a_big else ft[j] * inv_i)
        other[j] += small if a_big else uj
        u[j] = uj if a_big else small


@njit(cache=True, error_model="numpy")
def _row_log_q_both(d2, logz, ratio, i, j0, log_eps, la, qa, lb, qb, m):
    """:func:`_row_log_q` of both directions of the pairs of ``i`` with ``j0 + j`` for ``j < m``
    (``d2[j]`` their ``d2``) without precisions, one ``exp``
    per pair (:func:`_split_pair`; the exponent of the larger direction is read back from ``la``
    and ``lb``: where both sit on the floor, so do both ``q``); ``q_eps = exp(log eps)``, the
    floor."""
    q_eps = exp1(log_eps)
    lzi = logz[i]
    lzt = logz[j0:]
    for j in range(m):
        x = d2[j]
        va = -x - lzi
        vb = -x - lzt[j]
        la[j] = va if va >= log_eps else log_eps
        lb[j] = vb if vb >= log_eps else log_eps
    for j in range(m):
        qa[j] = exp1(max(la[j], lb[j]))
        qb[j] = 0.0
    _split_pair(qa, qb, lzi, lzt, ratio, i, j0, m)
    for j in range(m):
        qa[j] = max(qa[j], q_eps)
        qb[j] = max(qb[j], q_eps)


@njit(cache=True, error_model="numpy")
def _row_log_ratio(div, w, f, eps, log_eps, prow, lrow, q, L, A, m, want_a):
    """One direction of a row's pairs: ``L[j]`` (given ``log q`` there, overwritten) and, with
    ``want_a``, the cost's ``A`` term in ``A[j]`` (see the module's formulas). ``lrow``: NeRV's
    ``log max(f P, eps)`` of these pairs from the cache (:func:`_block_pairs`), or empty
    (computed)."""
    if div == NERV:
        if lrow.shape[0] == 0:
            for j in range(m):
                pc = max(f * _flush(prow[j]), eps)
                L[j] = log1(pc) - L[j]
        else:  # the cache holds the same bits
            for j in range(m):
                L[j] = lrow[j] - L[j]
        if want_a:  # loops of their own: a test in the loop may keep LLVM from vectorising it
            for j in range(m):
                A[j] = max(f * prow[j], eps) * L[j]
    else:  # every case computed and one selected: no branch, so the loops vectorise
        kappa = w
        for j in range(m):
            p = f * _flush(prow[j])
            qj = q[j]
            mj = kappa * p + (1.0 - kappa) * qj
            l_floored = L[j] - log_eps
            l_mixed = -log1p1(kappa * (p / qj - 1.0))
            L[j] = l_floored if mj < eps else l_mixed
        if want_a:
            for j in range(m):
                p = f * prow[j]
                qj = q[j]
                mj = kappa * p + (1.0 - kappa) * qj
                floored = mj < eps
                lp = log1(p)
                big_floored = log_eps - lp
                big_mixed = log1p1((1.0 - kappa) * (qj / p - 1.0))
                small = log1(max(mj, eps)) - lp
                big = big_floored if floored else big_mixed
                lmp = big if p >= eps else small
                a = p * lmp
                A[j] = a if p > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def _block_d2(Yt, i, j0, d2, m):
    """``d2[j] = |y_i - y_(j0 + j)|^2`` for ``j < m`` (as :func:`.exact_kernels._row_d2`)."""
    for j in range(m):
        d2[j] = 0.0
    for d in range(Yt.shape[0]):
        yi = Yt[d, i]
        yd = Yt[d, j0:]
        for j in range(m):
            diff = yi - yd[j]
            d2[j] += diff * diff


@njit(cache=True, error_model="numpy")
def _block_forces(Yt, i, j0, kk, gb, t, m):
    """``t[d, j] = kk[j] (y_id - y_(j0+j)d)`` and ``gb[d, j0 + j] -= t[d, j]`` for ``j < m`` (the
    row's terms, summed with :func:`pairwise_sum` once every block is done)."""
    for d in range(Yt.shape[0]):
        yi = Yt[d, i]
        yd = Yt[d, j0:]
        g = gb[d, j0:]
        td = t[d]
        for j in range(m):
            tj = kk[j] * (yi - yd[j])
            td[j] = tj
            g[j] -= tj


@njit(cache=True, error_model="numpy")
def _block_pairs(P, PT, logp, Yt, i, j0, div, w, f, eps, log_eps, beta, logz, ratio, sym, d2,
                 qa, la, qb, lb, ta, tb, want_a, m):
    """``d2``, then ``q`` and ``L`` of the pairs of ``i`` with ``j0 + j`` (``j < m``) in both
    directions (``qa``, ``la``: i to j; ``qb``, ``lb``: j to i; ``ta``, ``tb``: their ``A`` terms
    with ``want_a``). With ``sym`` (matrix-normalised Q, P symmetric) the second direction is the
    first: only ``qa, la, ta`` are written. ``PT``: P's transpose, C-ordered (its rows are P's
    columns), or an empty (0, 0) array (P's columns read with a stride). ``ratio``: empty, or (2, n)
    (:func:`.exact_nerv.exp_ratios` of ``log Z``; no ``beta``): ``q`` of the second direction from
    that of the first (:func:`_row_log_q_both`). ``logp``: NeRV's packed ``log max(f P, eps)``
    (:mod:`.exact_nerv_cache_kernels`; this block: ``logp[i, j0:]`` and ``logp[n - 1 - i, j0 - i -
    1:]``), or an empty (0, 0) array (the logarithms computed)."""
    n = Yt.shape[1]
    cached = logp.shape[0] == n
    b0 = j0 - i - 1
    none = P[i, :0]  # an empty row (a view: no allocation)
    la_p = logp[i, j0:] if cached else none
    lb_p = logp[n - 1 - i, b0:] if cached else none
    scaled = beta.shape[0] > 0
    _block_d2(Yt, i, j0, d2, m)
    if ratio.shape[0] == 2 and not sym:
        _row_log_q_both(d2, logz, ratio, i, j0, log_eps, la, qa, lb, qb, m)
    else:
        _row_log_q(d2, beta[i:i + 1] if scaled else beta, scaled, logz[i:i + 1], False, log_eps,
                   la, qa, m)
    _row_log_ratio(div, w, f, eps, log_eps, P[i, j0:], la_p, qa, la, ta, m, want_a)
    if not sym:
        if ratio.shape[0] != 2:
            _row_log_q(d2, beta[j0:] if scaled else beta, scaled, logz[j0:], True,
                       log_eps, lb, qb, m)
        if PT.shape[0] == n:
            _row_log_ratio(div, w, f, eps, log_eps, PT[i, j0:], lb_p, qb, lb, tb, m, want_a)
        else:
            _row_log_ratio(div, w, f, eps, log_eps, P[j0:, i], lb_p, qb, lb, tb, m, want_a)


@njit(cache=True, error_model="numpy")
def _row_stiffness(div, w, f, eps, prow, q, L, k, m):
    """One direction's ``k[j]`` without the shift (module docstring): NeRV's
    ``lambda (p - q) + (1 - lambda) q L``, JSE's ``-q L / kappa``."""
    if div == NERV:
        lam = w
        for j in range(m):
            pc = f * _flush(prow[j])
            if pc < eps:
                pc = eps
            k[j] = lam * (pc - q[j]) + (1.0 - lam) * (q[j] * L[j])
    else:
        kappa = w
        for j in range(m):
            k[j] = -(q[j] * L[j]) / kappa


@njit(parallel=True, cache=True, error_model="numpy")
def mixture_sums(P, PT, logp, Yt, div, w, f, eps, beta, logz, ratio, sym, by_row, bounds, want_a,
                 want_grad,
                 d2_scratch, qa_scratch, la_scratch, qb_scratch, lb_scratch, ta_scratch, tb_scratch,
                 ka_scratch, kb_scratch, abuf, bbuf, gbuf, fbuf, A, B, G):
    """Per-point sums ``A`` (with ``want_a``) and ``B`` (module docstring): by rows (``by_row``: a
    pair's ``i -> j`` terms go to i) or by columns (to j); with ``want_grad``, ``G`` the forces
    of the stiffness without the shift: ``(n, k)``, ``K_ij = 2 (beta_i k_ij + beta_j k_ji)``, or
    with ``sym`` ``(n, 2k)``: those of ``4 k_ij`` and, in the last k columns, those of ``q_ij``
    (what the shift multiplies). ``PT``: P's C-ordered transpose or empty
    (:func:`_block_pairs`); ``logp``: NeRV's cached logarithms or empty (as there). ``beta`` (n,)
    or empty; ``logz`` (n,); ``ratio``: as
    :func:`_block_pairs`; scratch ``*_scratch``, ``abuf``, ``bbuf``: (chunks, n); ``gbuf`` and
    ``fbuf`` (the forces' terms) (chunks, G's columns, n). Each row's pairs go in blocks of
    :data:`BLOCK` through every step (the block's values stay in cache); the row's sums are taken
    over the whole row after its last block."""
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    log_eps = math.log(eps)
    scaled = beta.shape[0] > 0
    nf = 2 * k if sym else k
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2r, tar, tbr = d2_scratch[c], ta_scratch[c], tb_scratch[c]
        qar, lar, qbr, lbr = qa_scratch[c], la_scratch[c], qb_scratch[c], lb_scratch[c]
        kar, kbr, ft = ka_scratch[c], kb_scratch[c], fbuf[c]
        clear_chunk(np.empty((0, 0, 0)), abuf, c, lo, 0, False, want_a)
        clear_chunk(gbuf, bbuf, c, lo, nf, want_grad, True)
        for i in range(lo, hi):
            m = n - i - 1
            for b0 in range(0, m, BLOCK):
                bm = min(BLOCK, m - b0)
                j0 = i + 1 + b0
                d2, ta, tb = d2r[b0:], tar[b0:], tbr[b0:]
                qa, la, qb, lb, ka, kb = qar[b0:], lar[b0:], qbr[b0:], lbr[b0:], kar[b0:], kbr[b0:]
                _block_pairs(P, PT, logp, Yt, i, j0, div, w, f, eps, log_eps, beta, logz, ratio, sym, d2,
                             qa, la, qb, lb, ta, tb, want_a, bm)
                if want_grad:
                    _row_stiffness(div, w, f, eps, P[i, j0:], qa, la, ka, bm)
                    if sym:
                        for j in range(bm):
                            ka[j] = 4.0 * ka[j]
                    else:
                        if PT.shape[0] == n:
                            _row_stiffness(div, w, f, eps, PT[i, j0:], qb, lb, kb, bm)
                        else:
                            _row_stiffness(div, w, f, eps, P[j0:, i], qb, lb, kb, bm)
                        bi = beta[i] if scaled else 1.0
                        for j in range(bm):
                            bj = beta[j0 + j] if scaled else 1.0
                            ka[j] = 2.0 * (bi * ka[j] + bj * kb[j])
                # own: the direction whose terms go to point i; other: to point j
                qo, lw = (qa, la) if by_row or sym else (qb, lb)
                qt, lt, tt = (qb, lb, tb) if by_row and not sym else (qa, la, ta)
                ab, bb = abuf[c, j0:], bbuf[c, j0:]
                for j in range(bm):  # loops of few arrays: LLVM's runtime overlap checks pass
                    bb[j] += qt[j] * lt[j]
                for j in range(bm):  # d2 is free: the row's B terms
                    d2[j] = qo[j] * lw[j]
                if want_a:
                    for j in range(bm):
                        ab[j] += tt[j]
                if want_grad:
                    _block_forces(Yt, i, j0, ka, gbuf[c, :k], ft[:k, b0:], bm)
                    if sym:
                        _block_forces(Yt, i, j0, qa, gbuf[c, k:], ft[k:, b0:], bm)
            bbuf[c, i] += pairwise_sum(d2r, m)
            if want_a:
                abuf[c, i] += pairwise_sum(tar if by_row or sym else tbr, m)
            if want_grad:
                for d in range(nf):
                    gbuf[c, d, i] += pairwise_sum(ft[d], m)
    if want_a:
        reduce_chunks(bounds, np.empty((0, 0, 0)), abuf, False, True, np.empty((0, 0)), A)
    reduce_chunks(bounds, gbuf, bbuf, want_grad, True, G, B)


@njit(parallel=True, cache=True, error_model="numpy")
def shift_forces(Yt, beta, logz, ratio, eps, cs, bounds, d2_scratch, qa_scratch, qb_scratch,
                 k_scratch, l_scratch, gbuf, fbuf, G):
    """``G`` (n, k): the forces of the shift's part of a row-normalised Q's stiffness,
    ``K_ij = cs_i q_ij + cs_j q_ji`` (``cs`` (n,): each row's coefficient times its shift), with
    ``q`` as :func:`mixture_sums` (no P read; ``ratio`` as there; rows in blocks as there).
    Scratch ``*_scratch`` (chunks, n); ``gbuf`` and ``fbuf`` (the forces' terms): (chunks, k,
    n)."""
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    log_eps = math.log(eps)
    scaled = beta.shape[0] > 0
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2r, qar, qbr, kkr, llr = (d2_scratch[c], qa_scratch[c], qb_scratch[c], k_scratch[c],
                                   l_scratch[c])
        ft = fbuf[c]
        clear_chunk(gbuf, np.empty((0, 0)), c, lo, k, True, False)
        for i in range(lo, hi):
            m = n - i - 1
            ci = cs[i]
            for b0 in range(0, m, BLOCK):
                bm = min(BLOCK, m - b0)
                j0 = i + 1 + b0
                d2, qa, qb, kk, ll = d2r[b0:], qar[b0:], qbr[b0:], kkr[b0:], llr[b0:]
                _block_d2(Yt, i, j0, d2, bm)
                if ratio.shape[0] == 2:  # distinct arrays: LLVM's overlap checks pass
                    _row_log_q_both(d2, logz, ratio, i, j0, log_eps, kk, qa, ll, qb, bm)
                else:
                    _row_log_q(d2, beta[i:i + 1] if scaled else beta, scaled, logz[i:i + 1],
                               False, log_eps, kk, qa, bm)
                    _row_log_q(d2, beta[j0:] if scaled else beta, scaled, logz[j0:], True,
                               log_eps, kk, qb, bm)
                ct = cs[j0:]
                for j in range(bm):
                    kk[j] = ci * qa[j] + ct[j] * qb[j]
                _block_forces(Yt, i, j0, kk, gbuf[c], ft[:, b0:], bm)
            for d in range(k):
                gbuf[c, d, i] += pairwise_sum(ft[d], m)
    reduce_chunks(bounds, gbuf, np.empty((0, 0)), True, False, G, np.empty(0))


@njit(parallel=True, cache=True, error_model="numpy")
def plogp_excess_rows(P, f, eps):
    """Row sums over every j (the diagonal included) of ``Pc log Pc - xlogy(p, p)`` with ``p = f
    P_ij`` and ``Pc = max(p, eps)`` (non-zero only where ``p < eps``): JSE's constant."""
    n = P.shape[0]
    out = np.empty(n)
    for i in prange(n):
        row = P[i]
        s = 0.0
        for j in range(n):
            p = f * row[j]
            if p < eps:  # else Pc = p: the term is 0
                v = eps * math.log(eps)
                if p != 0.0:
                    v -= p * math.log(p)
                s += v
        out[i] = s
    return out
