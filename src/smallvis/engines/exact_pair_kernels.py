"""Numba kernels of the fused exact engine for the costs that are not KL(P || W/Z) (compiled on first
use and cached on disk).

One driver, :func:`pair_pass`, visits every unordered pair ``i < j`` once with the chunking of
:mod:`.exact_kernels` (fixed chunks, per-chunk accumulation buffers added in chunk order: the
results do not depend on the number of threads). Per row it computes the squared distances, then
calls the row function of the method's divergence, which fills for ``j > i``

- ``kk[j]``: the stiffness ``K_ij`` of the force form ``grad_i = sum_j K_ij (y_i - y_j)``,
- ``k2[j]``: a second stiffness whose forces are returned apart (the f-divergences' part that the
  global sum ``S`` multiplies, known only after the pass),
- ``cc[j]``: the pair's cost term (added to both points: per-point costs are column sums of a
  symmetric pair matrix),

and returns its share of the global sum ``S`` (the pass returns ``S`` over ordered pairs).

The input value of a pair (``P_ij`` times the exaggeration, the input distance ``R_ij``, or tee's
un-normalised affinity ``V_ij``) is read from ``X[i, j]``, and a second per-pair value (ee's
repulsion weight) from ``X2[i, j]`` (a single row of ones when the cost has none); with a sparse
P the pass runs with ``X`` a single row of zeros and :func:`stored_pair_terms` adds, over the
stored entries, the part of each pair's terms that P contributes (for the costs that are affine in
P: largevis, umap).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import exp1, log1, log1p1
from .exact_ab_kernels import AB_BASE, row_ab
from .exact_kernels import _row_d2, add_pair_forces, clear_chunk, reduce_chunks
from .exact_row_kernels import add_two_forces_2d

# divergences (the row function to call)
KL_REPULSION, LARGEVIS, UMAP, RKL, JS, CHI2, HELLINGER, MMDS, SSTRESS, SAMMON, EE, TEE = range(12)
# the cross-entropy with Q = W / Z (ntumap, cetsne): served by _row_fdiv, with a code of its own
NORMALISED_CE = 20
# output weights: 1/(1 + d2), 1/(1 + a d2), 1/(1 + a d2^b), 1/(1 + e^d2), (1 + a d2)^(-1/a)
W_T, W_CAUCHY, W_UMAP, W_LOGISTIC, W_HEAVY = range(5)
# slots of the parameter vector ``prm``
F, GAMMA, GR_EPS, EPS, A, B, INV_Z, RMAX, NORM, GR_1MW, SIGNED = range(11)
N_PARAMS = 11


@njit(cache=True, error_model="numpy")
def _log1pexp(x):
    """``log(1 + e^x)`` for ``x >= 0``, as NumPy's ``logaddexp(0, x)``."""
    return x + math.log1p(math.exp(-x))


@njit(cache=True, error_model="numpy")
def _umap_weight(log_a, b, x):
    """``1 / (1 + a x^b)`` with ``a x^b = exp(log a + b log x)`` (a quarter faster than ``pow``)."""
    return 1.0 / (1.0 + math.exp(log_a + b * math.log(x))) if x > 0.0 else 1.0


@njit(cache=True, error_model="numpy")
def _row_kl_repulsion(wk, prm, d2, kk, m):
    """KL's repulsion: ``kk = w^(1 + alpha)`` (the stiffness of ``R_i``); returns ``sum w``
    (``d2`` is overwritten by ``w``)."""
    if wk == W_T:
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            kk[j] = w * w
            d2[j] = w
    else:
        alpha = prm[A]
        inv_alpha = 1.0 / alpha
        for j in range(m):
            ad2 = alpha * d2[j]
            w = math.exp(-math.log1p(ad2) * inv_alpha)
            kk[j] = w / (1.0 + ad2)
            d2[j] = w
    return pairwise_sum(d2, m)


