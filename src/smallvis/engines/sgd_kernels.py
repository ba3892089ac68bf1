"""Numba kernels of the negative-sampling SGD engine (compiled on first use and cached on disk).

Reproducible in parallel without locks:

- rows (points) are split into a fixed number of contiguous blocks, independent of the thread count;
  a block's thread is the only writer of its points' coordinates and of its edges' sampling clocks;
- every read of *another* point comes from ``Ysnap``, a copy of the coordinates taken at the start of
  the epoch, so no read races with a write;
- random numbers come from a counter-based generator: the stream of point ``i`` in epoch ``e`` is a
  hash of ``(seed, e, i)``, so what a point draws does not depend on which thread runs it or when.

Within a block this is exactly the sequential algorithm (both ends of a sampled edge move at once);
across blocks, moves arrive at most one epoch late.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._util.jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_EPOCH_MIX = np.uint64(0xD1B54A32D192ED03)

CLIP = 4.0

@njit(cache=True)
def _mix(z):
    """The splitmix64 finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def _stream(seed, epoch, row):
    """Start of point ``row``'s random stream in ``epoch``."""
    return _mix(_mix(seed ^ (np.uint64(epoch) * _EPOCH_MIX)) ^ np.uint64(row))


@njit(cache=True)
def _draw(state, n):
    """Next state and a uniform integer in ``[0, n)``."""
    state = state + _GOLDEN
    # the top 32 bits scaled to [0, n) by a multiply (no division); n < 2**32
    return state, np.int64(((_mix(state) >> _S32) * np.uint64(n)) >> _S32)


@njit(cache=True)
def _draw_other(state, n, i):
    """Next state and a uniform integer in ``[0, n)`` other than ``i``."""
    state, k = _draw(state, n - 1)
    return state, k + 1 if k >= i else k


@njit(cache=True)
def _clip(x):
    if x > CLIP:
        return CLIP
    if x < -CLIP:
        return -CLIP
    return x


@njit(cache=True)
def _dist2(Y, i, Z, j):
    d2 = 0.0
    for d in range(Y.shape[1]):
        diff = Y[i, d] - Z[j, d]
        d2 += diff * diff
    return d2


@njit(cache=True)
def _pow_b(d2, b):
    """``d2 ** b`` (in single precision, twice as fast and ample for SGD steps); exponent 1 exact."""
    return d2 if b == 1.0 else float(np.float32(d2) ** np.float32(b))


@njit(cache=True)
def _pow_exact(d2, b):
    """``d2 ** b`` in double precision (for the cost estimates)."""
    return d2 if b == 1.0 else d2**b


@njit(cache=True)
def _move_tail(Y, tails, lo, hi, k, d, delta):
    """Move point ``k`` by ``-delta`` in coordinate ``d``: now if this block owns it, else at the end
    of the epoch (through this block's row of ``tails``)."""
    if lo <= k < hi:
        Y[k, d] -= delta
    else:
        tails[k, d] -= delta


@njit(parallel=True, cache=True)
def umap_epoch(Y, Ysnap, tails, indptr, indices, epochs_per_sample, next_sample,
               epochs_per_negative, next_negative, block_starts, a, b, gamma, gr_eps, lr, epoch,
               seed, moving):
    """One epoch of UMAP-style SGD: weight ``w = 1/(1 + a d^2b)``, attraction ``-log w`` on sampled
    edges (both ends move), repulsion ``-gamma log(1 - w)`` on uniformly drawn negatives (the head
    moves), each gradient coordinate clipped at 4. Edges are due when their clock ``next_sample``
    reaches ``epoch``. ``tails`` (blocks, n, dim), zero on entry, collects the moves of points other
    blocks own: apply them with :func:`apply_tails`.

    ``moving`` (bool, (n,)) holds the other points still (a transform): a frozen point neither
    moves nor draws negatives, and its edges are sampled only to move a moving tail; empty: every
    point moves."""
    n = Y.shape[0]
    dim = Y.shape[1]
    held = moving.shape[0] > 0
    for blk in prange(block_starts.shape[0] - 1):
        lo = block_starts[blk]
        hi = block_starts[blk + 1]
        own_tails = tails[blk]
        for i in range(lo, hi):
            state = _stream(seed, epoch, i)
            if held and not moving[i]:
                _frozen_head(Y, Ysnap, own_tails, indptr, indices, epochs_per_sample,
                             next_sample, lo, hi, a, b, lr, epoch, i, moving)
                continue
            for e in range(indptr[i], indptr[i + 1]):
                if next_sample[e] > epoch:
                    continue
                j = indices[e]
                other = Y if lo <= j < hi else Ysnap
                d2 = _dist2(Y, i, other, j)
                if d2 > 0.0:
                    d2b = _pow_b(d2, b)
                    coef = -2.0 * a * b * (d2b / d2) / (1.0 + a * d2b)
                    for d in range(dim):
                        delta = lr * _clip(coef * (Y[i, d] - other[j, d]))
                        Y[i, d] += delta
                        if not held or moving[j]:
                            _move_tail(Y, own_tails, lo, hi, j, d, delta)
                next_sample[e] += epochs_per_sample[e]
                n_neg = int((epoch - next_negative[e]) / epochs_per_negative[e])
                for _ in range(n_neg):
                    state, k = _draw_other(state, n, i)
                    other = Y if lo <= k < hi else Ysnap
                    d2 = _dist2(Y, i, other, k)
                    if d2 > 0.0:
                        coef = 2.0 * gamma * b / ((gr_eps + d2) * (1.0 + a * _pow_b(d2, b)))
                        for d in range(dim):
                            Y[i, d] += lr * _clip(coef * (Y[i, d] - other[k, d]))
                if n_neg > 0:
                    next_negative[e] += n_neg * epochs_per_negative[e]


