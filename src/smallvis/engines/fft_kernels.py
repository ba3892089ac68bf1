"""Numba kernels of the FFT-interpolation engine (compiled on first use and cached on disk).

The output space (1-D or 2-D) is cut into ``n_boxes`` equal boxes per dimension, each holding
``p = n_interp`` interpolation nodes at the relative positions ``v_t = (t + 1/2) / p``, so the nodes
form one equispaced grid of ``N = n_boxes p`` nodes per dimension. A point at relative position
``u`` in its box has the Lagrange weights

.. math::
    L_t(u) = \\prod_{s \\ne t} \\frac{u - v_s}{v_t - v_s}, \\qquad t = 0, \\dots, p - 1

(tensor products ``L_t(u_1) L_s(u_2)`` in 2-D). Charges are spread onto the nodes of their box with
these weights and potentials gathered back with the same weights.

Reproducible in parallel without locks, whatever the number of threads: weights and gathers are
per point; the spread runs over columns of boxes (first output dimension), each column writing only
its own node rows, and visiting its points in index order (a stable counting sort by column).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .exact_kernels import N_CHUNKS
from .output_kernel_functions import T_KERNEL
from .radial_kernels import radial


@njit(cache=True, error_model="numpy")
def bounding_box(Y, lo, hi):
    """``lo``, ``hi``: the smallest and largest coordinate per dimension; False when some
    coordinate is not finite (NaN or infinite)."""
    n, k = Y.shape
    for d in range(k):
        lo[d] = np.inf
        hi[d] = -np.inf
    finite = True
    for i in range(n):
        for d in range(k):
            y = Y[i, d]
            if not math.isfinite(y):
                finite = False
            if y < lo[d]:
                lo[d] = y
            if y > hi[d]:
                hi[d] = y
    return finite


@njit(cache=True, error_model="numpy")
def lagrange_denominators(p):
    """``1 / prod_{s != t} (v_t - v_s)`` for the nodes ``v_t = (t + 1/2) / p``."""
    inv = np.empty(p)
    for t in range(p):
        den = 1.0
        for s in range(p):
            if s != t:
                den *= (t - s) / p
        inv[t] = 1.0 / den
    return inv


@njit(parallel=True, cache=True, error_model="numpy")
def interpolation_weights(Y, lo, h, n_boxes, cell, lw):
    """For every point ``i`` and dimension ``d``: its box ``cell[i, d]`` (``floor((y - lo) / h)``,
    clipped to ``[0, n_boxes)``) and the Lagrange weights ``lw[i, d, t] = L_t(u)`` of its relative
    position ``u = (y - lo) / h - cell`` in that box."""
    n, k = Y.shape
    p = lw.shape[2]
    inv_den = lagrange_denominators(p)
    inv_h = 1.0 / h
    for i in prange(n):
        for d in range(k):
            x = (Y[i, d] - lo[d]) * inv_h
            b = int(x) if x > 0.0 else 0
            if b > n_boxes - 1:
                b = n_boxes - 1
            u = x - b
            cell[i, d] = b
            for t in range(p):
                num = inv_den[t]
                for s in range(p):
                    if s != t:
                        num *= u - (s + 0.5) / p
                lw[i, d, t] = num


@njit(parallel=True, cache=True, error_model="numpy")
def kernel_samples(code, alpha, dx, w, w1a):
    """The kernels at the node offsets ``(a dx, b dx)``: ``w[a, b] = (1 + alpha d2)^(-1/alpha)``
    (``1 / (1 + d2)`` for the Student-t ``code == 0``) and ``w1a[a, b] = w^(1 + alpha) =
    w / (1 + alpha d2)``, ``d2 = (a^2 + b^2) dx^2`` (1-D: a single row, ``a = 0``)."""
    rows, cols = w.shape
    inv_alpha = 1.0 / alpha
    for a in prange(rows):
        ra = (a * dx) * (a * dx)
        for b in range(cols):
            d2 = ra + (b * dx) * (b * dx)
            if code == T_KERNEL:
                base = 1.0 + d2
                wab = 1.0 / base
            else:
                base = 1.0 + alpha * d2
                wab = math.exp(-math.log(base) * inv_alpha)
            w[a, b] = wab
            w1a[a, b] = wab / base


@njit(parallel=True, cache=True, error_model="numpy")
def self_weights(lw, wq, out):
    """``out[i]``: the interpolated kernel between point ``i`` and itself,
    ``sum_{t, s} L_t L_s K(x_t - x_s)`` (tensor products in 2-D), which replaces ``w_ii = 1`` when
    the self terms are removed from ``Z``. ``wq[a, b]`` is the kernel at the node offsets ``a`` and
    ``b`` (1-D: ``wq[0, a]``).

    Per dimension, ``A[a] = sum_{|t - s| = a} L_t L_s``; then ``out = sum_a A[a] wq[0, a]`` (1-D)
    or ``sum_{a, b} A[a] B[b] wq[a, b]`` (2-D).
    """
    n, k, p = lw.shape
    chunks = min(n, N_CHUNKS)
    for c in prange(chunks):
        A = np.empty((k, p))
        for i in range(c * n // chunks, (c + 1) * n // chunks):
            A[:, :] = 0.0
            for d in range(k):
                for t in range(p):
                    A[d, 0] += lw[i, d, t] * lw[i, d, t]
                    for s in range(t + 1, p):
                        A[d, s - t] += 2.0 * lw[i, d, t] * lw[i, d, s]
            total = 0.0
            if k == 1:
                for a in range(p):
                    total += A[0, a] * wq[0, a]
            else:
                for a in range(p):
                    for b in range(p):
                        total += A[0, a] * A[1, b] * wq[a, b]
            out[i] = total


@njit(cache=True, error_model="numpy")
def sort_by_column(column, n_boxes, start, order):
    """Stable counting sort of the points by ``column``: the points of column ``b`` are
    ``order[start[b]:start[b + 1]]``, in increasing index order."""
    n = column.shape[0]
    start[:] = 0
    for i in range(n):
        start[column[i] + 1] += 1
    for b in range(n_boxes):
        start[b + 1] += start[b]
    fill = start[:n_boxes].copy()
    for i in range(n):
        b = column[i]
        order[fill[b]] = i
        fill[b] += 1


@njit(parallel=True, cache=True, error_model="numpy")
def spread_1d(order, start, cell, lw, Yc, grid, c):
    """Node charges (``grid`` (2, N); the caller zeroes any padding beyond): channel 0 gets the
    charge ``c_i`` (``c`` empty: 1), channel 1 ``c_i Yc[i, 0]`` of every point, each shared over
    its box's nodes with its Lagrange weights."""
    charged = c.shape[0] > 0
    p = lw.shape[2]
    n_boxes = start.shape[0] - 1
    for b in prange(n_boxes):
        base = b * p
        for t in range(p):
            grid[0, base + t] = 0.0
            grid[1, base + t] = 0.0
        for e in range(start[b], start[b + 1]):
            i = order[e]
            y = Yc[i, 0]
            ci = c[i] if charged else 1.0
            for t in range(p):
                w = lw[i, 0, t] * ci
                grid[0, base + t] += w
                grid[1, base + t] += w * y