@njit(cache=True, error_model="numpy")
def _row_largevis(wk, prm, xrow, d2, kk, cc, m, want_cost, want_grad):
    """LargeVis: ``c = p (-log w) - gamma log(1 - w + eps)``, ``k = 4 (p g - gamma r)``
    (:mod:`smallvis.methods.largevis` for ``g`` and the softened repulsion ``r``)."""
    f, gamma, gr_eps, eps = prm[F], prm[GAMMA], prm[GR_EPS], prm[EPS]
    if wk == W_LOGISTIC:  # w = 1/(1 + e^d2): -log w = log(1 + e^d2), 1 - w = 1/(1 + e^-d2)
        for j in range(m):
            x = d2[j]
            p = f * xrow[j]
            nlw = _log1pexp(x)
            w = math.exp(-nlw)
            if want_grad:
                kk[j] = 4.0 * (p * (1.0 - w) - gamma * w)
            if want_cost:
                omw = math.exp(-math.log1p(math.exp(-x)))
                cc[j] = p * nlw - gamma * math.log(omw + eps)
        return 0.0
    s = prm[A]  # 1 for the t weight
    one_minus_w_form = prm[GR_1MW] != 0.0
    for j in range(m):
        x = d2[j]
        p = f * xrow[j]
        sx = s * x
        w = 1.0 / (1.0 + sx)
        if want_grad:
            g = w * s
            if one_minus_w_form:
                r = g * w / (1.0 - w + gr_eps)
            elif wk == W_T:
                r = w * w / (1.0 + (gr_eps - 1.0) * w)
            else:
                r = w / (x + gr_eps)
            kk[j] = 4.0 * (p * g - gamma * r)
        if want_cost:
            cc[j] = p * math.log1p(sx) - gamma * math.log(1.0 - w + eps)
    return 0.0


@njit(cache=True, error_model="numpy")
def _row_umap(wk, prm, xrow, d2, kk, cc, m, want_cost, want_grad):
    """Fuzzy cross-entropy less its constant: ``c = -p log(w + eps) - (1 - p) log(1 - w + eps)``;
    ``k = 4 b (p - w) / (d2 + eps + gr_eps)`` (UMAP curve) or
    ``4 w (p - w) / (1 - w + eps + gr_eps)`` (t weight)."""
    f, gr_eps, eps, b = prm[F], prm[GR_EPS], prm[EPS], prm[B]
    if wk == W_UMAP:  # w = 1 / (1 + exp(log a + b log x)) in a log pass and an exp pass (in kk)
        log_a = log1(prm[A])
        for j in range(m):
            x = d2[j]
            kk[j] = log1(x) if x > 0.0 else -math.inf  # w = 1 where x <= 0 (or NaN)
        for j in range(m):
            kk[j] = 1.0 / (1.0 + exp1(log_a + b * kk[j]))
        if want_cost:
            for j in range(m):
                w = kk[j]
                p = f * xrow[j]
                cc[j] = -(p * math.log(w + eps) + (1.0 - p) * math.log1p(-w + eps))
        if want_grad:
            for j in range(m):
                kk[j] = 4.0 * b * (f * xrow[j] - kk[j]) / (d2[j] + eps + gr_eps)
        return 0.0
    for j in range(m):
        x = d2[j]
        p = f * xrow[j]
        w = 1.0 / (1.0 + x)
        if want_grad:
            kk[j] = 4.0 * w * (p - w) / (1.0 - w + eps + gr_eps)
        if want_cost:
            cc[j] = -(p * math.log(w + eps) + (1.0 - p) * math.log1p(-w + eps))
    return 0.0


