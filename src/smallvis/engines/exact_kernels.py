"""Numba kernels of the fused exact engine (compiled on first use and cached on disk).

KL(P || W/Z) with a symmetric P and a symmetric output kernel (Student-t, Gaussian, heavy-tailed,
UMAP's curve, g-SNE's inverse Student-t or dhssne's power form of the heavy-tailed kernel, with the
parameters of :func:`kernel_params`), evaluated pair by pair without any (n, n) temporary: every
unordered pair ``i < j`` is visited once (upper triangle).

Reproducible in parallel without locks, whatever the number of threads:

- the rows are cut into a fixed number of chunks (``N_CHUNKS``, independent of the thread count) of
  about equal numbers of pairs (row ``i`` has ``n - 1 - i`` of them);
- a chunk writes only into its own slice of the accumulation buffers (the force on ``j`` from a pair
  ``(i, j)`` goes to the chunk's buffer row ``j``);
- the chunks' partial sums are then added in chunk order.

Coordinates arrive transposed, ``Yt`` (k, n), so each inner loop runs over contiguous memory and
vectorises for any output dimension k.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import vlog
# the output kernels, generated from their declarations (smallvis.methods.output_kernels)
from .output_kernel_dispatch import row_weights, row_weights_grads
from .exact_row_kernels import add_kl_forces_2d, row_costly_weights, row_costly_weights_inplace
from .output_kernel_functions import (KP_A, KP_ALPHA, KP_B, KP_DOF, KP_GR_EPS, N_PARAMS,
                                      T_KERNEL, t_grad, t_weight)

N_CHUNKS = 32


def kernel_params(alpha=1.0, a=1.0, b=1.0, gr_eps=0.0, dof=1.0) -> np.ndarray:
    """The kernel parameter vector ``kp`` of the kernels (slots ``KP_*``, in the order of
    :data:`smallvis.methods.output_kernels.PARAMS`): the heavy-tailed kernel's ``alpha``; the
    UMAP curve's ``a``, ``b`` and its softening ``gr_eps``; the power form's ``alpha`` and the
    exponent ``b`` of its gradient factor ``g = w^b``; the Student-t kernel's degrees of freedom
    ``dof``."""
    kp = np.zeros(N_PARAMS)
    kp[KP_ALPHA], kp[KP_A], kp[KP_B], kp[KP_GR_EPS], kp[KP_DOF] = alpha, a, b, gr_eps, dof
    return kp


def form_params(form) -> np.ndarray:
    """:func:`kernel_params` of a :class:`~smallvis.methods.base.FusedForm`."""
    return kernel_params(form.alpha, form.a, form.b, form.gr_eps, form.dof)


def chunk_bounds(n: int, chunks: int = N_CHUNKS) -> np.ndarray:
    """Row starts (``chunks + 1``, 0 to n) cutting the upper triangle into equal pair counts."""
    r = np.arange(n + 1, dtype=np.int64)
    before = r * (n - 1) - r * (r - 1) // 2  # pairs (i < j) in rows before r
    targets = (np.arange(chunks + 1, dtype=np.float64) * before[-1] / chunks)
    bounds = np.searchsorted(before, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n
    return np.maximum.accumulate(bounds)


@njit(cache=True, error_model="numpy")
def _row_d2(Yt, i, d2):
    """``d2[j] = |y_i - y_j|^2`` for ``j > i``, written to ``d2[:n - i - 1]``.

    The inner loops run from 0 over slices: with a non-negative index numba's wraparound check
    folds away and LLVM vectorises them.
    """
    k, n = Yt.shape
    m = n - i - 1
    for j in range(m):
        d2[j] = 0.0
    for d in range(k):
        yi = Yt[d, i]
        yd = Yt[d, i + 1:]
        for j in range(m):
            diff = yi - yd[j]
            d2[j] += diff * diff


@njit(cache=True, error_model="numpy")
def _row_weight_sum(code, kp, d2, m):
    """Sum of the output weights ``w(d2[j])`` for ``j < m`` (``d2[:m]`` is overwritten by them and
    summed with :func:`pairwise_sum`)."""
    row_costly_weights_inplace(code, kp, d2, m)
    return pairwise_sum(d2, m)


@njit(cache=True, error_model="numpy")
def _row_t2_weight_sum(Yt, i, w):
    """Student-t weights of row ``i``'s pairs in two dimensions (fused: no distance row); ``w`` is
    scratch (n,)."""
    n = Yt.shape[1]
    m = n - i - 1
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    for j in range(m):
        dx = a - y0[j]
        dy = b - y1[j]
        w[j] = t_weight(dx * dx + dy * dy)
    return pairwise_sum(w, m)


@njit(cache=True, error_model="numpy")
def _row_t2_forces(Yt, i, prow, inv_z, four_f, clamp, eps, q, g0, g1, t0s, t1s):
    """The 2-D Student-t row in one fused loop: ``q[j]``, and the pair forces subtracted from
    ``g0[j], g1[j]`` (the points after ``i``); returns the force on ``i`` (``t0s``, ``t1s``:
    scratch (n,) for its pairwise sums)."""
    n = Yt.shape[1]
    m = n - i - 1
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    for j in range(m):
        dx = a - y0[j]
        dy = b - y1[j]
        d2 = dx * dx + dy * dy
        w = t_weight(d2)
        qj = w * inv_z
        if clamp and qj < eps:
            qj = eps
        q[j] = qj
        kk = (four_f * prow[j] - 4.0 * qj) * t_grad(d2, w)
        t0 = kk * dx
        t1 = kk * dy
        t0s[j] = t0
        t1s[j] = t1
        g0[j] -= t0
        g1[j] -= t1
    return pairwise_sum(t0s, m), pairwise_sum(t1s, m)


@njit(cache=True, error_model="numpy")
def clear_chunk(gbuf, cbuf, c, lo, nf, want_grad, want_cost):
    """Zero chunk ``c``'s partial sums from row ``lo`` on (it writes only rows >= ``lo``)."""
    if want_grad:
        for d in range(nf):
            gbuf[c, d, lo:] = 0.0
    if want_cost:
        cbuf[c, lo:] = 0.0