@njit(parallel=True, cache=True, error_model="numpy")
def spread_2d(order, start, cell, lw, Yc, grid, c):
    """Node charges (``grid[:, :, :N]`` of (3, N, M >= N); the caller zeroes any padding beyond):
    channel 0 gets the charge ``c_i`` (``c`` empty: 1), channels 1 and 2 ``c_i Yc[i]``, each
    shared over the
    ``p x p`` nodes of the point's box with the weights ``L_t(u_1) L_s(u_2)``. Column ``b`` (first
    dimension) writes only node rows ``b p .. b p + p - 1``.
    """
    p = lw.shape[2]
    n_boxes = start.shape[0] - 1
    N = n_boxes * p
    charged = c.shape[0] > 0
    for b in prange(n_boxes):
        base = b * p
        for t in range(p):
            for j in range(N):
                grid[0, base + t, j] = 0.0
                grid[1, base + t, j] = 0.0
                grid[2, base + t, j] = 0.0
        for e in range(start[b], start[b + 1]):
            i = order[e]
            y0 = Yc[i, 0]
            y1 = Yc[i, 1]
            col = cell[i, 1] * p
            ci = c[i] if charged else 1.0
            for t in range(p):
                wt = lw[i, 0, t]
                for s in range(p):
                    w = wt * lw[i, 1, s] * ci
                    grid[0, base + t, col + s] += w
                    grid[1, base + t, col + s] += w * y0
                    grid[2, base + t, col + s] += w * y1


