"""New points' nearest neighbours among indexed points, found by walking the indexed points' own
neighbour graph (as pynndescent's and HNSW's queries do) instead of measuring every distance.

A transform (:mod:`smallvis.api.transform`) keeps the fitted points' neighbour graph; a query
starts at the fitted points nearest to it among a fixed, evenly spaced set of pivots and walks the
graph (each edge both ways) best first, keeping the ``ef`` nearest points found, until no unexpanded
point is nearer than the farthest kept one (:func:`.graph_query_kernels.graph_query`). The result is
approximate (a true neighbour the walk never reaches is missed: ``recall`` measures it) and
deterministic: no random draws, every query searched on its own, ties to the lower index.
"""

from __future__ import annotations

import numpy as np

__all__ = ["graph_neighbors", "search_graph", "search_trees", "recall"]

TREES = 2  # random-projection trees: a query starts from the points of its leaf in each
LEAF_SIZE = 32
EF_EXTRA = 16  # points kept beyond the k asked for (more: higher recall, slower)
SEED = 20240601  # the trees' hash seed (fixed: a search is a function of its input)


def search_graph(neighbors: np.ndarray, reverse: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The walk's graph, CSR ``(indptr, indices)`` over the ``n`` indexed points: each point's
    neighbours (``neighbors`` (n, k) indices) and, with ``reverse``, the points that list it, each
    once, in index order (without: its neighbours as listed, nearest first)."""
    from scipy import sparse

    n, k = neighbors.shape
    if not reverse and np.all(neighbors >= 0):  # (an unfilled slot, -1: the filtered CSR below)
        idx = np.ascontiguousarray(neighbors, dtype=np.int64)
        return np.arange(0, n * k + 1, k, dtype=np.int64), idx.ravel()
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = np.asarray(neighbors, dtype=np.int64).ravel()
    keep = (cols >= 0) & (cols != rows)
    rows, cols = rows[keep], cols[keep]
    A = sparse.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
    A = (A + A.T).tocsr() if reverse else A
    A.sort_indices()
    return np.asarray(A.indptr, dtype=np.int64), np.asarray(A.indices, dtype=np.int64)


def graph_neighbors(X: np.ndarray, Q: np.ndarray, neighbors: np.ndarray, k: int, *,
                    ef: int | None = None, graph=None, trees=None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of ``X`` (n, p) to each row of ``Q`` (m, p) by the graph walk on
    ``neighbors`` (X's own neighbour indices, (n, k')), Euclidean: ``(indices, distances)`` (m, k),
    nearest first, ties to the lower index. ``ef``: points kept during a walk (default
    ``k + EF_EXTRA``); ``graph``, ``trees``: :func:`search_graph`'s and :func:`search_trees`'s
    results when already made. A query whose
    walk reaches fewer than ``k`` points (a graph in pieces) is searched exactly."""
    from .graph_query_kernels import graph_query

    X = np.ascontiguousarray(X, dtype=np.float64)
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    n, m = X.shape[0], Q.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the {n} indexed points; got {k}")
    if Q.ndim != 2 or Q.shape[1] != X.shape[1]:
        raise ValueError(f"the queries have shape {Q.shape}, the indexed points {X.shape}")
    ef = k + EF_EXTRA if ef is None else int(ef)
    if ef < k:
        raise ValueError(f"ef must be at least k = {k}; got {ef}")
    ef = min(ef, n)
    indptr, indices = search_graph(neighbors) if graph is None else graph
    trees, orders = search_trees(X) if trees is None else trees
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k))
    graph_query(X, Q, indptr, indices, trees, orders, ef, idx, dist)
    short = np.flatnonzero(idx[:, -1] < 0)
    if short.size:
        from .neighbors import query_neighbors

        idx[short], dist[short] = query_neighbors(Q[short], X, k)
    return idx, dist


def search_trees(X: np.ndarray, n_trees: int = TREES, leaf_size: int = LEAF_SIZE):
    """The walk's entry points: ``n_trees`` random-projection trees of the rows of ``X``
    (:func:`.graph_query_kernels.build_tree`, seeded by :data:`SEED` and the tree's number, one
    per thread), as ``(trees (T, 6, nodes), orders (T, n))`` cut to the largest number of nodes."""
    from .graph_query_kernels import build_forest

    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    trees = np.empty((n_trees, 6, 2 * n + 1), dtype=np.int64)
    orders = np.empty((n_trees, n), dtype=np.int64)
    width = int(build_forest(X, SEED, leaf_size, trees, orders).max())
    return np.ascontiguousarray(trees[:, :, :width]), orders


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    """The share of the exact neighbours (``exact`` (m, k) indices) that ``found`` lists."""
    m, k = exact.shape
    hits = sum(np.intersect1d(found[i], exact[i]).size for i in range(m))
    return hits / float(m * k)