@njit(cache=True, error_model="numpy")
def _row_fdiv(div, prm, xrow, d2, kk, k2, cc, m, want_cost):
    """The f-divergences and the normalised cross-entropy with ``w = 1/(1 + d2)``, ``q = w / Z``:
    ``k2 = q w`` and the pair's cost, its share of ``S`` and ``kk`` such that ``K = kk + c S k2``
    (``c`` per divergence); ``d2`` is overwritten by the terms of ``S``. The cross-entropy's and
    JS's cost terms only with ``want_cost`` (the others' cost is a term of ``S``)."""
    f, eps, inv_z = prm[F], prm[EPS], prm[INV_Z]
    if div == NORMALISED_CE:
        # c = -(p log q + (1 - p) log(1 - q + eps)); C = (p - q) / (1 - q); S = sum C;
        # K = 4 w (C - S q)
        if want_cost:  # a loop of its own: the gradient's loop then vectorises
            for j in range(m):
                q = (1.0 / (1.0 + d2[j])) * inv_z
                p = f * xrow[j]
                cc[j] = -(p * log1(q) + (1.0 - p) * log1p1(-q + eps))
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            q = w * inv_z
            p = f * xrow[j]
            cr = (p - q) / (1.0 - q)
            d2[j] = cr
            kk[j] = 4.0 * w * cr
            k2[j] = q * w
    elif div == RKL:  # L = log(q / max(p, eps)); c = q L; S = sum q L; K = 4 q w (S - L)
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            q = w * inv_z
            qw = q * w
            L = log1(q / max(f * xrow[j], eps))
            v = q * L
            cc[j] = v
            d2[j] = v
            kk[j] = -4.0 * qw * L
            k2[j] = qw
    elif div == JS:  # M = (p + q)/2, L = log(q/M); c = (q L - p log M)/2; K = 2 q w (S - L)
        # the logarithms in passes of their own (a loop with a second, conditional log does not
        # vectorise): q / M into kk, M into cc, q into d2, then L, log M, then the terms
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            q = w * inv_z
            mm = 0.5 * (f * xrow[j] + q)
            k2[j] = q * w
            kk[j] = q / mm
            cc[j] = mm
            d2[j] = q
        for j in range(m):
            kk[j] = log1(kk[j])
        if want_cost:
            for j in range(m):
                cc[j] = log1(cc[j])
        for j in range(m):
            L = kk[j]
            v = d2[j] * L
            if want_cost:
                cc[j] = 0.5 * (v - (f * xrow[j]) * cc[j])
            d2[j] = v
            kk[j] = -2.0 * k2[j] * L
    elif div == CHI2:  # c = (p - q)^2 / q; S = sum p^2 / q; K = 4 q w (p^2 / q^2 - S)
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            q = w * inv_z
            qw = q * w
            p = f * xrow[j]
            iq = 1.0 / q
            diff = p - q
            cc[j] = diff * diff * iq
            t = p * p * iq
            d2[j] = t
            kk[j] = 4.0 * qw * (t * iq)
            k2[j] = qw
    else:  # Hellinger: c = (sqrt p - sqrt q)^2; S = sum sqrt(p q); K = 4 q w (sqrt(p/q) - S)
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            q = w * inv_z
            qw = q * w
            sp = math.sqrt(f * xrow[j])
            sq = math.sqrt(q)
            diff = sp - sq
            cc[j] = diff * diff
            d2[j] = sp * sq
            kk[j] = 4.0 * qw * (sp / sq)
            k2[j] = qw
    return pairwise_sum(d2, m)


@njit(cache=True, error_model="numpy")
def _row_distance(div, prm, xrow, d2, kk, cc, m):
    """Distance costs with ``D = sqrt(d2)``: mmds ``c = (r - D)^2``, ``k = -4 (r - D)/(D + eps)``
    (pairs with ``r > rmax`` and ``D > r`` dropped; with ``SIGNED`` set, ``r`` is ``|x|`` and a
    negative ``x``, -0 included, also marks a droppable pair); smmds ``c = (r^2 - d2)^2``,
    ``k = -8 (r^2 - d2)``; sammon ``c = (r - D)^2 / (r + eps)`` (divided by ``S = sum R`` later),
    ``k = -4 (r - D) / (S (r D + eps))``."""
    eps = prm[EPS]
    if div == MMDS:
        rmax = prm[RMAX]
        signed = prm[SIGNED] != 0.0
        for j in range(m):
            x = xrow[j]
            r = abs(x) if signed else x
            droppable = r > rmax or (signed and math.copysign(1.0, x) < 0.0)
            dist = math.sqrt(d2[j])
            diff = r - dist
            if droppable and dist > r:
                diff = 0.0
            cc[j] = diff * diff
            kk[j] = -4.0 * diff / (dist + eps)
    elif div == SSTRESS:
        for j in range(m):
            r = xrow[j]
            diff = r * r - d2[j]
            cc[j] = diff * diff
            kk[j] = -8.0 * diff
    else:
        norm = prm[NORM]
        for j in range(m):
            r = xrow[j]
            dist = math.sqrt(d2[j])
            diff = r - dist
            cc[j] = diff * diff / (r + eps)
            kk[j] = -4.0 * diff / (norm * (r * dist + eps))
    return 0.0


