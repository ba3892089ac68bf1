"""Numba kernels of the approximate neighbour search of :mod:`smallvis.io.nndescent`: a
random-projection forest for the first graph, then NN-descent in the *pull* form (compiled on first
use and cached on disk).

Every parallel loop writes only the rows of its own points (a leaf's points, a point's heap, a
point's candidate lists), and every random choice is a hash of (seed, iteration, indices), not a draw
from a shared stream: the result does not depend on the number of threads or on the order in which
they run. Each point's neighbours are a max-heap of the ``k`` smallest (distance, index) pairs (a
strict total order, so ties go to the lower index).

Search distances (``kind``) are monotone in the metric's: ``SQEUCLIDEAN`` (Euclidean, squared
Euclidean, and cosine/correlation on normalised rows), ``MANHATTAN``, ``CHEBYSHEV``, ``MINKOWSKI``
(``sum |x - y|^p``, no root). Long sums keep four partial sums (a fixed order, see
:mod:`smallvis._util.jit`). :mod:`.nndescent_final_kernels` then recomputes the distances of the
found neighbours in float64 under the true metric.
"""

from __future__ import annotations


import numpy as np
from numba import prange

from .._util.jit import njit

SQEUCLIDEAN, MANHATTAN, CHEBYSHEV, MINKOWSKI = 0, 1, 2, 3

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_CHUNK = 256  # points per parallel chunk (fixed: results do not depend on the thread count)


# --- hashing (splitmix64) ---------------------------------------------------------------------------


@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _hash(seed, a, b):
    """A 64-bit hash of (seed, a, b)."""
    h = _mix(np.uint64(seed) + np.uint64(a) * _GOLDEN)
    return _mix(h + np.uint64(b) * _GOLDEN + np.uint64(1))


