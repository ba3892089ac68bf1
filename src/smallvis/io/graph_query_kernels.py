"""Numba kernel of :mod:`smallvis.io.graph_query`: new points' nearest neighbours among indexed
points by a best-first walk on the indexed points' neighbour graph (compiled on first use and cached
on disk).

Each query is searched on its own, in one thread, from entry points found deterministically (the
nearest of a fixed set of pivots), and every tie is broken by the lower index: the result does not
depend on the number of threads or on how the queries are split among them. Squared Euclidean
distances are summed with four partial sums in a fixed order (see :mod:`smallvis._util.jit`); the
distances returned are recomputed in coordinate order, as the exact search does.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit

CHUNK = 64  # queries per parallel chunk (each query is independent: any chunking gives the same)


@njit(cache=True)
def _sqdist(x, y):
    """Squared Euclidean distance, four partial sums in a fixed order."""
    p = x.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    d = 0
    while d + 4 <= p:
        a0 = x[d] - y[d]
        a1 = x[d + 1] - y[d + 1]
        a2 = x[d + 2] - y[d + 2]
        a3 = x[d + 3] - y[d + 3]
        s0 += a0 * a0
        s1 += a1 * a1
        s2 += a2 * a2
        s3 += a3 * a3
        d += 4
    while d < p:
        a0 = x[d] - y[d]
        s0 += a0 * a0
        d += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def _before(d1, i1, d2, i2):
    """Whether (d1, i1) comes before (d2, i2): nearer, or as near with a lower index."""
    return d1 < d2 or (d1 == d2 and i1 < i2)


@njit(cache=True)
def _max_push(hd, hi, size, d, j):
    """Add (d, j) to the max-heap ``hd[:size]``/``hi[:size]`` (room for it assumed)."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _before(hd[parent], hi[parent], d, j):
            break
        hd[i] = hd[parent]
        hi[i] = hi[parent]
        i = parent
    hd[i] = d
    hi[i] = j


@njit(cache=True)
def _max_replace(hd, hi, size, d, j):
    """Replace the root of the max-heap ``hd[:size]`` by (d, j) and restore the heap."""
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _before(hd[c], hi[c], hd[c + 1], hi[c + 1]):
            c += 1
        if _before(hd[c], hi[c], d, j):
            break
        hd[i] = hd[c]
        hi[i] = hi[c]
        i = c
    hd[i] = d
    hi[i] = j


