"""The original's exact (brute-force) nearest-neighbour search, reproduced for the methods whose
numbers depend on which neighbours it picks (gmmds, knnmmds).

Behaviour established by running the original's search (rnndescent's ``brute_force_knn``, the
dependency smallvis calls for exact neighbours) on R's iris, raw and absmax-scaled, ``k + 1`` = 11
and 31:

- **single precision**: the coordinates are rounded to float32 and the squared differences summed
  in float32 in coordinate order; the square root is taken in double. These values are both the
  ranking key and the distances returned (about 1e-7 relative from the double ones), so near-ties
  that double precision separates can swap, and values that differ in double can tie;
- **the point itself is a candidate like any other** (it is at distance 0, so a duplicate's twin may
  come before it);
- **ties by a k-slot max-heap**: the heap starts with k slots at +inf; points are offered in index
  order, and one is taken only if strictly nearer than the current farthest (the root), which it
  replaces before sifting down: it moves below the larger child (the left one when both are equal)
  while that child is strictly farther. So among exactly tied points at the k-th place, which
  survive depends on the heap's shape, not simply on the index. On iris this rule gives the original's
  neighbour sets for every point (index order alone misses 2 of 150 at k + 1 = 11 and 7 at 31).

The search is O(n^2 p) time and O(block n) memory: it serves the dense distance methods only.
"""

from __future__ import annotations

import numpy as np

from .._util.jit import njit


@njit(cache=True)
def _heap_select(d, k, idx_out, dist_out):
    """The k-slot max-heap selection over ``d`` (one row, offered in index order), then sorted
    by (distance, heap position) into ``idx_out``/``dist_out``."""
    hd = np.full(k, np.inf)
    hi = np.full(k, -1, dtype=np.int64)
    for j in range(d.shape[0]):
        v = d[j]
        if not v < hd[0]:
            continue
        pos = 0
        while True:
            left = 2 * pos + 1
            if left >= k:
                break
            child = left
            if left + 1 < k and hd[left + 1] > hd[left]:
                child = left + 1
            if hd[child] > v:
                hd[pos] = hd[child]
                hi[pos] = hi[child]
                pos = child
            else:
                break
        hd[pos] = v
        hi[pos] = j
    order = np.argsort(hd, kind="mergesort")
    for r in range(k):
        idx_out[r] = hi[order[r]]
        dist_out[r] = hd[order[r]]


@njit(cache=True)
def _select_rows(sq, k, idx, dist):
    for r in range(sq.shape[0]):
        _heap_select(np.sqrt(sq[r].astype(np.float64)), k, idx[r], dist[r])


def single_precision_distances(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Squared distances (float32, (len(rows), n)) from ``X[rows]`` to every point, as the
    original's search computes them: float32 coordinates, float32 sums in coordinate order."""
    Xf = np.asarray(X, dtype=np.float32)
    sq = np.zeros((rows.size, Xf.shape[0]), dtype=np.float32)
    for c in range(Xf.shape[1]):
        diff = Xf[rows, c][:, None] - Xf[None, :, c]
        sq += diff * diff
    return sq


def original_neighbors(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each point's ``k`` nearest *other* points and their (single-precision) distances, each
    (n, k), as the original's exact search picks them: its ``k + 1`` nearest, the point itself
    removed (wherever it falls among tied zeros). Where the point itself is not among them (more
    than ``k`` duplicates), the farthest of the ``k + 1`` is dropped instead."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    m = min(k + 1, n)
    idx1 = np.empty((n, m), dtype=np.int64)
    dist1 = np.empty((n, m))
    block = int(max(1, min(n, (32 * 2**20) // (4 * max(n, 1)))))
    for start in range(0, n, block):
        stop = min(n, start + block)
        _select_rows(single_precision_distances(X, np.arange(start, stop)), m,
                     idx1[start:stop], dist1[start:stop])
    keep = idx1 != np.arange(n)[:, None]
    keep[keep.all(axis=1), m - 1] = False
    return idx1[keep].reshape(n, m - 1)[:, :k], dist1[keep].reshape(n, m - 1)[:, :k]
