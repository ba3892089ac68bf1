"""Approximate nearest neighbours of dense rows: a random-projection forest, then NN-descent.

:func:`approximate_neighbors` is the library's own approximate search (``knn="nndescent"``, and
``"auto"`` above :data:`~smallvis.io.neighbors.EXACT_MAX_N` points). Its kernels
(:mod:`smallvis.io.nndescent_kernels`) are cached on disk, so a fresh process pays no compilation
after the first, and the result for a seed is the same bits with any number of threads, compiled or
loaded from the cache:

1. a few random-projection trees (each splits its points by the hyperplane halfway between two
   random points, down to leaves of at most ``leaf_size`` points); every pair sharing a leaf is a
   first guess, rows still short of ``k`` get random points;
2. NN-descent, pulled: each iteration takes every point's new and old candidates among its
   neighbours and reverse neighbours (at most ``max_candidates`` each, the nearest: the search
   explores from the closest points first, which for many neighbours finds them in fewer and
   cheaper iterations than a random sample), then
   every point offers its own neighbour list its candidates' candidates; it stops when fewer than
   ``delta * n * k`` entries changed, or after ``n_iters`` iterations;
3. the distances of the neighbours found are recomputed in float64 under the metric and each row is
   ordered by them (ties: the lower index), the point itself excluded.

Metrics (:data:`METRICS`): Euclidean, squared Euclidean, manhattan, chebyshev, minkowski (``p``),
and cosine and correlation, searched as Euclidean distances of the normalised (for correlation,
centred) rows, which order the pairs alike. A degenerate row (all zero; constant for correlation)
is at distance 1 from every other point and 0 from another degenerate row (as
:mod:`smallvis.io.metric` defines them): such rows are left out of the search and their neighbours
added exactly.
"""

from __future__ import annotations

import math

import numpy as np

from .._util.log import logger

__all__ = ["METRICS", "approximate_neighbors"]

METRICS = ("euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski", "cosine",
           "correlation")
DELTA = 0.001


def default_settings(n: int, k: int) -> dict:
    """The search's settings for ``n`` points and ``k`` neighbours.

    Up to 30 neighbours (umap's 15): 6 trees, leaves of ``max(80, 2k)`` points, 30 candidates and
    ``delta`` 0.003 (70,000 x 50 blobs, k = 15: recall 0.9569 in 5 iterations, 0.89x the CPU time
    of 8 trees of 60 points with ``delta`` 0.001, recall 0.9548 in 6; resampled digits with noise:
    0.9971 and 0.9972; benchmarks/README.md, knn.py). More (t-SNE's 90): 4 trees of
    ``max(60, k)``-point leaves, 40 candidates and ``delta`` 0.01: exploring from the nearest
    candidates, the neighbours are then found in about 4 iterations (70,000 x 50 blobs, k = 90:
    recall 0.9986 with 4,500 distances per point in the join; 8 trees of 90 points, 30 candidates:
    0.9940 with 3,500 and twice the time; 4 trees of 60, 20 candidates: 0.9775 in 6 iterations;
    benchmarks/README.md, knn.py).
    """
    n_iters = max(5, int(round(math.log2(max(n, 2)))))
    if k <= 30:
        return {"n_trees": 6, "leaf_size": max(80, 2 * k), "max_candidates": 30,
                "n_iters": n_iters, "delta": 3 * DELTA}
    return {"n_trees": 4, "leaf_size": max(60, k), "max_candidates": 40, "n_iters": n_iters,
            "delta": 10 * DELTA}


def _as_seed(random_state) -> int:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state) % 2**63
    from .._util.rng import as_generator

    return int(as_generator(random_state).integers(2**63))


