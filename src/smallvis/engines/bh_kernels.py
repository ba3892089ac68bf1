"""Numba kernels of the Barnes-Hut engine: a space-partitioning tree (binary tree, quad tree or
octree: ``2^k`` children per cell in ``k`` dimensions) and the repulsion summed over it (compiled on
first use and cached on disk).

The tree follows the original's Barnes-Hut t-SNE:

- the root cell is centred at the midpoint of the bounding box, its side the largest range;
- points are inserted in input order; a leaf holds one distinct location, and a point within ``tol``
  of a leaf's centre of mass in every coordinate is merged into it (its count goes up by one, its
  centre of mass is the running mean). The original's ``tol`` is ``eps``; the engine passes ``eps``
  times the root cell's side, which is the same wherever that side is about 1 but keeps distinct
  points distinct in a tiny embedding (early exaggeration can shrink one to 1e-15);
- the child of a cell is chosen by ``y_d > c_d`` for each coordinate ``d`` (bit ``d`` of the child's
  slot), so in two dimensions the slots are SW (0), SE (1), NW (2), NE (3);
- each node keeps its count and centre of mass (the mean of its points).

Nodes live in flat arrays grown by doubling; children are only created when a point goes there (the
original's empty cells are never stored, which skips them). For the traversal the tree is laid out
in depth-first preorder with a *skip* index per node (the position after its subtree): opening a
node is moving to the next position, summarising it is jumping to its skip, so the traversal needs
neither recursion nor a stack, and reads the node array front to back.

Every point's repulsion is a sequential sum over the same tree in the same order, and points are
independent, so the results do not depend on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .output_kernel_functions import T_KERNEL

# Deepest level a point is pushed to. A cell at this depth is 2^-50 (about 1e-15) of the root's
# side: two points closer than that cannot be told apart at the scale of the embedding, so instead
# of splitting further (a chain of up to one node per level for every such pair, and eventually
# cell centres that no longer change in floating point) the new point is merged into the leaf, as
# if it were a duplicate.
MAX_DEPTH = 50


@njit(cache=True, error_model="numpy")
def _slot(y, centre):
    """Child slot of location ``y`` in a cell centred at ``centre``: bit ``d`` set when
    ``y_d > centre_d``."""
    s = 0
    for d in range(y.shape[0]):
        if y[d] > centre[d]:
            s |= 1 << d
    return s


@njit(cache=True, error_model="numpy")
def _close(a, b, tol):
    """True when ``|a_d - b_d| < tol`` in every coordinate."""
    for d in range(a.shape[0]):
        if not abs(a[d] - b[d]) < tol:
            return False
    return True


@njit(cache=True)
def _grow(children, count, com, moved):
    """The node arrays with twice the capacity (the new rows empty)."""
    cap = count.shape[0]
    new = 2 * cap
    ch = np.full((new, children.shape[1]), -1, dtype=np.int64)
    ch[:cap] = children
    cn = np.zeros(new)
    cn[:cap] = count
    cm = np.zeros((new, com.shape[1]))
    cm[:cap] = com
    mv = np.full(new, -1, dtype=np.int64)
    mv[:cap] = moved
    return ch, cn, cm, mv


@njit(cache=True, error_model="numpy")
def build_tree(Y, tol):
    """Insert the rows of ``Y`` (n, k) in order (points within ``tol`` of a leaf merge into it).

    Returns ``(children (m, 2^k), count (m,), com (m, k), leaf (n,), side)``: the nodes in
    creation order (a child always after its parent); ``children[c, s]`` the node in slot ``s``
    of node ``c`` (-1: none; a node without children is a leaf), ``com`` the centre of mass of its
    ``count`` points; ``leaf[i]`` the leaf holding point ``i``; ``side`` the root cell's side
    (a cell's side halves at every level).

    Inserting touches only the leaves: a cell's centre is worked out on the way down, and the
    counts and centres of mass of the internal nodes are filled in at the end from their
    children's (the mean of their points, as the original's running mean, up to rounding). So a
    descent reads two small rows per level rather than whole nodes.
    """
    n, k = Y.shape
    nch = 1 << k
    cap = 2 * n + 16
    children = np.full((cap, nch), -1, dtype=np.int64)
    count = np.zeros(cap)
    com = np.zeros((cap, k))
    moved = np.full(cap, -1, dtype=np.int64)  # >= 0: a split leaf, its points went to that child
    leaf = np.zeros(n, dtype=np.int64)
    root = np.zeros(k)
    width = 0.0
    for d in range(k):
        lo = Y[0, d] if n > 0 else 0.0
        hi = lo
        for i in range(1, n):
            v = Y[i, d]
            lo = min(lo, v)
            hi = max(hi, v)
        root[d] = 0.5 * (lo + hi)
        width = max(width, hi - lo)
    cen = np.empty(k)
    m = 1
    for i in range(n):
        y = Y[i]
        for d in range(k):
            cen[d] = root[d]
        side = width
        node = 0
        depth = 0
        while True:
            if moved[node] >= 0:  # internal: down into the child cell, made if empty
                s = _slot(y, cen)
                q = 0.25 * side
                for d in range(k):
                    cen[d] += q if (s >> d) & 1 else -q
                side *= 0.5
                child = children[node, s]
                if child < 0:
                    if m == count.shape[0]:
                        children, count, com, moved = _grow(children, count, com, moved)
                    child = m
                    m += 1
                    children[node, s] = child
                node = child
                depth += 1
            elif count[node] == 0.0:  # an empty leaf (a new one, or the root)
                count[node] = 1.0
                for d in range(k):
                    com[node, d] = y[d]
                break
            elif depth >= MAX_DEPTH or _close(y, com[node], tol):
                # a duplicate (or inseparable, see MAX_DEPTH): merged into the leaf
                c = count[node] + 1.0
                count[node] = c
                for d in range(k):
                    com[node, d] += (y[d] - com[node, d]) / c
                break
            else:
                # split: the leaf's location moves down into a child; the next pass takes the
                # new point down from the now internal cell
                if m == count.shape[0]:
                    children, count, com, moved = _grow(children, count, com, moved)
                s = _slot(com[node], cen)
                child = m
                m += 1
                count[child] = count[node]
                for d in range(k):
                    com[child, d] = com[node, d]
                children[node, s] = child
                moved[node] = child
        leaf[i] = node
    for i in range(n):  # points stored in a leaf that was split later went down with it
        c = leaf[i]
        while moved[c] >= 0:
            c = moved[c]
        leaf[i] = c
    for c in range(m - 1, -1, -1):  # internal nodes from their children (created after them)
        if moved[c] >= 0:
            total = 0.0
            for d in range(k):
                com[c, d] = 0.0
            for s in range(nch):
                ch = children[c, s]
                if ch >= 0:
                    total += count[ch]
                    for d in range(k):
                        com[c, d] += count[ch] * com[ch, d]
            count[c] = total
            for d in range(k):
                com[c, d] /= total
    return children[:m], count[:m], com[:m], leaf, width


@njit(cache=True, error_model="numpy")
def second_moments(node, skip, k, base):
    """Fill the ``k (k + 1) / 2`` columns from ``base`` of the preordered ``node`` (:func:`preorder`:
    ``base = k + 2``, the last ones) with
    each internal node's second moment about its centre, ``M = sum_j N_j (y_j - com)(y_j - com)^T``
    over its points (``N_j``: the count or charge column ``k``), as ``M_00, M_01, .., M_0(k-1),
    M_11, ..``: from its children's by the parallel-axis rule (children come after their parent:
    bottom-up). A leaf's is 0 (its points are within ``tol`` of its location; leaves are summed as
    points)."""
    m = skip.shape[0]
    nq = k * (k + 1) // 2
    for p in range(m - 1, -1, -1):
        for a in range(nq):
            node[p, base + a] = 0.0
        if skip[p] == p + 1:
            continue
        q = p + 1
        while q < skip[p]:
            nq_ = node[q, k]
            a = 0
            for d in range(k):
                dd = node[q, d] - node[p, d]
                for e in range(d, k):
                    node[p, base + a] += node[q, base + a] + nq_ * dd * (node[q, e] - node[p, e])
                    a += 1
            q = skip[q]


@njit(cache=True, error_model="numpy")
def preorder(children, count, com, leaf, side):
    """The tree of :func:`build_tree` in depth-first preorder (children in slot order).

    Returns ``node`` (m, k + 2 + k (k + 1) / 2), each row a node's centre of mass (k), count,
    squared side and second moments (:func:`second_moments`);
    ``skip`` (m,), the position after the node's subtree (``skip[p] == p + 1``: a leaf); and
    ``order`` (n,), the points sorted by the position of their leaf: a space-filling order in
    which consecutive points visit nearly the same nodes, which keeps the traversal in cache.
    """
    m, nch = children.shape
    k = com.shape[1]
    size = np.ones(m, dtype=np.int64)
    for c in range(m - 1, -1, -1):  # children come after their parent: sizes bottom-up
        for s in range(nch):
            ch = children[c, s]
            if ch >= 0:
                size[c] += size[ch]
    pos = np.zeros(m, dtype=np.int64)
    side2 = np.empty(m)
    side2[0] = side * side
    for c in range(m):  # parents before children: positions and sides top-down
        nxt = pos[c] + 1
        for s in range(nch):
            ch = children[c, s]
            if ch >= 0:
                pos[ch] = nxt
                nxt += size[ch]
                side2[ch] = 0.25 * side2[c]
    node = np.empty((m, k + 2 + k * (k + 1) // 2))
    skip = np.empty(m, dtype=np.int64)
    for c in range(m):
        p = pos[c]
        for d in range(k):
            node[p, d] = com[c, d]
        node[p, k] = count[c]
        node[p, k + 1] = side2[c]
        skip[p] = p + size[c]
    second_moments(node, skip, k, k + 2)
    n = leaf.shape[0]  # a counting sort of the points by their leaf's position
    start = np.zeros(m + 1, dtype=np.int64)
    for i in range(n):
        start[pos[leaf[i]] + 1] += 1
    for p in range(m):
        start[p + 1] += start[p]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        p = pos[leaf[i]]
        order[start[p]] = i
        start[p] += 1
    return node, skip, order


@njit(cache=True, error_model="numpy", inline="always")
def moments(rec, k, b):
    """The second moments ``M_00, M_01, M_02, M_11, M_12, M_22`` of a node row, from column ``b``
    (:func:`second_moments`; the missing ones 0)."""
    m00 = rec[b]
    m01 = rec[b + 1] if k > 1 else 0.0
    m02 = rec[b + 2] if k > 2 else 0.0
    m11 = rec[b + k] if k > 1 else 0.0
    m12 = rec[b + 4] if k > 2 else 0.0
    m22 = rec[b + 5] if k > 2 else 0.0
    return m00, m01, m02, m11, m12, m22


@njit(parallel=True, cache=True, error_model="numpy")
def repulsion_sums(Y, node, skip, order, theta, eps, tol, code, alpha, want_forces, quad, zrow,
                   R):
    """Barnes-Hut sums for every point ``i`` (``k = Y.shape[1]`` in 1, 2, 3) over the preordered
    tree (``node``, ``skip`` of :func:`preorder`; points visited in ``order``, which each point's
    sums do not depend on; a part of ``order`` visits those points only, the other rows of ``zrow``
    and ``R`` left as they were):

    ``zrow[i] = sum_c N_c w_c`` and, with ``want_forces``,
    ``R[i] = sum_c N_c w_c^(1 + alpha) (y_i - com_c)`` over the summarised nodes ``c``, with
    ``d2 = eps + |com_c - y_i|^2`` and ``w = 1 / (1 + d2)`` (Student-t, ``code == 0``, alpha 1)
    or ``(1 + alpha d2)^(-1/alpha)``. A node is summarised when it is a leaf or
    ``side^2 < theta^2 d2``; leaves within ``tol`` of ``y_i`` in every coordinate (the point
    itself and the points merged with it) are skipped.

    With ``quad`` a summarised internal node adds its quadrupole terms: for ``r = y_i - com_c``
    and its second moment ``M`` (:func:`second_moments`), ``sum_j phi(|r - delta_j|^2) ~=
    N phi + phi' tr M + 2 phi'' r^T M r`` (``phi = w``, derivatives in ``d2``) and
    ``sum_j psi(|r - delta_j|^2) (r - delta_j) ~= r (N psi + psi' tr M + 2 psi'' r^T M r) +
    2 psi' M r`` (``psi = w^(1 + alpha)``): with ``v = 1 / (1 + alpha d2)``, ``phi' = -w v``,
    ``phi'' = (1 + alpha) w v^2``, ``psi = w v``, ``psi' = -(1 + alpha) w v^2``,
    ``psi'' = (1 + alpha) (1 + 2 alpha) w v^3``. Leaves are summed as before (``theta = 0``:
    the same numbers with or without).

    The coordinates are held in three scalars (the missing ones 0), so the loop keeps everything
    in registers whatever k.
    """
    k = Y.shape[1]
    m = skip.shape[0]
    theta2 = theta * theta
    inv_alpha = 1.0 / alpha
    c1 = 1.0 + alpha
    c2 = (1.0 + alpha) * (1.0 + 2.0 * alpha)
    for t in prange(order.shape[0]):  # every point, or a transform's moving ones
        i = order[t]
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        z = 0.0
        r0 = 0.0
        r1 = 0.0
        r2 = 0.0
        p = 0
        while p < m:
            nxt = skip[p]
            rec = node[p]
            e0 = y0 - rec[0]
            e1 = y1 - rec[1] if k > 1 else 0.0
            e2 = y2 - rec[2] if k > 2 else 0.0
            d2 = eps + (e0 * e0 + e1 * e1 + e2 * e2)
            leaf = nxt == p + 1
            if leaf:  # a leaf: skipped when it is y_i's own location
                if abs(e0) < tol and abs(e1) < tol and abs(e2) < tol:
                    p = nxt
                    continue
            elif not rec[k + 1] < theta2 * d2:  # too close to summarise: open it
                p += 1
                continue
            if code == T_KERNEL:
                w = 1.0 / (1.0 + d2)
                nw = rec[k] * w
                f = nw * w
            else:
                ad2 = alpha * d2
                w = math.exp(-math.log1p(ad2) * inv_alpha)
                nw = rec[k] * w
                f = nw / (1.0 + ad2)
            if quad and not leaf:
                v = w if code == T_KERNEL else 1.0 / (1.0 + alpha * d2)
                m00, m01, m02, m11, m12, m22 = moments(rec, k, k + 2)
                q0 = m00 * e0 + m01 * e1 + m02 * e2
                q1 = m01 * e0 + m11 * e1 + m12 * e2
                q2 = m02 * e0 + m12 * e1 + m22 * e2
                tr = m00 + m11 + m22
                rmr = e0 * q0 + e1 * q1 + e2 * q2
                wv = w * v
                wv2 = wv * v
                nw += -wv * tr + 2.0 * c1 * wv2 * rmr
                f += -c1 * wv2 * tr + 2.0 * c2 * wv2 * v * rmr
                g = -2.0 * c1 * wv2
                r0 += g * q0
                r1 += g * q1
                r2 += g * q2
            z += nw
            r0 += f * e0
            r1 += f * e1
            r2 += f * e2
            p = nxt
        zrow[i] = z
        if want_forces:
            R[i, 0] = r0
            if k > 1:
                R[i, 1] = r1
            if k > 2:
                R[i, 2] = r2