@njit(cache=True, error_model="numpy")
def add_pair_forces(Yt, i, kk, gb, m, t):
    """``gb[d, i] += sum_j kk[j] (y_id - y_jd)`` and ``gb[d, j] -= kk[j] (y_id - y_jd)`` (``t``:
    scratch (n,) for the terms, summed with :func:`pairwise_sum`)."""
    for d in range(Yt.shape[0]):
        yi = Yt[d, i]
        yd = Yt[d, i + 1:]
        g = gb[d, i + 1:]
        for j in range(m):
            tj = kk[j] * (yi - yd[j])
            t[j] = tj
            g[j] -= tj
        gb[d, i] += pairwise_sum(t, m)


def weight_total(Yt, code, alpha, bounds, scratch):
    """``Z = sum_{i != j} w_ij`` for a kernel with at most the parameter ``alpha``
    (:func:`kernel_total`)."""
    return kernel_total(Yt, code, kernel_params(alpha), bounds, scratch)


@njit(parallel=True, cache=True, error_model="numpy")
def kernel_total(Yt, code, kp, bounds, scratch):
    """``Z = sum_{i != j} w_ij`` (twice the upper triangle's sum); ``kp``: the kernel parameters
    (:func:`kernel_params`); ``scratch`` is (chunks, n)."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    part = np.zeros(chunks)
    fast = Yt.shape[0] == 2 and code == T_KERNEL
    for c in prange(chunks):
        d2 = scratch[c]
        s = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            if fast:
                s += _row_t2_weight_sum(Yt, i, d2)
            else:
                _row_d2(Yt, i, d2)
                s += _row_weight_sum(code, kp, d2, n - i - 1)
        part[c] = s
    total = 0.0
    for c in range(chunks):
        total += part[c]
    return 2.0 * total


@njit(cache=True, error_model="numpy")
def _row_q_stiffness(code, kp, clamp, eps, inv_z, four_f, prow, d2, q, kk, m, want_grad):
    """``q[j] = w_ij / Z`` (floored at eps with ``clamp``) and, with ``want_grad``, the stiffness
    ``kk[j] = 4 (f P_ij - q_ij) g_ij`` for ``j < m`` (``prow``, ``d2``: the pairs of one row)."""
    if want_grad:
        row_weights_grads(code, kp, d2, q, kk, m)  # w in q, g in kk
        for j in range(m):
            qj = q[j] * inv_z
            if clamp and qj < eps:
                qj = eps
            q[j] = qj
            kk[j] = (four_f * prow[j] - 4.0 * qj) * kk[j]
    else:
        row_weights(code, kp, d2, q, m)
        for j in range(m):
            qj = q[j] * inv_z
            if clamp and qj < eps:
                qj = eps
            q[j] = qj


@njit(cache=True, error_model="numpy")
def add_cross_terms(f, prow, q, cb, out, m):
    """A row's cross terms ``v_j = xlogy(f P_ij, q_j)``: ``cb[j] += v_j``, ``out[j] = v_j``
    (``out`` may be ``q``) and their pairwise sum returned. The logarithms in a pass of their own
    (:func:`smallvis._util.vmath.vlog`), then the terms in a loop of selects: both vectorise (one
    loop calling the C library's ``log`` made tsne's cost pass at 20,000 points about 13 gradients'
    time)."""
    vlog(q, out, m)
    for j in range(m):
        p = f * prow[j]
        lq = out[j]
        v = p * lq
        v = v if (p != 0.0 or lq != lq) else 0.0  # xlogy(0, q) = 0 (NaN stays NaN)
        cb[j] += v
        out[j] = v
    return pairwise_sum(out, m)


@njit(parallel=True, cache=True, error_model="numpy")
def kl_terms(P, Yt, f, code, kp, clamp, eps, Z, bounds, want_cost, want_grad,
             d2_scratch, q_scratch, k_scratch, gbuf, cbuf, G, cross):
    """Per-pair pass: ``G`` (n, k) = the gradient ``sum_j 4 (f P_ij - q_ij) g_ij (y_i - y_j)`` and
    ``cross`` (n,) = ``sum_j xlogy(f P_ij, q_ij)`` (P symmetric: row sums are column sums).

    Scratch: ``*_scratch`` (chunks, n); ``gbuf`` (chunks, k, n) and ``cbuf`` (chunks, n) hold each
    chunk's partial sums; ``kp``: the kernel parameters (:func:`kernel_params`).
    """
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    inv_z = 1.0 / Z
    four_f = 4.0 * f
    fast = want_grad and k == 2 and code == T_KERNEL  # the common case, fused
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, q, kk = d2_scratch[c], q_scratch[c], k_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, k, want_grad, want_cost)
        for i in range(lo, hi):
            m = n - i - 1
            prow = P[i, i + 1:]
            if fast:
                s0, s1 = _row_t2_forces(Yt, i, prow, inv_z, four_f, clamp, eps, q,
                                        gbuf[c, 0, i + 1:], gbuf[c, 1, i + 1:], d2, kk)
                gbuf[c, 0, i] += s0
                gbuf[c, 1, i] += s1
            else:
                _row_d2(Yt, i, d2)
                _row_q_stiffness(code, kp, clamp, eps, inv_z, four_f, prow, d2, q, kk, m,
                                 want_grad)
            if want_grad and not fast:  # d2 is free: the terms' scratch
                add_pair_forces(Yt, i, kk, gbuf[c], m, d2)
            if want_cost:
                cbuf[c, i] += add_cross_terms(f, prow, q, cbuf[c, i + 1:], q, m)
    reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, G, cross)


@njit(parallel=True, cache=True, error_model="numpy")
def kl_terms_unnormalised(P, Yt, f, code, kp, bounds, want_cost, want_grad, d2_scratch,
                          w_scratch, g_scratch, ka_scratch, kr_scratch, t_scratch, gbuf, rbuf,
                          cbuf, zpart, attract, repel, cross_w):
    """One pass for KL with a matrix-normalised, unclamped Q (``q = w / Z``): the weights are
    evaluated once per pair and everything that depends on Z is factored out of the sums:
    ``attract`` (n, k) = ``sum_j 4 f P_ij g_ij (y_i - y_j)``, ``repel`` (n, k) = ``sum_j 4 w_ij
    g_ij (y_i - y_j)`` (the gradient is ``attract - repel / Z``), ``cross_w`` (n,) = ``sum_j
    xlogy(f P_ij, w_ij)`` (the cross terms are ``cross_w - log Z sum_j f P_ij``) and ``zpart``
    (chunks,) each chunk's sum of ``w`` over its upper-triangle pairs, summed as
    :func:`kernel_total` does (``Z = 2 sum zpart``, the same bits).

    Scratch: ``*_scratch`` (chunks, n; ``t_scratch`` read only for k = 2, where the two force
    sums share one loop); ``gbuf``, ``rbuf`` (chunks, k, n) and ``cbuf`` (chunks, n) hold each
    chunk's partial sums (added in chunk order: any number of threads, the same bits).
    """
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    four_f = 4.0 * f
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, w, g = d2_scratch[c], w_scratch[c], g_scratch[c]
        ka, kr = ka_scratch[c], kr_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, k, want_grad, want_cost)
        clear_chunk(rbuf, cbuf, c, lo, k, want_grad, False)
        z = 0.0
        for i in range(lo, hi):
            m = n - i - 1
            prow = P[i, i + 1:]
            _row_d2(Yt, i, d2)
            row_costly_weights(code, kp, d2, w, g, m)
            if want_grad and k == 2:  # one loop; d2, ka, kr, t: the terms' scratch
                add_kl_forces_2d(Yt, i, four_f, prow, w, g, gbuf[c], rbuf[c], m, d2, ka, kr,
                                 t_scratch[c])
            elif want_grad:
                for j in range(m):
                    gj = g[j]
                    ka[j] = four_f * prow[j] * gj
                    kr[j] = 4.0 * w[j] * gj
                add_pair_forces(Yt, i, ka, gbuf[c], m, d2)
                add_pair_forces(Yt, i, kr, rbuf[c], m, d2)
            if want_cost:
                cbuf[c, i] += add_cross_terms(f, prow, w, cbuf[c, i + 1:], ka, m)
            z += pairwise_sum(w, m)  # last: it overwrites w
        zpart[c] = z
    reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, attract, cross_w)
    reduce_chunks(bounds, rbuf, cbuf, want_grad, False, repel, cross_w)


@njit(parallel=True, cache=True, error_model="numpy")
def reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, G, out):
    """Add the chunks' partial sums in chunk order (a chunk only wrote rows >= its first row):
    ``G[i, d] = sum_c gbuf[c, d, i]`` and ``out[i] = sum_c cbuf[c, i]``."""
    chunks = bounds.shape[0] - 1
    n = G.shape[0] if want_grad else out.shape[0]
    for i in prange(n):
        if want_grad:
            for d in range(G.shape[1]):
                s = 0.0
                for c in range(chunks):
                    if bounds[c] <= i:
                        s += gbuf[c, d, i]
                G[i, d] = s
        if want_cost:
            s = 0.0
            for c in range(chunks):
                if bounds[c] <= i:
                    s += cbuf[c, i]
            out[i] = s


@njit(parallel=True, cache=True, error_model="numpy")
def plogp_rows(P, f, eps):
    """Row sums of ``Pc log Pc`` with ``Pc = max(f P, eps)`` (column sums, P being symmetric)."""
    n = P.shape[0]
    out = np.empty(n)
    for i in prange(n):
        row = P[i]
        s = 0.0
        for j in range(n):
            pc = f * row[j]
            if pc < eps:
                pc = eps
            s += pc * math.log(pc)
        out[i] = s
    return out


@njit(parallel=True, cache=True, error_model="numpy")
def cross_entropy_rows(P, f, eps, clamp, skip_diagonal):
    """Row sums of ``p log(p + eps) + (1 - p) log(1 - p + eps)`` with ``p = f P_ij``, or with
    ``clamp`` of ``p log p + (1 - p) log(1 - p)`` with ``p = max(f P_ij, eps)``, over ``j != i``
    with ``skip_diagonal``, else every j (the constants of UMAP's cross-entropy and of the normalised
    one; column sums, P being symmetric)."""
    n = P.shape[0]
    out = np.empty(n)
    for i in prange(n):
        row = P[i]
        s = 0.0
        for j in range(n):
            if skip_diagonal and j == i:
                continue
            p = f * row[j]
            if clamp:
                if p < eps:
                    p = eps
                s += p * math.log(p) + (1.0 - p) * math.log1p(-p)
            else:
                s += p * math.log(p + eps) + (1.0 - p) * math.log1p(-p + eps)
        out[i] = s
    return out


@njit(parallel=True, cache=True)
def is_symmetric(P):
    """True when ``P[i, j] == P[j, i]`` for every pair (bitwise: NaN is never symmetric)."""
    n = P.shape[0]
    bad = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        for j in range(i + 1, n):
            if not P[i, j] == P[j, i]:
                bad[i] = True
                break
    for i in range(n):
        if bad[i]:
            return False
    return True
