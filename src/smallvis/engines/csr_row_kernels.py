"""Row helpers shared by the numba kernels over a sparse P's stored entries (CSR: ``indptr``,
``indices``): the widest row (the size of a block's scratch buffers) and one row's offsets and
squared distances gathered into those buffers, so that the kernels' per-entry work runs over
contiguous arrays (loops LLVM vectorises). Coordinates are at most three."""

from __future__ import annotations

from .._util.jit import njit


@njit(cache=True, error_model="numpy")
def widest_row(indptr):
    """The largest number of stored entries in a row."""
    width = 0
    for i in range(indptr.shape[0] - 1):
        width = max(width, indptr[i + 1] - indptr[i])
    return width


@njit(cache=True, error_model="numpy", inline="always")
def gather_row(indptr, indices, Y, i, d0, d1, d2, x):
    """Row ``i``'s entries ``e`` (pair ``(i, j)``, ``j = indices[indptr[i] + e]``) into the buffers:
    ``d0, d1, d2`` the offsets ``y_i - y_j`` (0 beyond ``Y``'s columns) and ``x`` their squared
    length; returns the row's number of entries."""
    k = Y.shape[1]
    lo = indptr[i]
    m = indptr[i + 1] - lo
    y0 = Y[i, 0]
    y1 = Y[i, 1] if k > 1 else 0.0
    y2 = Y[i, 2] if k > 2 else 0.0
    for e in range(m):
        j = indices[lo + e]
        e0 = y0 - Y[j, 0]
        e1 = y1 - Y[j, 1] if k > 1 else 0.0
        e2 = y2 - Y[j, 2] if k > 2 else 0.0
        d0[e] = e0
        d1[e] = e1
        d2[e] = e2
        x[e] = e0 * e0 + e1 * e1 + e2 * e2
    return m