@njit(cache=True)
def _frozen_head(Y, Ysnap, own_tails, indptr, indices, epochs_per_sample, next_sample, lo, hi,
                 a, b, lr, epoch, i, moving):
    """:func:`umap_epoch`'s due edges of a frozen point ``i``: only their moving tails move."""
    dim = Y.shape[1]
    for e in range(indptr[i], indptr[i + 1]):
        if next_sample[e] > epoch:
            continue
        next_sample[e] += epochs_per_sample[e]
        j = indices[e]
        if not moving[j]:
            continue
        other = Y if lo <= j < hi else Ysnap
        d2 = _dist2(Y, i, other, j)
        if d2 > 0.0:
            d2b = _pow_b(d2, b)
            coef = -2.0 * a * b * (d2b / d2) / (1.0 + a * d2b)
            for d in range(dim):
                _move_tail(Y, own_tails, lo, hi, j, d, lr * _clip(coef * (Y[i, d] - other[j, d])))


@njit(parallel=True, cache=True)
def nce_epoch(Y, Ysnap, tails, indptr, indices, block_starts, Q_blocks, Q, offset, a, b, nu,
              alpha_Q, step, epoch, seed):
    """One epoch of NCVis: every edge once, then ``nu`` negatives drawn uniformly from the other
    points; both ends of every pair move. ``Q`` is the learned log-normaliser (each block updates its
    own copy, the caller averages them); point ``i`` uses ``Q + offset[i]`` (offset 0: the reference
    code's constant noise probability; ``log(p_i / mean p)``: the corrected form). The update itself
    is clipped at 4. ``tails`` as in :func:`umap_epoch`."""
    n = Y.shape[0]
    dim = Y.shape[1]
    for blk in prange(block_starts.shape[0] - 1):
        lo = block_starts[blk]
        hi = block_starts[blk + 1]
        own_tails = tails[blk]
        q_log = Q
        for i in range(lo, hi):
            state = _stream(seed, epoch, i)
            for e in range(indptr[i], indptr[i + 1]):
                for s in range(nu + 1):
                    if s == 0:
                        k = indices[e]
                    else:
                        state, k = _draw_other(state, n, i)
                    other = Y if lo <= k < hi else Ysnap
                    d2 = _dist2(Y, i, other, k)
                    d2b = _pow_b(d2, b)
                    qhat = 1.0 / (1.0 + a * d2b)
                    wp = qhat / (nu * np.exp(q_log + offset[i]))
                    w = 1.0 / (1.0 + wp) if s == 0 else -wp / (1.0 + wp)
                    q_log -= alpha_Q * w
                    if d2 > 0.0:
                        coef = 2.0 * w * qhat * a * b * (d2b / d2)
                        for d in range(dim):
                            delta = _clip(step * coef * (other[k, d] - Y[i, d]))
                            Y[i, d] += delta
                            _move_tail(Y, own_tails, lo, hi, k, d, delta)
        Q_blocks[blk] = q_log


@njit(parallel=True, cache=True)
def apply_tails(Y, tails):
    """Add every block's deferred moves (in block order, so the sums do not depend on threads) and
    reset them to zero. ``Y`` and ``tails`` must be C-contiguous."""
    size = Y.size
    flat = Y.reshape(size)
    deferred = tails.reshape(tails.shape[0], size)
    chunks = 64
    for c in prange(chunks):
        lo = c * size // chunks
        hi = (c + 1) * size // chunks
        for blk in range(deferred.shape[0]):
            for i in range(lo, hi):
                flat[i] += deferred[blk, i]
                deferred[blk, i] = 0.0


@njit(parallel=True, cache=True)
def umap_point_costs(Y, indptr, indices, edge_p, row_p, a, b, repulsion, eps, seed, m):
    """Per-point estimate of ``sum_e p_e (-log w_e) + repulsion * sum_i p_i mean_k -log(1 - w_ik)``:
    the attraction exactly over the edges, the repulsion from ``m`` uniform partners per point (the
    same partners at every call for the same seed, so successive estimates are comparable)."""
    n = Y.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        attr = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            attr += edge_p[e] * np.log1p(a * _pow_exact(_dist2(Y, i, Y, indices[e]), b))
        rep = 0.0
        state = _stream(seed, 0, i)
        for _ in range(m):
            state, k = _draw_other(state, n, i)
            w = 1.0 / (1.0 + a * _pow_exact(_dist2(Y, i, Y, k), b))
            rep -= np.log(1.0 - w + eps)
        out[i] = attr + repulsion * row_p[i] * rep / m
    return out


@njit(parallel=True, cache=True)
def nce_point_costs(Y, indptr, indices, edge_p, row_p, Q, offset, a, b, nu, seed, m):
    """Per-point estimate of the NCE cost ``-sum_e p_e log(q'/(q' + nu)) -
    nu sum_i p_i mean_k log(nu/(q'_ik + nu))`` with ``q' = qhat exp(-(Q + offset_i))``."""
    n = Y.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        scale = np.exp(-(Q + offset[i]))
        attr = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            q = scale / (1.0 + a * _pow_exact(_dist2(Y, i, Y, indices[e]), b))
            attr += edge_p[e] * np.log1p(nu / q)
        rep = 0.0
        state = _stream(seed, 0, i)
        for _ in range(m):
            state, k = _draw_other(state, n, i)
            q = scale / (1.0 + a * _pow_exact(_dist2(Y, i, Y, k), b))
            rep += np.log1p(q / nu)
        out[i] = attr + nu * row_p[i] * rep / m
    return out