@njit(cache=True, error_model="numpy")
def _row_elastic(div, prm, xrow, vrow, d2, kk, cc, m, want_cost, want_grad):
    """Elastic embedding (exaggeration ignored, as in :mod:`smallvis.methods.ee`; ``lambda`` in
    ``prm[GAMMA]``). ee, ``w = e^-d2`` and ``r = lambda v w`` (``v`` the pair's repulsion weight):
    ``c = p d2 + r``, ``k = 4 (p - r)``. tee, ``w = 1/(1 + d2)`` and ``x`` the un-normalised
    affinity: ``c = lambda w + x log(1 + d2)`` (divided by ``N = sum V = prm[NORM]``, and the
    per-point constant added, after the pass), ``k = (4 / N) w (x - lambda w)``."""
    lam = prm[GAMMA]
    if div == EE:  # the exponentials in a pass of their own (vectorised), into kk
        for j in range(m):
            kk[j] = exp1(-d2[j])
        if want_cost:
            for j in range(m):
                cc[j] = xrow[j] * d2[j] + lam * vrow[j] * kk[j]
        if want_grad:
            for j in range(m):
                kk[j] = 4.0 * (xrow[j] - lam * vrow[j] * kk[j])
    else:
        scale = 4.0 / prm[NORM]
        for j in range(m):
            x = d2[j]
            v = xrow[j]
            w = 1.0 / (1.0 + x)
            if want_grad:
                kk[j] = scale * w * (v - lam * w)
            if want_cost:
                cc[j] = lam * w + v * math.log1p(x)
    return 0.0


@njit(cache=True, error_model="numpy")
def _row_terms(div, wk, prm, xrow, x2row, d2, kk, k2, cc, m, want_cost, want_grad):
    if div >= AB_BASE:  # the AB-divergence's branches (.exact_ab_kernels)
        return row_ab(div - AB_BASE, wk, prm, xrow, d2, kk, k2, cc, m, want_cost)
    if div == KL_REPULSION:
        return _row_kl_repulsion(wk, prm, d2, kk, m)
    if div == LARGEVIS:
        return _row_largevis(wk, prm, xrow, d2, kk, cc, m, want_cost, want_grad)
    if div == UMAP:
        return _row_umap(wk, prm, xrow, d2, kk, cc, m, want_cost, want_grad)
    if div <= HELLINGER or div == NORMALISED_CE:
        return _row_fdiv(div, prm, xrow, d2, kk, k2, cc, m, want_cost)
    if div <= SAMMON:
        return _row_distance(div, prm, xrow, d2, kk, cc, m)
    return _row_elastic(div, prm, xrow, x2row, d2, kk, cc, m, want_cost, want_grad)


