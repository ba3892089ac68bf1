"""Numba kernels of the fused exact engine for NCVis's expected NCE cost (compiled on first use and
cached on disk; the formulas of :mod:`smallvis.methods.ncvis`).

Per ordered pair, with ``x = d_ij^2``, ``qhat = 1 / (1 + a x^b)``, the logit
``t_ij = log qhat - log(nu pi_i) - Q`` (evaluated as ``e^t = qhat ec_i`` with the per-point
``ec_i = e^(-Q) / (nu pi_i)``: no logarithm or exponential per pair in the profile's passes), the
data weight ``p = f P_ij`` (P symmetric) and the noise weight ``s_i = nu p_i / (n - 1)`` of the
pair's head:

- cost ``p softplus(-t_ij) + s_i softplus(t_ij)`` (to point i),
- ``dC/dQ`` term ``p (1 - sigma_ij) - s_i sigma_ij``, ``d2C/dQ2`` term
  ``(p + s_i) sigma_ij (1 - sigma_ij)`` (``sigma = expit(t)``),
- stiffness ``K_ij = 2 g (f_ij + f_ji)`` with ``g = a b x^b qhat / x`` (0 at ``x = 0``),

a pair with neither data nor noise weight contributing nothing. Each unordered pair is visited
once, for both of its directions; fixed chunks and per-chunk partial sums added in chunk order (the
chunking of :mod:`.exact_kernels`), so the numbers do not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import exp1, log1, log1p1
from .exact_kernels import _row_d2, add_pair_forces, clear_chunk, reduce_chunks

# slots of the parameter vector: the exaggeration, the curve's a and b
F, A, B = range(3)
N_PARAMS = 3


@njit(cache=True, error_model="numpy", inline="always")
def _logistic(r):
    """``(sigma, 1 - sigma)`` of the logit ``log r`` (``r`` in [0, inf]) from one division:
    ``1 - sigma = 1 / (1 + r)``, ``sigma = r (1 - sigma)`` up to ``r = 1`` and ``1 - (1 - sigma)``
    above (exact to an ulp of sigma, which is then at least 1/2; 1 at ``r = inf``); a select, no
    branch: the pair loops vectorise."""
    om = 1.0 / (1.0 + r)
    return (r * om if r <= 1.0 else 1.0 - om), om


@njit(cache=True, error_model="numpy")
def _row_curve(prm, d2, g, m, want_g):
    """``d2[j]`` becomes ``qhat = 1 / (1 + a x^b)`` and, with ``want_g``, ``g[j]`` the factor
    ``a b x^b qhat / x`` (0 at ``x = 0``), for ``j < m`` (``g`` is scratch without ``want_g``).
    ``x^b`` is :func:`smallvis._util.vmath.pow1`'s ``exp(b log x)`` in two loops, a log pass then
    an exp pass (one loop of both runs slower): the same bits."""
    a, b = prm[A], prm[B]
    for j in range(m):
        x = max(d2[j], 0.0)
        g[j] = x
        d2[j] = b * log1(x)
    for j in range(m):
        x = g[j]
        apb = a * (1.0 if b == 0.0 else exp1(d2[j]))  # pow1's x^0 = 1
        qhat = 1.0 / (1.0 + apb)
        d2[j] = qhat
        if want_g:
            gj = b * apb * qhat / x
            g[j] = gj if x > 0.0 else 0.0


@njit(parallel=True, cache=True, error_model="numpy")
def nce_dq(Yt, P, ec, neg, prm, bounds, d2_scratch, g_scratch, fa_scratch, fb_scratch,
           fc_scratch):
    """``(dC/dQ, d2C/dQ2, d3C/dQ3)``: sums over the ordered pairs (``ec``: the per-point
    ``e^(-Q) / (nu pi_i)``, so that ``e^t = qhat ec_i``; ``neg``: the noise weights ``s_i``); the
    third derivative's terms are ``(p + s) sigma (1 - sigma) (sigma - (1 - sigma))``.
    Scratch: (chunks, n) each."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    f = prm[F]
    part = np.zeros((chunks, 3))
    for c in prange(chunks):
        d2, g, fa, fb = d2_scratch[c], g_scratch[c], fa_scratch[c], fb_scratch[c]
        fc = fc_scratch[c]
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            m = n - i - 1
            _row_d2(Yt, i, d2)
            _row_curve(prm, d2, g, m, False)
            prow = P[i, i + 1:]
            ci, si = ec[i], neg[i]
            ct, st = ec[i + 1:], neg[i + 1:]
            for j in range(m):  # both directions computed, dead ones selected away: no branch
                p = f * prow[j]
                s = st[j]
                sig, om = _logistic(d2[j] * ci)
                a1 = p * om - si * sig
                a2 = (p + si) * sig * om
                a3 = a2 * (sig - om)
                live_i = p != 0.0 or si != 0.0  # else ci may be inf (a row without noise)
                v1 = a1 if live_i else 0.0
                v2 = a2 if live_i else 0.0
                v3 = a3 if live_i else 0.0
                sig, om = _logistic(d2[j] * ct[j])
                b1 = p * om - s * sig
                b2 = (p + s) * sig * om
                b3 = b2 * (sig - om)
                live_j = p != 0.0 or s != 0.0
                fa[j] = v1 + b1 if live_j else v1
                fb[j] = v2 + b2 if live_j else v2
                fc[j] = v3 + b3 if live_j else v3
            s1 += pairwise_sum(fa, m)
            s2 += pairwise_sum(fb, m)
            s3 += pairwise_sum(fc, m)
        part[c, 0] = s1
        part[c, 1] = s2
        part[c, 2] = s3
    return _chunk_totals(part)


