"""Numba kernels of the fused exact engine for g-SNE's sum of two KL terms (compiled on first use and
cached on disk): t-SNE's ``KL(P || W/Z)`` with ``w = 1/(1 + d2)`` plus ``lambda`` times
``KL(P^ || W^/Z^)`` with the inverse Student-t weights ``w^ = 1 + d2`` (:mod:`smallvis.methods.gsne`).

Both terms read the same squared distances, so one pass gives both normalisers
(:func:`gsne_totals`, the bits of :func:`.exact_kernels.kernel_total` for each) and a second pass
the forces of the summed stiffness ``K = 4 w [(f P - q) - lambda (P^ - q^)]`` (``g^ = -w``) and
both cross terms (:func:`gsne_terms`): two passes instead of four. The chunking is
:mod:`.exact_kernels`' (fixed chunks, partial sums added in chunk order): the numbers do not depend
on the number of threads.
"""

from __future__ import annotations


import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .exact_kernels import _row_d2, add_cross_terms, add_pair_forces, clear_chunk, reduce_chunks


@njit(parallel=True, cache=True, error_model="numpy")
def gsne_totals(Yt, bounds, w_scratch, h_scratch):
    """``(Z, Z^)``: the sums over ``i != j`` of ``1 / (1 + d2)`` and ``1 + d2`` (scratch: (chunks,
    n) each)."""
    n = Yt.shape[1]
    chunks = bounds.shape[0] - 1
    part = np.zeros((chunks, 2))
    for c in prange(chunks):
        w, h = w_scratch[c], h_scratch[c]
        s = 0.0
        t = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            m = n - i - 1
            _row_d2(Yt, i, w)
            for j in range(m):
                x = w[j]
                h[j] = 1.0 + x
                w[j] = 1.0 / (1.0 + x)
            s += pairwise_sum(w, m)
            t += pairwise_sum(h, m)
        part[c, 0] = s
        part[c, 1] = t
    z = 0.0
    zh = 0.0
    for c in range(chunks):
        z += part[c, 0]
        zh += part[c, 1]
    return 2.0 * z, 2.0 * zh


@njit(parallel=True, cache=True, error_model="numpy")
def gsne_terms(P, Pg, Yt, f, lam, Z, Zh, bounds, want_cost, want_grad, d2_scratch, q_scratch,
               h_scratch, k_scratch, gbuf, cbuf, hbuf, G, cross, cross_h):
    """``G`` (n, k): the gradient ``sum_j K_ij (y_i - y_j)``; ``cross`` and ``cross_h`` (n,): the
    sums ``sum_j xlogy(f P_ij, q_ij)`` and ``sum_j xlogy(P^_ij, q^_ij)`` (``P``, ``Pg``:
    symmetric, C-ordered (n, n); row sums are column sums). Scratch: ``*_scratch`` (chunks, n);
    ``gbuf`` (chunks, k, n), ``cbuf`` and ``hbuf`` (chunks, n) hold each chunk's partial sums."""
    k, n = Yt.shape
    chunks = bounds.shape[0] - 1
    inv_z = 1.0 / Z
    inv_zh = 1.0 / Zh
    four_f = 4.0 * f
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        d2, q, qh, kk = d2_scratch[c], q_scratch[c], h_scratch[c], k_scratch[c]
        clear_chunk(gbuf, cbuf, c, lo, k, want_grad, want_cost)
        clear_chunk(gbuf, hbuf, c, lo, k, False, want_cost)
        for i in range(lo, hi):
            m = n - i - 1
            prow = P[i, i + 1:]
            grow = Pg[i, i + 1:]
            _row_d2(Yt, i, d2)
            for j in range(m):
                x = d2[j]
                w = 1.0 / (1.0 + x)
                qj = w * inv_z
                qhj = (1.0 + x) * inv_zh
                q[j] = qj
                qh[j] = qhj
                kk[j] = w * ((four_f * prow[j] - 4.0 * qj) - lam * (4.0 * grow[j] - 4.0 * qhj))
            if want_cost:
                cbuf[c, i] += add_cross_terms(f, prow, q, cbuf[c, i + 1:], q, m)
                hbuf[c, i] += add_cross_terms(1.0, grow, qh, hbuf[c, i + 1:], qh, m)
            if want_grad:  # d2 is free: the terms' scratch
                add_pair_forces(Yt, i, kk, gbuf[c], m, d2)
    reduce_chunks(bounds, gbuf, cbuf, want_grad, want_cost, G, cross)
    reduce_chunks(bounds, gbuf, hbuf, False, want_cost, G, cross_h)