def _search_data(X: np.ndarray, metric):
    """What the kernels search on, their search and final distance kinds, ``p``, row norms and the
    degenerate rows (cosine/correlation)."""
    from . import nndescent_final_kernels as fin
    from . import nndescent_kernels as kern

    name = metric.name
    norms = np.zeros(0)
    degenerate = np.zeros(X.shape[0], dtype=bool)
    if name in ("cosine", "correlation"):
        Xf = X - X.mean(axis=1, keepdims=True) if name == "correlation" else X
        Xf = np.ascontiguousarray(Xf)
        norms = np.sqrt(np.einsum("ij,ij->i", Xf, Xf))
        degenerate = (np.ptp(X, axis=1) == 0) if name == "correlation" else ~np.any(X != 0, axis=1)
        safe = np.where(degenerate, 1.0, norms)
        search = Xf / safe[:, None]
        final = fin.COSINE_D if name == "cosine" else fin.CORRELATION_D
        return search, Xf, kern.SQEUCLIDEAN, final, 2.0, norms, degenerate
    p = float(metric.kwds.get("p", 2.0)) if name == "minkowski" else 2.0
    if name == "minkowski" and p in (1.0, 2.0):
        name = "manhattan" if p == 1.0 else "euclidean"
    kind, final = {"euclidean": (kern.SQEUCLIDEAN, fin.EUCLIDEAN_D),
                   "sqeuclidean": (kern.SQEUCLIDEAN, fin.SQEUCLIDEAN_D),
                   "manhattan": (kern.MANHATTAN, fin.MANHATTAN_D),
                   "chebyshev": (kern.CHEBYSHEV, fin.CHEBYSHEV_D),
                   "minkowski": (kern.MINKOWSKI, fin.MINKOWSKI_D)}[name]
    return X, X, kind, final, p, norms, degenerate


