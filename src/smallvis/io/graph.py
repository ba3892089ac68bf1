"""Neighbours and affinities given instead of data: a kNN distance graph, ``(indices, distances)``
arrays, or the input affinities P themselves.

- A **kNN graph** is a sparse (n, n) matrix whose row ``i`` stores the distances from point ``i``
  to its neighbours (scikit-learn's ``kneighbors_graph(X, k, mode="distance")`` or
  ``KNeighborsTransformer``, whose rows also store the point itself at distance 0). With
  ``metric="precomputed"`` it gives every method that works from neighbours (the kNN kernels, the
  kNN-restricted perplexity calibration) what a search would have found.
- **(indices, distances)**: two (n, k) arrays, each row nearest first (umap-learn's
  ``precomputed_knn``, pynndescent's ``neighbor_graph``); a first column listing the point itself
  is dropped.
- **Affinities**: ``metric="affinities"`` takes P (dense or sparse, n x n) as the method's input
  affinities, validated against what the method needs (:func:`check_affinities`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_affinities", "graph_neighbors", "is_graph", "knn_arrays_to_graph"]


def is_graph(X) -> bool:
    """A scipy sparse matrix, or an ``(indices, distances)`` pair of 2-D arrays."""
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):
        return True
    return (isinstance(X, tuple) and len(X) == 2
            and all(np.ndim(part) == 2 for part in X))


def knn_arrays_to_graph(indices, distances):
    """The CSR graph of ``(indices, distances)`` (n, k) arrays, the point itself dropped."""
    import scipy.sparse as sp

    idx = np.asarray(indices)
    dist = np.asarray(distances, dtype=np.float64)
    if idx.shape != dist.shape or idx.ndim != 2:
        raise ValueError(f"precomputed neighbours: indices and distances must be two (n, k) arrays "
                         f"of the same shape; got {idx.shape} and {dist.shape}")
    if not np.issubdtype(idx.dtype, np.integer):
        if not np.all(np.isfinite(idx)) or np.any(idx != np.round(idx)):
            raise ValueError("precomputed neighbours: indices must be whole numbers")
        idx = idx.astype(np.int64)
    n, k = idx.shape
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"precomputed neighbours: indices must lie in [0, n - 1] = [0, {n - 1}] "
                         f"(missing neighbours, -1, are not allowed); got {idx.min()} .. {idx.max()}")
    rows = np.repeat(np.arange(n), k)
    keep = idx.ravel() != rows
    G = sp.csr_matrix((dist.ravel()[keep], (rows[keep], idx.ravel()[keep])), shape=(n, n))
    return G, int(keep.reshape(n, k).sum(axis=1).min())


def graph_neighbors(G) -> tuple[np.ndarray, np.ndarray]:
    """Each row's stored neighbours of a kNN distance graph ``G`` (CSR), the point itself left out,
    ``(indices, distances)`` (n, k) nearest first (ties: lower index), k the smallest row count.

    Raises ``ValueError`` for negative or non-finite distances, a non-square matrix, or a row with no
    neighbour."""
    G = G.tocsr()
    n = G.shape[0]
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"metric='precomputed' with a sparse matrix takes a kNN distance graph "
                         f"(n, n); got shape {G.shape}")
    G = G.astype(np.float64)
    G.sort_indices()
    if not np.isfinite(G.data).all():
        raise ValueError("the kNN graph has NaN or infinite distances")
    if (G.data < 0).any():
        first = int(np.flatnonzero(G.data < 0)[0])
        row = int(np.searchsorted(G.indptr, first, side="right") - 1)
        raise ValueError(f"the kNN graph has negative distances (first at row {row}, column "
                         f"{int(G.indices[first])}): distances must be >= 0")
    rows = np.repeat(np.arange(n), np.diff(G.indptr))
    off = G.indices != rows  # the point itself (stored at distance 0 by KNeighborsTransformer)
    counts = np.bincount(rows[off], minlength=n)
    k = int(counts.min())
    if k < 1:
        raise ValueError(f"the kNN graph has a point with no neighbour (row {int(np.argmin(counts))})")
    r_off, c_off, d_off = rows[off], G.indices[off], G.data[off]
    order = np.lexsort((c_off, d_off, r_off))  # by row, then distance, then index
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    take = order[start[:, None] + np.arange(k)[None, :]]
    idx, dist = c_off[take].astype(np.int64), d_off[take]
    return idx, dist


def check_affinities(P, *, normalized: bool, symmetric: bool, what: str = "the given P"):
    """Raise ``ValueError`` unless ``P`` (dense or sparse, (n, n)) is finite and non-negative with a
    zero diagonal, sums to 1 when the method's P is ``normalized``, and is symmetric when the
    method needs it; return it as float64 (dense stays dense, sparse becomes CSR)."""
    sparse = hasattr(P, "tocsr")
    P = P.tocsr().astype(np.float64) if sparse else np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"{what} must be a square (n, n) matrix; got shape {P.shape}")
    values = P.data if sparse else P
    if not np.isfinite(values).all():
        raise ValueError(f"{what} has NaN or infinite entries")
    if (values < 0).any():
        raise ValueError(f"{what} has negative entries: affinities are >= 0")
    if np.any(P.diagonal() != 0):
        raise ValueError(f"{what} has non-zero diagonal entries: a point has no affinity to itself")
    total = float(P.sum())
    if total <= 0:
        raise ValueError(f"{what} is all zeros")
    if normalized and abs(total - 1.0) > 1e-6:
        raise ValueError(f"{what} sums to {total:.6g}; this method's P is a joint distribution "
                         f"that sums to 1 (divide it by its sum)")
    if symmetric:
        diff = abs(P - P.T).max() if sparse else np.abs(P - P.T).max()
        if diff > 1e-12 * max(1.0, float(values.max())):
            raise ValueError(f"{what} is not symmetric (largest |P - P.T| = {diff:.3g}); this "
                             f"method needs a symmetric P (symmetrise it, e.g. (P + P.T) / 2)")
    return P
