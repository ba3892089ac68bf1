"""Numba kernels of the sgd engine's un-normalised pair costs (ee, tee) and of SGD-MDS (mmds, smmds,
sammon); compiled on first use and cached on disk.

Same scheme as :mod:`.sgd_kernels` (fixed blocks of points, reads of other blocks' points from the
epoch's snapshot, their moves deferred through ``tails``, one counter-based random stream per
point and epoch), so results do not depend on the number of threads. Every sampled pair moves both
of its points. The input distance of a sampled pair is computed from the input rows under the run's
metric (:mod:`smallvis.io.metric_kernels`), or read from a precomputed distance matrix: nothing
n x n is formed.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._util.jit import njit
from ..io.metric_kernels import pair_distance
from .sgd_kernels import _dist2, _draw_other, _move_tail, _stream

PAIR_EE = 0  # attraction d2, repulsion exp(-d2)
PAIR_TEE = 1  # attraction log(1 + d2), repulsion 1 / (1 + d2)

STRESS_MMDS = 0  # (R - D)^2
STRESS_SAMMON = 1  # (R - D)^2 / R
STRESS_SMMDS = 2  # (R^2 - D^2)^2


@njit(cache=True)
def _clip_to(x, c):
    if x > c:
        return c
    if x < -c:
        return -c
    return x


@njit(cache=True)
def _attraction_slope(kind, d2):
    """``dA/dd2`` of the attraction ``A``."""
    if kind == PAIR_EE:
        return 1.0
    return 1.0 / (1.0 + d2)


@njit(cache=True)
def _repulsion_slope(kind, d2):
    """``-dB/dd2`` of the repulsion ``B`` (positive: B falls with distance)."""
    if kind == PAIR_EE:
        return np.exp(-d2)
    w = 1.0 / (1.0 + d2)
    return w * w


@njit(cache=True)
def _attraction_cost(kind, d2):
    if kind == PAIR_EE:
        return d2
    return np.log1p(d2)


@njit(cache=True)
def _repulsion_cost(kind, d2):
    if kind == PAIR_EE:
        return np.exp(-d2)
    return 1.0 / (1.0 + d2)


@njit(cache=True)
def input_distance(X, code, p, i, k):
    """Input distance of points ``i`` and ``k``: under the metric ``code`` between rows of ``X``
    prepared by :func:`smallvis.io.metric.kernel_rows`, or ``X[i, k]`` (``code`` =
    ``SOURCE_PRECOMPUTED``)."""
    return pair_distance(X, code, p, i, k)


@njit(cache=True)
def negatives_due(neg_rate, epoch, i, n):
    """Negatives point ``i`` draws in ``epoch``: ``neg_rate`` per epoch on average, the fractional
    part carried by a per-point phase (every point draws the same number over any window)."""
    phase = (i + 0.5) / n
    return int(np.floor((epoch + 1) * neg_rate + phase) - np.floor(epoch * neg_rate + phase))


@njit(parallel=True, cache=True)
def pair_epoch(Y, Ysnap, tails, indptr, indices, epochs_per_sample, next_sample, block_starts,
               kind, neg_rate, rep_scale, weighted, X, code, p, clip, lr, epoch, seed):
    """One epoch of an un-normalised pair cost ``sum_e P_e A(d2_e) + sum_ij c_ij B(d2_ij)``.

    A due edge (clock ``next_sample``) moves both ends by ``-lr grad A``; then point ``i`` draws
    :func:`negatives_due` partners ``k`` uniformly and both move by ``-lr grad (s c_ik B)``, with
    ``s c_ik = rep_scale`` (times the input distance ``R_ik`` when ``weighted``). Each gradient
    coordinate is clipped at ``clip``. ``tails`` as in :func:`.sgd_kernels.umap_epoch`."""
    n = Y.shape[0]
    dim = Y.shape[1]
    for blk in prange(block_starts.shape[0] - 1):
        lo = block_starts[blk]
        hi = block_starts[blk + 1]
        own_tails = tails[blk]
        for i in range(lo, hi):
            state = _stream(seed, epoch, i)
            for e in range(indptr[i], indptr[i + 1]):
                if next_sample[e] > epoch:
                    continue
                j = indices[e]
                other = Y if lo <= j < hi else Ysnap
                coef = -2.0 * _attraction_slope(kind, _dist2(Y, i, other, j))
                for d in range(dim):
                    delta = lr * _clip_to(coef * (Y[i, d] - other[j, d]), clip)
                    Y[i, d] += delta
                    _move_tail(Y, own_tails, lo, hi, j, d, delta)
                next_sample[e] += epochs_per_sample[e]
            for _ in range(negatives_due(neg_rate, epoch, i, n)):
                state, k = _draw_other(state, n, i)
                other = Y if lo <= k < hi else Ysnap
                c = rep_scale
                if weighted:
                    c *= input_distance(X, code, p, i, k)
                coef = 2.0 * c * _repulsion_slope(kind, _dist2(Y, i, other, k))
                for d in range(dim):
                    delta = lr * _clip_to(coef * (Y[i, d] - other[k, d]), clip)
                    Y[i, d] += delta
                    _move_tail(Y, own_tails, lo, hi, k, d, delta)


@njit(parallel=True, cache=True)
def pair_point_costs(Y, indptr, indices, edge_w, kind, rep_c, weighted, X, code, p, seed, m):
    """Per-point estimate of ``sum_e P_e A(d2_e) + sum_ij c_ij B(d2_ij)``: the attraction exactly over
    the stored edges (weights ``edge_w``), the repulsion ``(n - 1) mean_k c_ik B`` from ``m`` uniform
    partners (the same at every call for one seed), ``c_ik = rep_c`` (times ``R_ik`` if
    ``weighted``)."""
    n = Y.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        attr = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            attr += edge_w[e] * _attraction_cost(kind, _dist2(Y, i, Y, indices[e]))
        rep = 0.0
        state = _stream(seed, 0, i)
        for _ in range(m):
            state, k = _draw_other(state, n, i)
            c = rep_c
            if weighted:
                c *= input_distance(X, code, p, i, k)
            rep += c * _repulsion_cost(kind, _dist2(Y, i, Y, k))
        out[i] = attr + (n - 1) * rep / m
    return out


@njit(cache=True)
def _stress_weight(kind, R, D, rscale):
    """The pair's weight ``w`` relative to metric MDS (``d stress / dD = 2 w (D - R)``), in units of
    the mean input distance ``rscale``."""
    if kind == STRESS_MMDS:
        return 1.0
    if kind == STRESS_SAMMON:
        return rscale / R if R > 0.0 else np.inf
    return D * (D + R) / (2.0 * rscale * rscale)


@njit(parallel=True, cache=True)
def stress_epoch(Y, Ysnap, block_starts, kind, m, X, code, p, rscale, eta, epoch, seed):
    """One epoch of SGD-MDS: each point draws ``m`` partners uniformly and moves by ``mu (D - R)``
    towards (or away from) each, ``D`` their output distance, ``R`` their input distance,
    ``mu = min(1, eta w)``: below the cap a step along the pair's stress gradient, at the cap the
    step that makes ``D = R`` (Zheng, Pawar & Goodman 2019). Only the drawing point moves: a
    partner moved by many points at once from the epoch's snapshot would overshoot when the steps
    are this large. Coincident output points are skipped."""
    n = Y.shape[0]
    dim = Y.shape[1]
    for blk in prange(block_starts.shape[0] - 1):
        lo = block_starts[blk]
        hi = block_starts[blk + 1]
        for i in range(lo, hi):
            state = _stream(seed, epoch, i)
            for _ in range(m):
                state, k = _draw_other(state, n, i)
                other = Y if lo <= k < hi else Ysnap
                D = np.sqrt(_dist2(Y, i, other, k))
                if D <= 0.0:
                    continue
                R = input_distance(X, code, p, i, k)
                mu = min(1.0, eta * _stress_weight(kind, R, D, rscale))
                f = -mu * (D - R) / D
                for d in range(dim):
                    Y[i, d] += f * (Y[i, d] - other[k, d])


@njit(parallel=True, cache=True)
def stress_point_costs(Y, kind, X, code, p, eps, seed, m):
    """Per-point estimate ``(n - 1) mean_k s(R_ik, D_ik)`` of the stress summed over ordered pairs
    (sammon's without its ``1 / sum R``), from ``m`` uniform partners (the same for one seed)."""
    n = Y.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        total = 0.0
        state = _stream(seed, 0, i)
        for _ in range(m):
            state, k = _draw_other(state, n, i)
            R = input_distance(X, code, p, i, k)
            d2 = _dist2(Y, i, Y, k)
            if kind == STRESS_SMMDS:
                diff = R * R - d2
                total += diff * diff
            else:
                diff = R - np.sqrt(d2)
                total += diff * diff / (R + eps) if kind == STRESS_SAMMON else diff * diff
        out[i] = (n - 1) * total / m
    return out


@njit(parallel=True, cache=True)
def distance_row_means(X, code, p, m, seed):
    """Each point's mean input distance to the other points: exact when ``m <= 0``, else over ``m``
    uniform partners."""
    n = X.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        total = 0.0
        if m <= 0:
            for k in range(n):
                if k != i:
                    total += input_distance(X, code, p, i, k)
            out[i] = total / (n - 1)
        else:
            state = _stream(seed, 0, i)
            for _ in range(m):
                state, k = _draw_other(state, n, i)
                total += input_distance(X, code, p, i, k)
            out[i] = total / m
    return out