@njit(cache=True)
def _uniform(seed, a, b):
    """A number in [0, 1) from (seed, a, b)."""
    return float(_hash(seed, a, b) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# --- distances ----------------------------------------------------------------------------------------


@njit(cache=True)
def _sum8(x, y, kind, bound):
    """Squared Euclidean (``kind`` SQEUCLIDEAN) or manhattan distance of rows ``x`` and ``y`` whose
    length is a multiple of 8, with eight partial sums in the data's precision (which the compiler
    can keep in one vector register: the order is fixed, so the bits are too). Stops with the partial
    sum as soon as one exceeds ``bound`` (every 16 coordinates): every term is >= 0, so the partial
    sums only grow."""
    m = x.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = x[0] - x[0]
    d = 0
    while d < m:
        if kind == SQEUCLIDEAN:
            a0 = x[d] - y[d]
            s0 += a0 * a0
            a1 = x[d + 1] - y[d + 1]
            s1 += a1 * a1
            a2 = x[d + 2] - y[d + 2]
            s2 += a2 * a2
            a3 = x[d + 3] - y[d + 3]
            s3 += a3 * a3
            a4 = x[d + 4] - y[d + 4]
            s4 += a4 * a4
            a5 = x[d + 5] - y[d + 5]
            s5 += a5 * a5
            a6 = x[d + 6] - y[d + 6]
            s6 += a6 * a6
            a7 = x[d + 7] - y[d + 7]
            s7 += a7 * a7
        else:
            s0 += abs(x[d] - y[d])
            s1 += abs(x[d + 1] - y[d + 1])
            s2 += abs(x[d + 2] - y[d + 2])
            s3 += abs(x[d + 3] - y[d + 3])
            s4 += abs(x[d + 4] - y[d + 4])
            s5 += abs(x[d + 5] - y[d + 5])
            s6 += abs(x[d + 6] - y[d + 6])
            s7 += abs(x[d + 7] - y[d + 7])
        d += 8
        if (d & 15) == 0 and d < m:
            part = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
            if part > bound:
                return float(part)
    return float(((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)))


@njit(cache=True)
def _dist(X, i, j, kind, p):
    """Search distance between rows ``i`` and ``j`` (monotone in the metric's)."""
    return _dist_below(X, i, j, kind, p, np.inf)


@njit(cache=True)
def _dist_below(X, i, j, kind, p, bound):
    """:func:`_dist`, or a value above ``bound`` when the distance is (squared Euclidean and
    manhattan stop early)."""
    x = X[i]
    y = X[j]
    if kind == SQEUCLIDEAN or kind == MANHATTAN:
        return _sum8(x, y, kind, bound)
    s = 0.0
    if kind == CHEBYSHEV:
        for d in range(x.shape[0]):
            a = abs(x[d] - y[d])
            if a > s:
                s = a
        return s
    for d in range(x.shape[0]):  # MINKOWSKI
        s += abs(x[d] - y[d]) ** p
    return s


@njit(cache=True)
def _dot_margin(X, i, normal, offset):
    m = X.shape[1]
    x = X[i]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    d = 0
    while d + 4 <= m:
        s0 += x[d] * normal[d]
        s1 += x[d + 1] * normal[d + 1]
        s2 += x[d + 2] * normal[d + 2]
        s3 += x[d + 3] * normal[d + 3]
        d += 4
    while d < m:
        s0 += x[d] * normal[d]
        d += 1
    return (s0 + s1) + (s2 + s3) - offset


# --- bounded heaps ------------------------------------------------------------------------------------


@njit(cache=True)
def _push(hd, hi, hf, d, j, flag):
    """Offer ``(d, j)`` to the max-heap row ``hd``/``hi`` (flags ``hf``) of the ``k`` smallest
    (distance, index) pairs: 1 if it entered, 0 if not (not smaller than the root, or listed)."""
    k = hd.shape[0]
    if d > hd[0] or (d == hd[0] and j >= hi[0]):
        return 0
    for t in range(k):
        if hi[t] == j:
            return 0
    i = 0
    while True:
        c = 2 * i + 1
        if c >= k:
            break
        if c + 1 < k and (hd[c + 1] > hd[c] or (hd[c + 1] == hd[c] and hi[c + 1] > hi[c])):
            c += 1
        if hd[c] > d or (hd[c] == d and hi[c] > j):
            hd[i] = hd[c]
            hi[i] = hi[c]
            hf[i] = hf[c]
            i = c
        else:
            break
    hd[i] = d
    hi[i] = j
    hf[i] = flag
    return 1


@njit(cache=True)
def _listed(hi, j):
    for t in range(hi.shape[0]):
        if hi[t] == j:
            return True
    return False


# --- random-projection forest -------------------------------------------------------------------------


@njit(cache=True)
def _build_tree(X, seed, leaf_size, order, starts, ends):
    """One random-projection tree: ``order`` (n,) is permuted so that each leaf is a contiguous
    segment ``order[starts[l]:ends[l]]`` of at most ``leaf_size`` points (more only for duplicates
    that no hyperplane separates). Returns the number of leaves."""
    n, m = X.shape
    for i in range(n):
        order[i] = i
    stack_lo = np.empty(n + 1, dtype=np.int64)
    stack_hi = np.empty(n + 1, dtype=np.int64)
    side = np.empty(n, dtype=np.uint8)
    buf = np.empty(n, dtype=np.int64)
    normal = np.empty(m)
    top = 0
    stack_lo[0] = 0
    stack_hi[0] = n
    top = 1
    leaves = 0
    node = 0
    while top > 0:
        top -= 1
        lo = stack_lo[top]
        hi = stack_hi[top]
        size = hi - lo
        node += 1
        if size <= leaf_size:
            starts[leaves] = lo
            ends[leaves] = hi
            leaves += 1
            continue
        h = _hash(seed, node, 0)
        a = lo + np.int64(h % np.uint64(size))
        b = lo + np.int64(_hash(seed, node, 1) % np.uint64(size - 1))
        if b >= a:
            b += 1
        ia = order[a]
        ib = order[b]
        offset = 0.0
        for d in range(m):
            normal[d] = X[ia, d] - X[ib, d]
            offset += normal[d] * 0.5 * (X[ia, d] + X[ib, d])
        n_left = 0
        for t in range(lo, hi):
            margin = _dot_margin(X, order[t], normal, offset)
            if margin > 0.0:
                left = True
            elif margin < 0.0:
                left = False
            else:  # on the hyperplane (duplicates): a coin
                left = (_hash(seed, node, 2 + t) >> np.uint64(63)) == np.uint64(0)
            side[t] = 1 if left else 0
            n_left += 1 if left else 0
        if n_left == 0 or n_left == size:  # no separation: halves in the current order
            mid = lo + size // 2
        else:
            c = lo
            for t in range(lo, hi):
                if side[t] == 1:
                    buf[c] = order[t]
                    c += 1
            mid = c
            for t in range(lo, hi):
                if side[t] == 0:
                    buf[c] = order[t]
                    c += 1
            for t in range(lo, hi):
                order[t] = buf[t]
        stack_lo[top] = mid
        stack_hi[top] = hi
        top += 1
        stack_lo[top] = lo
        stack_hi[top] = mid
        top += 1
    return leaves


@njit(parallel=True, cache=True)
def build_forest(X, seed, n_trees, leaf_size):
    """``n_trees`` trees (:func:`_build_tree`), each from its own seed: (orders, starts, ends,
    counts), one row per tree."""
    n = X.shape[0]
    orders = np.empty((n_trees, n), dtype=np.int64)
    starts = np.empty((n_trees, n), dtype=np.int64)
    ends = np.empty((n_trees, n), dtype=np.int64)
    counts = np.empty(n_trees, dtype=np.int64)
    for t in prange(n_trees):
        counts[t] = _build_tree(X, _hash(seed, 1_000_003, t), leaf_size, orders[t], starts[t],
                                ends[t])
    return orders, starts, ends, counts


@njit(parallel=True, cache=True)
def init_graph(X, k, kind, p, seed, orders, starts, ends, counts):
    """The first graph: every pair of points sharing a leaf of a tree, then random points for the
    rows still short of ``k``. Returns heaps (distances, indices, new flags), each (n, k)."""
    n = X.shape[0]
    hd = np.full((n, k), np.inf)
    hi = np.full((n, k), -1, dtype=np.int64)
    hf = np.zeros((n, k), dtype=np.uint8)
    for t in range(orders.shape[0]):  # the leaves of one tree are disjoint: parallel over them
        order = orders[t]
        for leaf in prange(counts[t]):
            lo = starts[t, leaf]
            hi_ = ends[t, leaf]
            for a in range(lo, hi_):
                i = order[a]
                for b in range(a + 1, hi_):
                    j = order[b]
                    d = _dist(X, i, j, kind, p)
                    _push(hd[i], hi[i], hf[i], d, j, 1)
                    _push(hd[j], hi[j], hf[j], d, i, 1)
    for i in prange(n):
        if hi[i, 0] >= 0:  # the root is filled last
            continue
        tries = 0
        while hi[i, 0] < 0 and tries < 8 * k:
            j = np.int64(_hash(seed, i, 2_000_003 + tries) % np.uint64(n))
            tries += 1
            if j != i:
                _push(hd[i], hi[i], hf[i], _dist(X, i, j, kind, p), j, 1)
        j = 0
        while hi[i, 0] < 0:  # unlucky: the lowest indices
            if j != i:
                _push(hd[i], hi[i], hf[i], _dist(X, i, j, kind, p), j, 1)
            j += 1
    return hd, hi, hf


# --- NN-descent ---------------------------------------------------------------------------------------


@njit(cache=True)
def _reverse(hd, hi, hf):
    """The reverse graph as CSR: for each point ``j``, the points listing it and those entries'
    distances and flags, in index order: (ptr, rev, rdist, rflag)."""
    n, k = hi.shape
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        for t in range(k):
            ptr[hi[i, t] + 1] += 1
    for j in range(n):
        ptr[j + 1] += ptr[j]
    pos = ptr[:-1].copy()
    rev = np.empty(n * k, dtype=np.int64)
    rflag = np.empty(n * k, dtype=np.uint8)
    rdist = np.empty(n * k, dtype=hd.dtype)
    for i in range(n):
        for t in range(k):
            j = hi[i, t]
            rev[pos[j]] = i
            rflag[pos[j]] = hf[i, t]
            rdist[pos[j]] = hd[i, t]
            pos[j] += 1
    return ptr, rev, rdist, rflag


@njit(parallel=True, cache=True)
def _candidates(hd, hi, hf, ptr, rev, rdist, rflag, max_cand):
    """Each point's candidates: up to ``max_cand`` new and ``max_cand`` old ones among its
    neighbours and reverse neighbours, the nearest (ties: the lower index; a set that does not depend
    on the order they are offered in). The new neighbours taken are flagged old in ``hf``."""
    n, k = hi.shape
    new_c = np.full((n, max_cand), -1, dtype=np.int64)
    old_c = np.full((n, max_cand), -1, dtype=np.int64)
    for j in prange(n):
        new_p = np.full(max_cand, np.inf, dtype=hd.dtype)
        old_p = np.full(max_cand, np.inf, dtype=hd.dtype)
        dummy = np.zeros(max_cand, dtype=np.uint8)
        nc = new_c[j]
        oc = old_c[j]
        for t in range(k + ptr[j + 1] - ptr[j]):
            if t < k:
                i = hi[j, t]
                flag = hf[j, t]
                d = hd[j, t]
            else:
                i = rev[ptr[j] + t - k]
                flag = rflag[ptr[j] + t - k]
                d = rdist[ptr[j] + t - k]
            if flag:
                _push(new_p, nc, dummy, d, i, 0)
            else:
                _push(old_p, oc, dummy, d, i, 0)
        for t in range(k):
            if hf[j, t] and _listed(nc, hi[j, t]):
                hf[j, t] = 0
    return new_c, old_c


@njit(cache=True)
def _collect(mark, i, q, buf, nb):
    """Append point ``q`` to point ``i``'s batch ``buf[:nb]`` unless ``mark`` says it is there (or
    listed); returns the batch's new length."""
    if mark[q] == i:
        return nb
    mark[q] = i
    buf[nb] = q
    return nb + 1


@njit(parallel=True, cache=True)
def _join(X, hd, hi, hf, new_c, old_c, kind, p):
    """The local join, pulled: each point offers its own heap its new candidates, their candidates
    (new and old) and its old candidates' new candidates, each once, in that order. The point's
    batch of candidates is collected first, then their distances computed in one loop (no heap work
    between the rows' reads: ~0.6x the time of computing and offering each in turn, 70,000 x 50,
    k = 15), then offered in the same order (the same heaps as offering each in turn: a distance cut
    short above the heap's root at the batch's start is above the root when offered). Returns the
    number of entries that entered the heaps and the number of distances computed."""
    n, k = hi.shape
    c = new_c.shape[1]
    chunk_size = 4 * _CHUNK
    n_chunks = (n + chunk_size - 1) // chunk_size
    updates = np.zeros(n_chunks, dtype=np.int64)
    evaluated = np.zeros(n_chunks, dtype=np.int64)
    for chunk in prange(n_chunks):
        mark = np.full(n, -1, dtype=np.int32)  # mark[q] == i: q is in i's batch (or listed)
        buf = np.empty(c + 3 * c * c, dtype=np.int64)
        dbuf = np.empty(c + 3 * c * c)
        count = 0
        evals = 0
        for i in range(chunk * chunk_size, min(n, (chunk + 1) * chunk_size)):
            hdi = hd[i]
            hii = hi[i]
            hfi = hf[i]
            mark[i] = i
            for t in range(k):
                mark[hii[t]] = i
            nb = 0
            for a in range(c):
                v = new_c[i, a]
                if v >= 0:
                    nb = _collect(mark, i, v, buf, nb)
            for a in range(c):
                v = new_c[i, a]
                if v < 0:
                    continue
                for b in range(c):
                    q = new_c[v, b]
                    if q >= 0:
                        nb = _collect(mark, i, q, buf, nb)
                    q = old_c[v, b]
                    if q >= 0:
                        nb = _collect(mark, i, q, buf, nb)
            for a in range(c):
                v = old_c[i, a]
                if v < 0:
                    continue
                for b in range(c):
                    q = new_c[v, b]
                    if q >= 0:
                        nb = _collect(mark, i, q, buf, nb)
            bound = hdi[0]
            for t in range(nb):
                dbuf[t] = _dist_below(X, i, buf[t], kind, p, bound)
            for t in range(nb):
                count += _push(hdi, hii, hfi, dbuf[t], buf[t], 1)
            evals += nb
        updates[chunk] = count
        evaluated[chunk] = evals
    return updates.sum(), evaluated.sum()


@njit(cache=True)
def nn_descent(X, hd, hi, hf, kind, p, max_cand, n_iters, delta):
    """Improve the graph ``hd``/``hi``/``hf`` in place until an iteration changes fewer than
    ``delta * n * k`` entries, or ``n_iters`` iterations. Returns the iterations run and the
    distances computed."""
    n, k = hi.shape
    total = 0
    for it in range(n_iters):
        ptr, rev, rdist, rflag = _reverse(hd, hi, hf)
        new_c, old_c = _candidates(hd, hi, hf, ptr, rev, rdist, rflag, max_cand)
        changed, evaluated = _join(X, hd, hi, hf, new_c, old_c, kind, p)
        total += evaluated
        if changed < delta * n * k:
            return it + 1, total
    return n_iters, total