@njit(cache=True)
def _min_push(hd, hi, size, d, j):
    """Add (d, j) to the min-heap ``hd[:size]``/``hi[:size]``."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if _before(hd[parent], hi[parent], d, j):
            break
        hd[i] = hd[parent]
        hi[i] = hi[parent]
        i = parent
    hd[i] = d
    hi[i] = j


@njit(cache=True)
def _min_pop(hd, hi, size):
    """Remove the root of the min-heap ``hd[:size]`` (its new size is ``size - 1``)."""
    size -= 1
    d = hd[size]
    j = hi[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _before(hd[c + 1], hi[c + 1], hd[c], hi[c]):
            c += 1
        if _before(d, j, hd[c], hi[c]):
            break
        hd[i] = hd[c]
        hi[i] = hi[c]
        i = c
    if size > 0:
        hd[i] = d
        hi[i] = j


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def _hash(seed, a, b):
    """A 64-bit hash of (seed, a, b) (splitmix64's finaliser)."""
    z = np.uint64(seed) + np.uint64(a) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    z = z + np.uint64(b) * _GOLDEN + np.uint64(1)
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(parallel=True, cache=True)
def build_forest(X, seed, leaf_size, trees, orders):
    """``trees.shape[0]`` trees of :func:`build_tree` (seeds ``seed + t``), one per thread: tree
    ``t`` into ``trees[t]`` (6, 2n + 1) and ``orders[t]``; returns the node counts."""
    T = trees.shape[0]
    counts = np.zeros(T, dtype=np.int64)
    for t in prange(T):
        tr = trees[t]
        counts[t] = build_tree(X, seed + t, leaf_size, tr[0], tr[1], tr[2], tr[3], tr[4], tr[5],
                               orders[t])
    return counts


@njit(cache=True)
def build_tree(X, seed, leaf_size, a, b, left, right, start, end, order):
    """A random-projection tree of the rows of ``X``: each node split by the perpendicular bisector
    of two of its points (chosen by a hash of ``seed`` and the node), a point going to the side of
    the nearer one (ties: the first), down to leaves of at most ``leaf_size`` points; a node whose
    points all fall on one side is cut in two halves instead. Writes, per node (arrays of length
    at least ``2n + 1``), the two points (``a = -1``: cut in halves), the children (-1: a leaf)
    and the node's range of ``order`` (a permutation of the rows); returns the number of nodes."""
    n = X.shape[0]
    cap = 2 * n + 1
    a[:] = -1
    b[:] = -1
    left[:] = -1
    right[:] = -1
    start[:] = 0
    end[:] = 0
    for t in range(n):
        order[t] = t
    side = np.empty(n, dtype=np.bool_)
    buf = np.empty(n, dtype=np.int64)
    stack = np.empty(cap, dtype=np.int64)
    start[0] = 0
    end[0] = n
    nodes = 1
    top = 1
    stack[0] = 0
    while top > 0:
        top -= 1
        node = stack[top]
        lo = start[node]
        hi = end[node]
        cnt = hi - lo
        if cnt <= leaf_size:
            continue
        i = order[lo + np.int64(_hash(seed, node, 0) % np.uint64(cnt))]
        j = order[lo + np.int64(_hash(seed, node, 1) % np.uint64(cnt))]
        nl = 0
        if i != j:
            for t in range(lo, hi):
                x = X[order[t]]
                side[t - lo] = _sqdist(x, X[i]) <= _sqdist(x, X[j])
                if side[t - lo]:
                    nl += 1
        if nl == 0 or nl == cnt:  # all on one side (or one point drawn twice): two halves
            nl = cnt // 2
            i = -1
            for t in range(cnt):
                side[t] = t < nl
        # stable partition of order[lo:hi]: the first side, then the second
        u = 0
        for t in range(cnt):
            if side[t]:
                buf[u] = order[lo + t]
                u += 1
        for t in range(cnt):
            if not side[t]:
                buf[u] = order[lo + t]
                u += 1
        for t in range(cnt):
            order[lo + t] = buf[t]
        a[node] = i
        b[node] = j
        left[node] = nodes
        right[node] = nodes + 1
        start[nodes] = lo
        end[nodes] = lo + nl
        start[nodes + 1] = lo + nl
        end[nodes + 1] = hi
        stack[top] = nodes
        stack[top + 1] = nodes + 1
        top += 2
        nodes += 2
    return nodes


@njit(cache=True)
def _leaf(X, q, a, b, left, right):
    """The leaf of a tree (:func:`build_tree`) that ``q`` falls in (halves: the first)."""
    node = 0
    while left[node] >= 0:
        if a[node] < 0 or _sqdist(q, X[a[node]]) <= _sqdist(q, X[b[node]]):
            node = left[node]
        else:
            node = right[node]
    return node


@njit(cache=True)
def _offer(q, X, j, mark, stamp, ef, rd, ri, rs, cd, ci, cs):
    """Point ``j`` offered to the walk (once per query: ``mark``): kept among the ``ef`` nearest
    (max-heap ``rd``, ``ri`` of size ``rs``) and queued for expansion (min-heap ``cd``, ``ci`` of
    size ``cs``) when it is nearer than the farthest kept; returns the new ``(rs, cs)``."""
    if mark[j] == stamp:
        return rs, cs
    mark[j] = stamp
    d = _sqdist(q, X[j])
    if rs < ef:
        _max_push(rd, ri, rs, d, j)
        rs += 1
    elif _before(d, j, rd[0], ri[0]):
        _max_replace(rd, ri, rs, d, j)
    else:
        return rs, cs
    _min_push(cd, ci, cs, d, j)
    return rs, cs + 1


@njit(cache=True)
def _search_one(X, q, indptr, indices, trees, orders, ef, mark, stamp, cd, ci, rd, ri):
    """The best-first walk of one query ``q`` from the points of its leaf in each tree: fills the
    max-heap ``rd``/``ri`` with the ``ef`` nearest points found (returns how many)."""
    rs = 0
    cs = 0
    for t in range(trees.shape[0]):
        node = _leaf(X, q, trees[t, 0], trees[t, 1], trees[t, 2], trees[t, 3])
        for u in range(trees[t, 4][node], trees[t, 5][node]):
            rs, cs = _offer(q, X, orders[t, u], mark, stamp, ef, rd, ri, rs, cd, ci, cs)
    while cs > 0:
        d = cd[0]
        c = ci[0]
        _min_pop(cd, ci, cs)
        cs -= 1
        if rs == ef and _before(rd[0], ri[0], d, c):
            break  # the nearest unexpanded point is farther than every kept one
        for t in range(indptr[c], indptr[c + 1]):
            rs, cs = _offer(q, X, indices[t], mark, stamp, ef, rd, ri, rs, cd, ci, cs)
    return rs


@njit(parallel=True, cache=True)
def graph_query(X, Q, indptr, indices, trees, orders, ef, out_i, out_d):
    """The ``k = out_i.shape[1]`` nearest rows of ``X`` (n, p) to each row of ``Q`` (m, p), by a
    best-first walk on the graph ``indptr``/``indices`` (CSR over the rows of ``X``) that keeps the
    ``ef >= k`` nearest found and expands the nearest unexpanded one until none is nearer than the
    farthest kept, started from the points of the query's leaf in each tree (``trees`` (T, 6)
    arrays of :func:`build_tree`, padded to a common length, ``orders`` (T, n)). Writes indices
    (nearest first, ties to the lower index) and Euclidean distances (-1 and inf where fewer than
    ``k`` points were reached)."""
    n = X.shape[0]
    m, k = out_i.shape
    n_chunks = (m + CHUNK - 1) // CHUNK
    for chunk in prange(n_chunks):
        mark = np.zeros(n, dtype=np.int64)
        cd = np.empty(n)
        ci = np.empty(n, dtype=np.int64)
        rd = np.empty(ef)
        ri = np.empty(ef, dtype=np.int64)
        key = np.empty(ef)
        for r in range(chunk * CHUNK, min(m, (chunk + 1) * CHUNK)):
            q = Q[r]
            rs = _search_one(X, q, indptr, indices, trees, orders, ef, mark, r + 1, cd, ci, rd, ri)
            # exact distances of the kept points, ordered by (distance, index)
            for t in range(rs):
                x = X[ri[t]]
                s = 0.0
                for d in range(q.shape[0]):
                    a = q[d] - x[d]
                    s += a * a
                key[t] = s
            order = np.argsort(ri[:rs])  # by index first: the stable sort then breaks ties by it
            kk = key[:rs][order]
            order = order[np.argsort(kk, kind="mergesort")]
            for t in range(min(k, rs)):
                out_i[r, t] = ri[order[t]]
                out_d[r, t] = math.sqrt(key[order[t]])
            for t in range(rs, k):
                out_i[r, t] = -1
                out_d[r, t] = np.inf
