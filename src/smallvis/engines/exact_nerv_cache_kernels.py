"""Numba kernel of the NeRV passes' cache of ``log max(f P, eps)`` (:mod:`.exact_nerv_kernels`):
the logarithm of every off-diagonal entry of the floored, exaggerated P, packed into one (n, n)
array so that both directions of a row's pairs are contiguous.

Packing: for ``j > i``, ``out[i, j] = log max(f P_ij, eps)`` (the strict upper triangle, P's own
layout) and ``out[n - 1 - i, j - i - 1] = log max(f P_ji, eps)`` (the strict lower triangle: row
``n - 1 - i`` has exactly ``n - 1 - i`` entries left of its diagonal, one per pair of ``i`` with a
later point, in the same order). The diagonal is not written.
"""

from __future__ import annotations

from numba import prange

from .._util.jit import njit
from .._util.vmath import log1


@njit(parallel=True, cache=True, error_model="numpy")
def packed_log_floored(P, PT, f, eps, both, out):
    """``out`` (n, n): the packed ``log max(f P, eps)`` (module docstring), with :func:`log1` (the
    bits the passes would compute). ``PT``: P's C-ordered transpose, or empty (P's columns read
    with a stride); ``both``: also the second direction (the lower triangle; not needed where P
    is symmetric and Q matrix-normalised)."""
    n = P.shape[0]
    has_t = PT.shape[0] == n
    for i in prange(n):
        up = out[i]
        row = P[i]
        for j in range(i + 1, n):
            up[j] = log1(max(f * row[j], eps))
        if both:
            low = out[n - 1 - i]
            if has_t:
                col = PT[i]
                for j in range(i + 1, n):
                    low[j - i - 1] = log1(max(f * col[j], eps))
            else:
                for j in range(i + 1, n):
                    low[j - i - 1] = log1(max(f * P[j, i], eps))