@njit(parallel=True, cache=True, error_model="numpy")
def pair_pass(Yt, X, X2, div, wk, prm, bounds, want_cost, want_grad, two_forces,
              d2_scratch, k_scratch, k2_scratch, c_scratch, t_scratch, gbuf, cbuf, G, pcost):
    """Visit every pair once: ``G`` (n, k) the forces of ``kk`` (with ``two_forces``, ``G`` is
    (n, 2k) and its last k columns hold the forces of ``k2``), ``pcost`` (n,) the sums of the pair
    costs; returns ``S`` (over ordered pairs).

    ``X``: (n, n) input values, or (1, n) zeros; ``X2``: (n, n) second per-pair values, or (1, n)
    ones (read only by the costs that have them: ee). Scratch: ``*_scratch`` (chunks, n; ``t_scratch``
    (chunks, 2, n), read only with ``two_forces`` in 2-D, where both force sums share a loop); ``gbuf``
    (chunks, k or 2k, n) and ``cbuf`` (chunks, n) hold each chunk's partial sums.
    """
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    dense_x = X.shape[0] == n
    dense_x2 = X2.shape[0] == n
    nf = 2 * k if two_forces else k
    part = np.zeros(chunks)
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, kk, k2, cc = d2_scratch[c], k_scratch[c], k2_scratch[c], c_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, nf, want_grad, want_cost)
        s = 0.0
        for i in range(lo, hi):
            m = n - i - 1
            xrow = X[i if dense_x else 0, i + 1:]
            x2row = X2[i if dense_x2 else 0, i + 1:]
            _row_d2(Yt, i, d2)
            s += _row_terms(div, wk, prm, xrow, x2row, d2, kk, k2, cc, m, want_cost, want_grad)
            if want_cost:
                cb = cbuf[c, i + 1:]
                for j in range(m):
                    cb[j] += cc[j]
                cbuf[c, i] += pairwise_sum(cc, m)
            if want_grad and two_forces and k == 2:  # one loop; d2, cc, t: the terms' scratch
                add_two_forces_2d(Yt, i, kk, k2, gbuf[c, :k], gbuf[c, k:], m, d2, cc,
                                  t_scratch[c, 0], t_scratch[c, 1])
            elif want_grad:  # d2 is free: the terms' scratch
                add_pair_forces(Yt, i, kk, gbuf[c, :k], m, d2)
                if two_forces:
                    add_pair_forces(Yt, i, k2, gbuf[c, k:], m, d2)
        part[c] = s
    reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, G, pcost)
    total = 0.0
    for c in range(chunks):
        total += part[c]
    return 2.0 * total


@njit(cache=True, error_model="numpy")
def _stored_terms(div, wk, prm, p, x):
    """The part ``(dk, dc)`` of a pair's stiffness and cost that its P value ``p`` contributes
    (largevis, umap: both are affine in p)."""
    if div == LARGEVIS:
        if wk == W_LOGISTIC:
            nlw = _log1pexp(x)
            return 4.0 * p * (1.0 - math.exp(-nlw)), p * nlw
        s = prm[A]
        sx = s * x
        return 4.0 * p * (s / (1.0 + sx)), p * math.log1p(sx)
    eps = prm[EPS]
    if wk == W_UMAP:
        w = _umap_weight(math.log(prm[A]), prm[B], x)
        dk = 4.0 * prm[B] * p / (x + eps + prm[GR_EPS])
    else:
        w = 1.0 / (1.0 + x)
        dk = 4.0 * w * p / (1.0 - w + eps + prm[GR_EPS])
    return dk, p * (math.log1p(-w + eps) - math.log(w + eps))


@njit(parallel=True, cache=True, error_model="numpy")
def stored_pair_terms(indptr, indices, data, Y, div, wk, prm, want_grad, want_cost, G, pcost):
    """Add to ``G`` (n, k) and ``pcost`` (n,) the part of each pair's forces and cost that the stored
    entries of the symmetric CSR matrix ``P`` contribute (times the exaggeration ``prm[F]``).

    Rows are independent (row ``i`` writes only ``G[i]`` and ``pcost[i]``; P symmetric: row sums are
    column sums), so the result does not depend on the number of threads.
    """
    n, k = Y.shape
    f = prm[F]
    for i in prange(n):
        ci = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            x = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                x += diff * diff
            dk, dc = _stored_terms(div, wk, prm, f * data[e], x)
            if want_grad:
                for d in range(k):
                    G[i, d] += dk * (Y[i, d] - Y[j, d])
            ci += dc
        if want_cost:
            pcost[i] += ci