@njit(parallel=True, cache=True, error_model="numpy")
def gather_1d(cell, lw, phi, Yc, R):
    """``R[i] = y_i S1_i - Sy_i`` from the node potentials ``phi`` (2, N) of the charges 1 and y
    interpolated at every point (``S1``, ``Sy``)."""
    n = Yc.shape[0]
    p = lw.shape[2]
    for i in prange(n):
        base = cell[i, 0] * p
        s1 = 0.0
        sy = 0.0
        for t in range(p):
            w = lw[i, 0, t]
            s1 += w * phi[0, base + t]
            sy += w * phi[1, base + t]
        R[i, 0] = Yc[i, 0] * s1 - sy


@njit(parallel=True, cache=True, error_model="numpy")
def gather_2d(cell, lw, phi, Yc, R):
    """``R[i, d] = y_id S1_i - Sy_id`` from the node potentials ``phi`` (3, N, N) of the charges 1,
    y_1 and y_2, interpolated at every point."""
    n = Yc.shape[0]
    p = lw.shape[2]
    for i in prange(n):
        bx = cell[i, 0] * p
        by = cell[i, 1] * p
        s1 = 0.0
        sy0 = 0.0
        sy1 = 0.0
        for t in range(p):
            wt = lw[i, 0, t]
            for s in range(p):
                w = wt * lw[i, 1, s]
                s1 += w * phi[0, bx + t, by + s]
                sy0 += w * phi[1, bx + t, by + s]
                sy1 += w * phi[2, bx + t, by + s]
        R[i, 0] = Yc[i, 0] * s1 - sy0
        R[i, 1] = Yc[i, 1] * s1 - sy1


@njit(parallel=True, cache=True, error_model="numpy")
def radial_samples(fn, code, kp, floor, dx, out):
    """The radial function ``fn`` of :mod:`.radial_kernels` at the node offsets ``(a dx, b dx)``
    (1-D: a single row, ``a = 0``), as :func:`kernel_samples` (with the pair terms ``PAIR_*`` and
    NCVis's ``NCE_*`` of UMAP's curve). numba's disk cache follows this file, not
    :mod:`.radial_kernels`: edit this docstring when the radial functions change, or a
    development tree keeps the old ones."""
    rows, cols = out.shape
    for a in prange(rows):
        ra = (a * dx) * (a * dx)
        for b in range(cols):
            out[a, b] = radial(fn, code, kp, floor, ra + (b * dx) * (b * dx))


@njit(parallel=True, cache=True, error_model="numpy")
def gather_channels_1d(cell, lw, phi, out):
    """``out[i, ch]``: the node potentials ``phi`` (channels, N) interpolated at every point."""
    n = lw.shape[0]
    p = lw.shape[2]
    for i in prange(n):
        base = cell[i, 0] * p
        for ch in range(phi.shape[0]):
            s = 0.0
            for t in range(p):
                s += lw[i, 0, t] * phi[ch, base + t]
            out[i, ch] = s


@njit(parallel=True, cache=True, error_model="numpy")
def gather_channels_2d(cell, lw, phi, out):
    """``out[i, ch]``: the node potentials ``phi`` (channels, N, N) interpolated at every point."""
    n = lw.shape[0]
    p = lw.shape[2]
    for i in prange(n):
        bx = cell[i, 0] * p
        by = cell[i, 1] * p
        for ch in range(phi.shape[0]):
            s = 0.0
            for t in range(p):
                wt = lw[i, 0, t]
                for r in range(p):
                    s += wt * lw[i, 1, r] * phi[ch, bx + t, by + r]
            out[i, ch] = s