@njit(cache=True, error_model="numpy")
def _chunk_totals(part):
    """The columns of ``part`` (chunks, 3) summed in chunk order."""
    F_ = 0.0
    dF = 0.0
    d2F = 0.0
    for c in range(part.shape[0]):
        F_ += part[c, 0]
        dF += part[c, 1]
        d2F += part[c, 2]
    return F_, dF, d2F


@njit(cache=True, error_model="numpy", inline="always")
def _direction(p, s, r, want_cost):
    """One direction of a pair with ``e^t = r``: ``(dC/dQ term, d2C/dQ2 term, sigma, 1 - sigma,
    cost)``, the cost
    ``p softplus(-t) + s softplus(t)`` (its noise part only where ``s > 0``); no branch but the
    loop-invariant ``want_cost``. The dQ terms are :func:`nce_dq`'s (the same operations)."""
    sig, om = _logistic(r)
    cost = 0.0
    if want_cost:
        data = p * log1p1(1.0 / r)
        noise = s * log1p1(r)
        cost = data if p != 0.0 else 0.0
        cost = cost + noise if s > 0.0 else cost
    return p * om - s * sig, (p + s) * sig * om, sig, om, cost


@njit(parallel=True, cache=True, error_model="numpy")
def nce_terms(Yt, P, ec, neg, prm, bounds, want_cost, want_grad, want_dq, d2_scratch, g_scratch,
              k_scratch, c_scratch, fa_scratch, fb_scratch, fc_scratch, gbuf, cbuf, G, pcost):
    """Per-pair pass: ``G`` (n, k) the gradient and ``pcost`` (n,) the per-point costs (row sums:
    a pair's cost in direction i -> j goes to point i); ``ec``, ``neg``: as :func:`nce_dq`. With
    ``want_dq`` also returns :func:`nce_dq`'s three derivative sums at the same ``ec`` (the same
    bits: the same terms and sums), else zeros. Scratch: ``*_scratch`` (chunks, n; ``fa``-``fc``
    read only with ``want_dq``); ``gbuf`` (chunks, k, n) and ``cbuf`` (chunks, n) hold each
    chunk's partial sums."""
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    f = prm[F]
    part = np.zeros((chunks, 3))
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, g, kk, cc = d2_scratch[c], g_scratch[c], k_scratch[c], c_scratch[c]
        fa, fb, fc = fa_scratch[c], fb_scratch[c], fc_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, k, want_grad, want_cost)
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(lo, hi):
            m = n - i - 1
            _row_d2(Yt, i, d2)
            _row_curve(prm, d2, g, m, want_grad)
            prow = P[i, i + 1:]
            cb = cbuf[c, i + 1:]
            ci, si = ec[i], neg[i]
            ct, st = ec[i + 1:], neg[i + 1:]
            for j in range(m):  # both directions computed, dead ones selected away: no branch
                p = f * prow[j]
                s = st[j]
                ti, hi_, si_, oi, ui = _direction(p, si, d2[j] * ci, want_cost)
                tj, hj, sj, oj, uj = _direction(p, s, d2[j] * ct[j], want_cost)
                live_i = p != 0.0 or si != 0.0  # else ci may be inf (a row without noise)
                live_j = p != 0.0 or s != 0.0
                fi = ti if live_i else 0.0
                fj = tj if live_j else 0.0
                cc[j] = ui if live_i else 0.0
                if want_cost:
                    cb[j] += uj if live_j else 0.0
                if want_dq:  # nce_dq's selects
                    v2 = hi_ if live_i else 0.0
                    v3 = hi_ * (si_ - oi) if live_i else 0.0
                    fa[j] = fi + tj if live_j else fi
                    fb[j] = v2 + hj if live_j else v2
                    fc[j] = v3 + hj * (sj - oj) if live_j else v3
                kk[j] = 2.0 * g[j] * (fi + fj)
            if want_cost:
                cbuf[c, i] += pairwise_sum(cc, m)
            if want_dq:
                s1 += pairwise_sum(fa, m)
                s2 += pairwise_sum(fb, m)
                s3 += pairwise_sum(fc, m)
            if want_grad:  # d2 is free: the terms' scratch
                add_pair_forces(Yt, i, kk, gbuf[c], m, d2)
        part[c, 0] = s1
        part[c, 1] = s2
        part[c, 2] = s3
    reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, G, pcost)
    return _chunk_totals(part)