def _search(S, Xf, k, kind, final, p, norms, seed, settings):
    """The search on ``S`` (in float32 where it fits), in the order of the first tree's leaves
    (neighbours then lie near each other in memory), then the final distances on ``Xf``."""
    from . import nndescent_kernels as kern

    n, m = S.shape
    dtype = np.float32 if np.isfinite(S.astype(np.float32)).all() else np.float64
    padded = np.zeros((n, -(-m // 8) * 8), dtype=dtype)  # the distance kernels read rows of 8
    padded[:, :m] = S
    S = padded
    orders, starts, ends, counts = kern.build_forest(S, np.int64(seed), settings["n_trees"],
                                                     settings["leaf_size"])
    perm = orders[0].copy()
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    S = np.ascontiguousarray(S[perm])
    hd, hi, hf = kern.init_graph(S, k, kind, p, np.int64(seed), inv[orders], starts, ends, counts)
    del orders, starts, ends
    iters, evaluated = kern.nn_descent(S, hd, hi, hf, kind, p, settings["max_candidates"],
                                       settings["n_iters"], float(settings["delta"]))
    logger.debug("nndescent: %d points, %d trees, %d iterations, %.0f distances per point", n,
                 settings["n_trees"], iters, evaluated / n)
    found = np.empty_like(hi)
    found[perm] = perm[hi]
    from .nndescent_final_kernels import final_neighbors

    return final_neighbors(Xf, found, final, p, norms)


def _with_degenerate(idx_s, dist_s, keep, degenerate, k):
    """Neighbours of all points from those of the non-degenerate rows ``keep`` (sub-indices): a
    degenerate row is at distance 1 from every other point, 0 from another degenerate row."""
    n = keep.size + degenerate.size
    deg = np.sort(degenerate)
    idx = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    # non-degenerate rows: found neighbours (distances <= 2) merged with the first degenerate rows
    extra = deg[:k]
    cand = np.concatenate([keep[idx_s], np.broadcast_to(extra, (keep.size, extra.size))], axis=1)
    key = np.concatenate([dist_s, np.ones((keep.size, extra.size))], axis=1)
    order = np.lexsort((cand, key), axis=-1)[:, :k]
    idx[keep] = np.take_along_axis(cand, order, axis=1)
    dist[keep] = np.take_along_axis(key, order, axis=1)
    # degenerate rows: the other degenerate rows (0), then the lowest non-degenerate indices (1)
    others = np.sort(keep)[:k]
    for i in deg:
        twins = deg[deg != i][:k]
        row = np.concatenate([twins, others])[:k]
        idx[i] = row
        dist[i] = np.where(np.arange(k) < twins.size, 0.0, 1.0)
    return idx, dist


def approximate_neighbors(X, k, *, metric=None, random_state=None, n_trees=None, leaf_size=None,
                          max_candidates=None, n_iters=None,
                          delta=None) -> tuple[np.ndarray, np.ndarray]:
    """Each point's ``k`` approximate nearest other points and their distances.

    Parameters
    ----------
    X : array (n, p)
        Dense finite coordinates.
    k : int
        Neighbours per point, the point itself excluded: ``1 <= k <= n - 1``.
    metric : None, str, (name, kwds) or Metric
        One of :data:`METRICS` (None: Euclidean).
    random_state : None, int or numpy Generator
        Seed of the trees and the candidate sampling; a seed gives the same result with any number
        of threads.
    n_trees, leaf_size, max_candidates, n_iters : int or None
        The search's settings (None: :func:`default_settings`).
    delta : float or None
        Stop when an iteration changes fewer than ``delta * n * k`` neighbour entries (None:
        :func:`default_settings`).

    Returns
    -------
    indices : int64 ndarray (n, k)
        Nearest first; ties are broken by the lower index.
    distances : float64 ndarray (n, k)
        Distances under ``metric`` (recomputed in float64), increasing along each row.
    """
    from .metric import resolve_metric
    from .knn_args import check_neighbors_k

    metric = resolve_metric("euclidean" if metric is None else metric)
    if metric.name not in METRICS:
        raise ValueError(f"approximate_neighbors does not search metric {metric.describe()!r}; "
                         f"it searches {', '.join(METRICS)} (other metrics: pynndescent)")
    if hasattr(X, "tocsr"):
        raise ValueError("approximate_neighbors needs dense rows; sparse input goes to pynndescent "
                         "(nearest_neighbors(..., method='pynndescent'))")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (n points x p coordinates); got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values; approximate_neighbors needs finite "
                         "coordinates")
    n = X.shape[0]
    k = check_neighbors_k(k, n)
    settings = default_settings(n, k)
    given = {"n_trees": n_trees, "leaf_size": leaf_size, "max_candidates": max_candidates,
             "n_iters": n_iters}
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
        settings[name] = int(value)
    if delta is not None:
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise ValueError(f"delta must be a number in [0, 1); got {delta!r}")
        settings["delta"] = float(delta)
    settings["leaf_size"] = max(settings["leaf_size"], 2)
    seed = _as_seed(random_state)
    S, Xf, kind, final, p, norms, degenerate = _search_data(X, metric)
    if not degenerate.any():
        return _search(S, Xf, k, kind, final, p, norms, seed, settings)
    keep = np.flatnonzero(~degenerate)
    logger.info("nndescent: %d of %d rows are degenerate under %s (distance 1 to every other "
                "point, 0 to each other)", n - keep.size, n, metric.name)
    if keep.size - 1 < k:  # the few others: all of them, exactly
        D = metric.pairwise(X[keep], X[keep])
        np.fill_diagonal(D, np.inf)
        order = np.lexsort((np.broadcast_to(np.arange(keep.size), D.shape), D), axis=-1)
        idx_s = order[:, :keep.size - 1]
        dist_s = np.take_along_axis(D, idx_s, axis=1)
    else:
        idx_s, dist_s = _search(np.ascontiguousarray(S[keep]), np.ascontiguousarray(Xf[keep]), k,
                                kind, final, p, np.ascontiguousarray(norms[keep]), seed, settings)
    return _with_degenerate(idx_s, dist_s, keep, np.flatnonzero(degenerate), k)
