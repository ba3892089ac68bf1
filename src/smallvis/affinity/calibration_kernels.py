"""Numba kernels of the perplexity calibration (compiled on first use and cached on disk).

Each point's precision ``beta`` is found by the bisection of the original's R path
(docs/original.md#perplexity-calibration):
the Shannon entropy (nats) of ``p_j = w_j / Z``, ``w_j = exp(-beta d_j)``,

.. math:: H = \\log Z + \\beta \\sum_j d_j w_j / Z \\qquad (H = 0 \\text{ if } Z = 0),

is brought within ``tol`` of ``log U`` by doubling/halving ``beta`` until the target is bracketed,
then bisecting, for at most ``max_tries`` steps. The kernels make the same decisions as
:func:`smallvis.affinity.perplexity._bisect`; two things make them fast:

- ``exp`` is evaluated by a vectorisable routine (Cody-Waite reduction, degree-13 Taylor
  polynomial, exponent built from integer bits; within 1.01 ulp of libm, gradual underflow kept),
  and ``log`` likewise (within 1.6 ulp);
- an entropy evaluation skips the entries with ``beta (d_j - min d) > CUTOFF`` (50): each of them
  is below ``e^-50`` times the largest weight, so together they move ``Z`` by less than
  ``(m - 1) e^-50`` relative (``4e-18`` at ``m = 20,000``) and, as ``Z > 0`` needs
  ``beta min d < 746``, ``H`` by less than ``(m - 1) 800 e^-50`` (``3e-15``). The kept entries are
  selected again only when ``beta`` falls below the smallest precision tried so far on the row.

The converged weights, ``Z``, ``H`` and the intrinsic dimensionality
``dint = -2 beta sum_j d_j p_j (log(p_j + eps) + H)`` are then computed over the whole row.

Kernels take arrays and scalars only; validation, logging and the fallback policy's documentation
live in :mod:`smallvis.affinity.blocked` and :mod:`smallvis.affinity.nngaussian`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum

CUTOFF = 50.0
EPS = float(np.finfo(np.float64).eps)

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0  # 1.5 * 2^52: (t + _ROUND) - _ROUND rounds t to an integer
_SUBNORMAL_SCALE = 2.0**-54
_MANTISSA = (1 << 52) - 1
_ONE_BITS = 1023 << 52


@njit(cache=True, error_model="numpy")
def _exp_parts(beta, d, w, bits):
    """``exp(-beta d[j]) = w[j] * 2^k`` with ``bits[j]`` the bit pattern of ``2^k`` (the
    float64 view of ``bits`` is the scale; ``d >= 0``, ``beta >= 0``)."""
    for j in range(d.shape[0]):
        x = -beta * d[j]
        x = x if x > -745.5 else -745.5  # exp(-745.5) rounds to 0
        kf = (x * _LOG2E + _ROUND) - _ROUND
        r = (x - kf * _LN2_HI) - kf * _LN2_LO  # |r| <= ln(2) / 2
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        # below 2^-1020 scale in two steps so that subnormal results round once
        small = kf < -1020.0
        w[j] = p * _SUBNORMAL_SCALE if small else p
        bits[j] = (np.int64(kf + 54.0 if small else kf) + 1023) << 52


@njit(cache=True, error_model="numpy")
def exp_neg(beta, d, w, bits):
    """``w[j] = exp(-beta d[j])`` for ``d >= 0``, ``beta >= 0`` (``bits``: int64 scratch)."""
    m = d.shape[0]
    _exp_parts(beta, d, w, bits)
    scale = bits[:m].view(np.float64)
    for j in range(m):
        w[j] = w[j] * scale[j]


@njit(cache=True, error_model="numpy")
def _scaled_sums(d, w, bits):
    """``(sum_j e_j, sum_j d_j e_j)`` with ``e_j = w[j] * 2^k_j`` from :func:`_exp_parts`, in the
    fixed order of :func:`pairwise_sum` (``w`` and ``bits`` are overwritten)."""
    m = d.shape[0]
    scale = bits[:m].view(np.float64)
    for j in range(m):
        e = w[j] * scale[j]
        w[j] = e
        scale[j] = d[j] * e
    return pairwise_sum(w, m), pairwise_sum(scale, m)


@njit(cache=True, error_model="numpy")
def _sums(d, w, a, b):
    """``(sum_j w_j, sum_j d_j w_j)`` in the fixed order of :func:`pairwise_sum` (``a``, ``b``:
    scratch of at least len(d))."""
    m = d.shape[0]
    for j in range(m):
        a[j] = w[j]
        b[j] = d[j] * w[j]
    return pairwise_sum(a, m), pairwise_sum(b, m)


@njit(cache=True, error_model="numpy")
def _entropy(beta, d, w, bits):
    """``(H, Z)`` of the weights ``exp(-beta d)`` (``w``, ``bits``: scratch of at least len(d))."""
    _exp_parts(beta, d, w, bits)
    z, s = _scaled_sums(d, w, bits)
    if z == 0.0:
        return 0.0, z
    return math.log(z) + beta * s / z, z


@njit(cache=True, error_model="numpy")
def _select(d, cut, sel):
    """Copy the entries ``d[j] <= cut`` to the front of ``sel``; returns how many."""
    m = 0
    for j in range(d.shape[0]):
        if d[j] <= cut:
            sel[m] = d[j]
            m += 1
    return m


@njit(cache=True, error_model="numpy")
def bisect_row(d, log_u, beta, tol, max_tries, sel, w, bits):
    """Bisection on ``beta`` for one point's values ``d`` (self excluded), from ``beta``.

    Returns ``(beta, converged)``. ``sel``, ``w``, ``bits``: scratch of at least ``len(d)``.
    """
    dmin = np.inf
    for j in range(d.shape[0]):
        if d[j] < dmin:
            dmin = d[j]
    beta_ref = np.inf  # the kept entries serve every precision >= beta_ref
    m = 0
    bmin = -np.inf
    bmax = np.inf
    tries = 0
    while True:
        if beta < beta_ref:
            beta_ref = beta
            m = _select(d, dmin + CUTOFF / beta_ref, sel)
        H, z = _entropy(beta, sel[:m], w, bits)
        if not (abs(H - log_u) > tol and tries < max_tries):
            break
        if H > log_u:
            bmin = beta
            beta = beta * 2.0 if bmax == np.inf else (beta + bmax) / 2.0
        else:
            bmax = beta
            beta = beta / 2.0 if bmin == -np.inf else (beta + bmin) / 2.0
        tries += 1
    return beta, abs(H - log_u) <= tol


@njit(cache=True, error_model="numpy")
def log_pos(x, out, bits):
    """``out[j] = log(x[j])`` for positive normal ``x`` (``bits``: int64 scratch, len(x)).

    Exponent and mantissa ``f`` from the bit pattern (``f`` moved to [sqrt(1/2), sqrt(2))), then
    ``log f = 2 atanh(s)``, ``s = (f - 1) / (f + 1)``, by its series to ``s^23``; within 1.6 ulp of
    libm.
    """
    m = x.shape[0]
    xb = x.view(np.int64)
    for j in range(m):
        b = xb[j]
        bits[j] = (b & _MANTISSA) | _ONE_BITS
        out[j] = np.float64((b >> 52) - 1023)
    mant = bits[:m].view(np.float64)
    for j in range(m):
        f = mant[j]
        e = out[j]
        big = f > 1.4142135623730951
        f = 0.5 * f if big else f
        e = e + 1.0 if big else e
        s = (f - 1.0) / (f + 1.0)
        z = s * s
        p = 1.0 / 23.0
        p = p * z + 1.0 / 21.0
        p = p * z + 1.0 / 19.0
        p = p * z + 1.0 / 17.0
        p = p * z + 1.0 / 15.0
        p = p * z + 1.0 / 13.0
        p = p * z + 1.0 / 11.0
        p = p * z + 1.0 / 9.0
        p = p * z + 1.0 / 7.0
        p = p * z + 1.0 / 5.0
        p = p * z + 1.0 / 3.0
        p = p * z + 1.0
        out[j] = e * _LN2_HI + (2.0 * s * p + e * _LN2_LO)


@njit(cache=True, error_model="numpy")
def _dint_terms(d, w, z, H, logs):
    """``sum_j d_j p_j (log(p_j + eps) + H)``, ``p = w / z``, ``logs[j] = log(p_j + eps)`` (in the
    fixed order of :func:`pairwise_sum`; ``logs`` is overwritten by the terms)."""
    m = d.shape[0]
    for j in range(m):
        logs[j] = d[j] * (w[j] / z) * (logs[j] + H)
    return pairwise_sum(logs, m)


@njit(cache=True, error_model="numpy")
def row_weights(beta, d, w, bits, q, logs):
    """Final weights ``w = exp(-beta d)`` of a converged row; returns ``(Z, H, dint)`` with
    ``dint = -2 beta sum_j d_j p_j (log(p_j + eps) + H)``, ``p = w / Z``
    (``q``, ``logs``: scratch)."""
    exp_neg(beta, d, w, bits)
    z, s = _sums(d, w, q, logs)
    if z == 0.0:
        return z, 0.0, 0.0
    H = math.log(z) + beta * s / z
    for j in range(d.shape[0]):
        q[j] = w[j] / z + EPS
    log_pos(q, logs, bits)
    return z, H, -2.0 * beta * _dint_terms(d, w, z, H, logs)


# --- dense rows, the R path: each point starts from the previous point's beta --------------------


# Element loops rather than slice assignment: numba's slice-assignment shape check builds its
# error message from strings, seconds of compilation on first use.


@njit(cache=True, error_model="numpy")
def _drop_entry(row, i, out):
    """``out`` = ``row`` without entry ``i`` (len(row) - 1 values)."""
    for j in range(i):
        out[j] = row[j]
    for j in range(i + 1, row.shape[0]):
        out[j - 1] = row[j]


@njit(cache=True, error_model="numpy")
def _insert_zero(w, i, row):
    """``row`` = ``w`` with a 0 inserted at ``i`` (the inverse of :func:`_drop_entry`)."""
    for j in range(i):
        row[j] = w[j]
    row[i] = 0.0
    for j in range(i, w.shape[0]):
        row[j + 1] = w[j]


@njit(cache=True, error_model="numpy")
def calibrate_block_warm(A, row0, log_u, n_fallback, beta, tol, max_tries, betas, dint, failed):
    """Calibrate the rows ``row0 .. row0 + len(A) - 1`` of an (n, n) matrix, in place.

    ``A`` (b, n) holds those rows of the matrix entering ``exp(-beta D)`` (the diagonal entry
    ``A[r, row0 + r]`` is ignored) and is overwritten by the weights (zero diagonal). The first row
    starts from ``beta``, each later one from the previous row's converged beta (1 after a failure).
    A failed row gets ``1 / n_fallback[i]`` on its ``n_fallback[i]`` smallest entries (ties: lower
    index first), beta 1 and dint 0. Fills ``betas``, ``dint``, ``failed`` at the global rows and
    returns the start for the next row.
    """
    b, n = A.shape
    d = np.empty(n - 1)
    sel = np.empty(n - 1)
    w = np.empty(n - 1)
    logs = np.empty(n - 1)
    bits = np.empty(n - 1, dtype=np.int64)
    for r in range(b):
        i = row0 + r
        row = A[r]
        _drop_entry(row, i, d)
        beta, dint[i], ok = _warm_row(d, log_u[i], n_fallback[i], beta, tol, max_tries, sel, w,
                                      bits, logs)
        betas[i] = beta
        failed[i] = not ok
        _insert_zero(w, i, row)
    return beta


@njit(cache=True, error_model="numpy")
def _warm_row(d, log_u, n_fallback, beta, tol, max_tries, sel, w, bits, logs):
    """One row of the R path from ``beta``: the weights into ``w``; returns ``(beta, dint, ok)``.
    A failed row gets ``1 / n_fallback`` on its ``n_fallback`` smallest values (ties: lower index
    first), beta 1 (the next row's start) and dint 0."""
    beta, ok = bisect_row(d, log_u, beta, tol, max_tries, sel, w, bits)
    if ok:
        return beta, row_weights(beta, d, w, bits, sel, logs)[2], True
    _mark_smallest(d, n_fallback, 1.0 / n_fallback, w)
    return 1.0, 0.0, False


@njit(cache=True, error_model="numpy")
def _mark_smallest(d, count, value, out):
    """``out[j] = value`` on the ``count`` smallest entries of ``d`` (ties: lower index first,
    as a stable sort), 0 elsewhere; ``out`` may be ``d`` itself. A selection in ``count`` passes
    (the fallback of a failed row, rare) rather than ``np.argsort``, whose stable sort costs
    seconds of compilation on first use."""
    m = d.shape[0]
    values = d.copy()
    taken = np.zeros(m, dtype=np.bool_)
    for _ in range(min(count, m)):
        best = -1
        for j in range(m):
            if not taken[j] and (best < 0 or values[j] < values[best]):
                best = j
        taken[best] = True
    for j in range(m):
        out[j] = value if taken[j] else 0.0


@njit(cache=True, error_model="numpy")
def calibrate_knn_warm(D, log_u, n_fallback, beta, tol, max_tries, W, betas, dint, failed):
    """The R path on neighbour values ``D`` (n, k): row ``i``'s weights into ``W[i]``, starting
    from ``beta`` and then from the previous row's beta, as :func:`calibrate_block_warm`."""
    k = D.shape[1]
    sel = np.empty(k)
    logs = np.empty(k)
    bits = np.empty(k, dtype=np.int64)
    for i in range(D.shape[0]):
        beta, dint[i], ok = _warm_row(D[i], log_u[i], n_fallback[i], beta, tol, max_tries, sel,
                                      W[i], bits, logs)
        betas[i] = beta
        failed[i] = not ok


# --- independent rows (the original's C++ calibration and the nngaussian kernel) -----------------


@njit(cache=True, error_model="numpy")
def _independent_start(u, d):
    """``0.5 U m / sum(d)`` over the ``m`` entries given (1 if they sum to 0)."""
    total = 0.0
    for j in range(d.shape[0]):
        total += d[j]
    return 0.5 * u * d.shape[0] / total if total > 0.0 else 1.0


@njit(parallel=True, cache=True, error_model="numpy")
def calibrate_block_independent(A, row0, u, n_fallback, tol, max_tries, failed):
    """The original's dense C++ calibration (``use_cpp``) of rows ``row0 ..`` of ``A``, in place.

    Row ``i`` starts from ``0.5 U_i n / sum_j A[i, j]`` (the sum includes the zero self entry); a
    failed row gets weight 1 on its ``n_fallback[i]`` smallest entries *including itself* (ties:
    lower index first). Rows are independent: the result does not depend on the thread count.
    """
    b, n = A.shape
    for r in prange(b):
        i = row0 + r
        row = A[r]
        d = np.empty(n - 1)
        sel = np.empty(n - 1)
        w = np.empty(n - 1)
        bits = np.empty(n - 1, dtype=np.int64)
        _drop_entry(row, i, d)
        beta, ok = bisect_row(d, math.log(u[i]), _independent_start(u[i], row), tol, max_tries,
                              sel, w, bits)
        if ok:
            exp_neg(beta, d, w, bits)
            _insert_zero(w, i, row)
        else:
            failed[i] = True
            _mark_smallest(row, n_fallback[i], 1.0, row)


@njit(parallel=True, cache=True, error_model="numpy")
def calibrate_knn_independent(D, u, tol, max_tries):
    """The nngaussian calibration of neighbour values ``D`` (n, k), each row on its own.

    Row ``i`` starts from ``0.5 U_i k / sum_j D[i, j]``; a failed row gets ``1 / k`` on every
    neighbour, beta 1 and dint 0. Returns ``(W, beta, dint, failed)``.
    """
    n, k = D.shape
    W = np.empty((n, k))
    betas = np.ones(n)
    dint = np.zeros(n)
    failed = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        d = D[i]
        sel = np.empty(k)
        logs = np.empty(k)
        bits = np.empty(k, dtype=np.int64)
        w = W[i]
        beta, ok = bisect_row(d, math.log(u[i]), _independent_start(u[i], d), tol, max_tries,
                              sel, w, bits)
        if ok:
            dint[i] = row_weights(beta, d, w, bits, sel, logs)[2]
            betas[i] = beta
        else:
            failed[i] = True
            for j in range(k):
                w[j] = 1.0 / k
    return W, betas, dint, failed


# --- squared distances of a block of rows ----------------------------------------------------


@njit(cache=True, error_model="numpy")
def finish_distances(G, sq, row0, take_sqrt):
    """Turn ``G = X[rows] @ X.T`` (b, n) into the rows' squared distances in place, exactly as
    :func:`smallvis.io.distances.squared_distances` (``(|x_i|^2 + |x_j|^2) - 2 x_i.x_j``,
    negatives clamped to 0, zero diagonal); ``take_sqrt`` then takes square roots."""
    b, n = G.shape
    for r in range(b):
        s = sq[row0 + r]
        row = G[r]
        for j in range(n):
            v = (s + sq[j]) - 2.0 * row[j]
            if v < 0.0:
                v = 0.0
            row[j] = math.sqrt(v) if take_sqrt else v
        row[row0 + r] = 0.0
