"""Nearest neighbours without an (n, n) distance matrix: exact (blocked brute force) or approximate.

:func:`nearest_neighbors` returns each point's ``k`` nearest *other* points, nearest first, with their
Euclidean distances. The exact search works on blocks of rows, so its memory is O(block * n) rather
than O(n^2); the approximate ones are the library's own NN-descent (:mod:`smallvis.io.nndescent`:
dense rows, the metrics it lists; cached kernels, reproducible with any thread count) and pynndescent
(an optional dependency, imported only when used: sparse rows and the other metrics).

Exact results equal :meth:`smallvis.io.data.InputData.knn` (a stable argsort of each dense distance
row): ties are broken by the lower index. The squared distances of a block are computed as
``|x|^2 + |y|^2 - 2 x.y`` (on centred data), which is fast but carries cancellation error; so every
point whose approximate distance is within a rigorous error bound of the ``k``-th smallest is kept as
a candidate, the candidates' distances are recomputed directly from the coordinates, and the final
order is decided on those accurate distances (then on the index).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._util.log import logger
from .._util.names import match_name
from .distances import shift_origin
from .knn_args import check_neighbors_k

__all__ = ["EXACT_MAX_N", "KNN_METHODS", "auto_knn_method", "check_neighbors_k",
           "nearest_neighbors"]

KNN_METHODS = ("auto", "exact", "nndescent", "pynndescent")
# "auto" above EXACT_MAX_N: the library's search up to this many neighbours, pynndescent for more.
# 70,000 x 50 blobs, one process, 2 cores: k = 15 ours 15.4 s at recall 0.946, pynndescent 6.6 s at
# 0.869 (plus its ~20 s compilation in every new process); k = 90 (t-SNE's) ours 77 s, pynndescent
# 15.6 s at 0.9997. Since (nearest candidates first; 4 trees, 40 candidates for k > 30): k = 15
# recall 0.955; k = 90 ours about 2x pynndescent's time once it is compiled (179 s against 93 s on
# a loaded machine, recall 0.9986 and 0.9998), so pynndescent stays the choice above 30
# (benchmarks/README.md, knn.py)
AUTO_OWN_MAX_K = 30
EXACT_MAX_N = 20_000  # "auto" searches exactly up to this many points (about 2.5 s at n = 20,000,
# 50-D, 2 cores: less than pynndescent's compilation in a fresh process)
# "auto" with more than AUTO_OWN_MAX_K neighbours also searches dense Euclidean rows exactly (the
# blocked brute force, memory O(block * n)) while n^2 D is at most this. 70,000 resampled digits
# (64-D), k = 90, one process, 2 cores beside other work: exact 61 s at 0.55 GB peak, pynndescent
# 75 s (with its compilation) at 2.3 GB
EXACT_MANY_K_WORK = 3.5e11


def auto_knn_method(n: int, k: int, dim: int, *, euclidean_rows: bool = True,
                    exact_max_n: int | None = None) -> str:
    """The search ``"auto"`` picks for ``n`` points of dimension ``dim`` and ``k`` neighbours:
    ``"exact"`` up to ``exact_max_n`` points (None: :data:`EXACT_MAX_N`); above, ``"nndescent"``
    for at most :data:`AUTO_OWN_MAX_K` neighbours; more neighbours ``"exact"`` on dense Euclidean
    rows (``euclidean_rows``) while ``n^2 dim <= EXACT_MANY_K_WORK``, else ``"pynndescent"``."""
    limit = EXACT_MAX_N if exact_max_n is None else exact_max_n
    if n <= limit:
        return "exact"
    if k <= AUTO_OWN_MAX_K:
        return "nndescent"
    if euclidean_rows and float(n) * n * dim <= EXACT_MANY_K_WORK:
        return "exact"
    return "pynndescent"


def own_search_applies(X, metric) -> bool:
    """Whether :func:`smallvis.io.nndescent.approximate_neighbors` searches ``X`` under ``metric``:
    dense rows and one of its metrics."""
    from .nndescent import METRICS

    return not hasattr(X, "tocsr") and metric.name in METRICS

_EPS = float(np.finfo(np.float64).eps)
_BLOCK_BYTES = 64 * 2**20  # a block's float64 distance array stays at or below ~64 MB


# --- validation ----------------------------------------------------------------------------------


def _block_rows(n: int) -> int:
    return int(max(1, min(n, _BLOCK_BYTES // (8 * max(n, 1)))))


# --- exact search --------------------------------------------------------------------------------


def _exact_sq(X: np.ndarray, rows: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Squared distances from ``X[rows[r]]`` to ``X[cand[r, j]]``, computed from coordinate
    differences, summed in coordinate order (no (b, m, p) temporary)."""
    from .knn_kernels import candidate_sq

    return candidate_sq(np.ascontiguousarray(X, dtype=np.float64),
                        np.ascontiguousarray(rows, dtype=np.int64),
                        np.ascontiguousarray(cand, dtype=np.int64))


def _finish(cand: np.ndarray, key: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row's candidates by (key, index) and keep the first ``k``."""
    order = np.lexsort((cand, key), axis=-1)[:, :k]
    return np.take_along_axis(cand, order, axis=1), np.take_along_axis(key, order, axis=1)


def _select_block(A: np.ndarray, rows: np.ndarray, k: int, slack: np.ndarray | float,
                  exact) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest neighbours of the points ``rows`` from their approximate distance block ``A``.

    ``A`` (b, n) holds, row by row, a monotone proxy of the distances (squared distances up to a
    per-row constant, or the distances themselves) with ``inf`` at the point itself. Every entry
    within ``slack`` (per row) of the row's ``k``-th smallest value is a candidate; ``exact(rows,
    cand)`` gives the final distances of the candidates, on which they are ordered (ties: lower
    index first).
    """
    b, n = A.shape
    kth = np.partition(A, k - 1, axis=1)[:, k - 1]
    mask = A <= (kth + slack)[:, None]
    count = np.count_nonzero(mask, axis=1)
    idx = np.empty((b, k), dtype=np.int64)
    dist = np.empty((b, k))
    # rows with a modest number of candidates: one vectorised pass, candidates padded with the point
    # itself at an infinite distance
    cap = max(2 * k, k + 16)
    heavy = count > cap
    if heavy.any():
        mask[heavy] = False
    r, c = np.nonzero(mask)
    light = np.flatnonzero(~heavy)
    if light.size:
        width = int(count[light].max())
        start = np.zeros(b, dtype=np.int64)
        start[1:] = np.cumsum(np.where(heavy, 0, count))[:-1]
        cand = np.repeat(rows[:, None].astype(np.int64), width, axis=1)
        cand[r, np.arange(r.size) - start[r]] = c
        cand = cand[light]
        key = exact(rows[light], cand)
        key[cand == rows[light, None]] = np.inf
        idx[light], dist[light] = _finish(cand, key, k)
    # rows with many near-ties (e.g. many duplicates): one at a time, all their candidates
    for i in np.flatnonzero(heavy):
        cand = np.flatnonzero(A[i] <= kth[i] + (slack[i] if np.ndim(slack) else slack))
        cand = cand.astype(np.int64)[None, :]
        ii, dd = _finish(cand, exact(rows[i:i + 1], cand), k)
        idx[i], dist[i] = ii[0], dd[0]
    return idx, dist


def _expanded_form_slack(sq: np.ndarray, p: int):
    """Error bound of squared distances computed as ``|x|^2 + |y|^2 - 2 x.y`` from coordinates with
    squared norms ``sq``: ``|computed - true| <= (2p + 4) eps (|x|^2 + |y|^2)``; twice that separates
    the computed k-th value from any true tie. Returns ``slack(rows)``."""
    bound = 2.0 * (2 * p + 4) * _EPS
    sq_max = float(sq.max())
    return lambda rows: bound * (sq[rows] + sq_max)


def _search_blocks(n: int, k: int, scores, slack, exact, X=None) -> tuple[np.ndarray, np.ndarray]:
    """Row blocks of ``scores(rows)`` (values ordered as the distances, self excluded here), each
    block's ``k`` smallest selected by :func:`_select_block`, or, when the exact distances come from
    coordinates ``X``, by the same rule in a parallel numba kernel."""
    block = _block_rows(n)
    idx = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    if X is not None:
        from .knn_kernels import select_rows

        X = np.ascontiguousarray(X, dtype=np.float64)
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        A = scores(rows)
        A[np.arange(rows.size), rows] = np.inf
        if X is None:
            idx[rows], dist[rows] = _select_block(A, rows, k, slack(rows), exact)
        else:
            select_rows(A, rows, k, np.broadcast_to(slack(rows), rows.shape).astype(np.float64),
                        X, idx[start:start + rows.size], dist[start:start + rows.size])
    return idx, dist


def _exact_coordinates(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    Xc = shift_origin(X)
    sq = np.einsum("ij,ij->i", Xc, Xc)

    def scores(rows):
        # |y|^2 - 2 x.y: the squared distance less the row's constant |x|^2 (order is all we need)
        A = Xc[rows] @ Xc.T
        A *= -2.0
        A += sq[None, :]
        return A

    return _search_blocks(X.shape[0], k, scores, _expanded_form_slack(sq, X.shape[1]),
                          lambda rows, cand: np.sqrt(_exact_sq(X, rows, cand)), X=X)


def _exact_matrix(D: np.ndarray, k: int, *, squared: bool = False,
                  X: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact neighbours from an (n, n) matrix ``D`` read in row blocks.

    ``D`` holds distances (``squared=False``) or squared distances. Without coordinates ``X`` the
    entries are taken as they are (a precomputed distance matrix). With ``X`` they were computed from
    those coordinates by the expanded formula: candidates within its error bound are re-ranked on
    distances recomputed from the coordinates, as in the blocked search.
    """
    if X is None:
        def exact(rows, cand):
            vals = np.take_along_axis(D[rows], cand, axis=1)
            return np.sqrt(vals) if squared else vals

        return _search_blocks(D.shape[0], k, lambda rows: np.array(D[rows], dtype=np.float64),
                              lambda rows: 0.0, exact)

    def scores(rows):
        A = np.array(D[rows], dtype=np.float64)
        if not squared:  # compare squared values, where the error bound holds
            A *= A
        return A

    Xc = shift_origin(X)  # the coordinates D was computed from (squared_distances)
    return _search_blocks(D.shape[0], k, scores,
                          _expanded_form_slack(np.einsum("ij,ij->i", Xc, Xc), X.shape[1]),
                          lambda rows, cand: np.sqrt(_exact_sq(X, rows, cand)))


def _exact_metric(X, k: int, metric) -> tuple[np.ndarray, np.ndarray]:
    """Exact neighbours under a non-Euclidean :class:`~smallvis.io.metric.Metric`: row blocks of its
    distances, read as they are (ties: lower index)."""
    n = X.shape[0]
    block = _block_rows(n)
    idx = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        A = metric.pairwise(X[rows], X)
        A[np.arange(rows.size), rows] = np.inf
        idx[rows], dist[rows] = _select_block(
            A, rows, k, 0.0, lambda r, c: np.take_along_axis(A[r - start], c, axis=1))
    return idx, dist


# --- approximate search ----------------------------------------------------------------------------


def _seed(random_state):
    if random_state is None:
        return None
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    raise TypeError(
        f"random_state must be None, an int or a numpy Generator; got {type(random_state).__name__}"
    )


def _nndescent(X, k: int, random_state, n_jobs, pynndescent, metric=None):
    n = X.shape[0]
    if metric is None or (metric.euclidean and not hasattr(X, "tocsr")):
        name, kwds = "euclidean", {}
        exact = lambda rows, cand: np.sqrt(_exact_sq(X, rows, cand))  # noqa: E731
    else:
        name, kwds = (metric.func, {}) if metric.name == "callable" else (metric.name, metric.kwds)
        exact = lambda rows, cand: metric.to_candidates(X, rows, cand)  # noqa: E731
    index = pynndescent.NNDescent(X, metric=name, metric_kwds=kwds or None, n_neighbors=k + 1,
                                  random_state=_seed(random_state), n_jobs=n_jobs, verbose=False)
    graph = np.asarray(index.neighbor_graph[0], dtype=np.int64)
    rows = np.arange(n)
    is_self = graph == rows[:, None]
    # drop the point itself wherever it is listed (with duplicate points it need not come first);
    # where it is not listed at all, drop the last (farthest) column
    has_self = is_self.any(axis=1)
    drop = np.where(has_self, np.argmax(is_self, axis=1), k)
    keep = np.ones(graph.shape, dtype=bool)
    keep[rows, drop] = False
    cand = graph[keep].reshape(n, k)
    # pynndescent works in float32 and may leave a slot unfilled (-1): recompute the distances in
    # float64, re-sort (ties: lower index), and search the odd row that is incomplete exactly
    bad = np.flatnonzero((cand < 0).any(axis=1)
                         | (np.sort(cand, axis=1)[:, 1:] == np.sort(cand, axis=1)[:, :-1]).any(axis=1))
    cand[bad] = 0
    idx, dist = _finish(cand, exact(rows, cand), k)
    for r in bad:
        d = exact(np.array([r]), np.arange(n, dtype=np.int64)[None, :])[0]
        d[r] = np.inf
        i, dd = _finish(np.arange(n, dtype=np.int64)[None, :], d[None, :], k)
        idx[r], dist[r] = i[0], dd[0]
    if bad.size:
        logger.info("kNN: %d incomplete pynndescent rows searched exactly", bad.size)
    return idx, dist


def _named(metric) -> str:
    return "" if metric.euclidean else f" ({metric.describe()})"


def query_neighbors(A, B, k: int, metric=None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of ``B`` to each row of ``A`` (brute force, in row blocks of ``A``):
    ``(indices, distances)``, nearest first (ties: lower index). Euclidean on dense rows goes
    through scikit-learn's brute-force search; other metrics or sparse rows through
    :meth:`~smallvis.io.metric.Metric.pairwise`."""
    if (metric is None or metric.euclidean) and not (hasattr(A, "tocsr") or hasattr(B, "tocsr")):
        from sklearn.neighbors import NearestNeighbors

        dist, idx = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(B).kneighbors(A)
        return idx, dist
    from .metric import EUCLIDEAN

    metric = metric or EUCLIDEAN
    m = A.shape[0]
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k))
    step = _block_rows(B.shape[0])
    for start in range(0, m, step):
        D = metric.pairwise(A[start:start + step], B)
        order = np.argsort(D, axis=1, kind="stable")[:, :k]  # ties: the lower index
        idx[start:start + step] = order
        dist[start:start + step] = np.take_along_axis(D, order, axis=1)
    return idx, dist


# --- public entry point ----------------------------------------------------------------------------


def nearest_neighbors(X, k, *, precomputed: bool = False, method: str = "auto", random_state=None,
                      exact_max_n: int | None = None, n_jobs=None,
                      metric="euclidean") -> tuple[np.ndarray, np.ndarray]:
    """Each point's ``k`` nearest other points and their distances (Euclidean unless ``metric``).

    Parameters
    ----------
    X : array (n, p), or (n, n) distances with ``precomputed=True``
    k : int
        Neighbours per point, the point itself excluded: ``1 <= k <= n - 1``.
    precomputed : bool
        ``X`` is a distance matrix; neighbours are read from its rows (always exactly).
    method : {"auto", "exact", "nndescent", "pynndescent"}
        ``"auto"`` searches exactly when ``n <= exact_max_n``; above, with ``"nndescent"`` where it
        applies (dense rows, a metric of :data:`smallvis.io.nndescent.METRICS`) and
        ``k <= AUTO_OWN_MAX_K``; with more neighbours exactly on dense Euclidean rows while
        ``n^2 p <= EXACT_MANY_K_WORK`` (faster there, and a fraction of the memory), else with
        pynndescent (:func:`auto_knn_method`). ``"exact"`` is a blocked brute force (memory
        O(block * n)); ``"nndescent"`` is
        the library's approximate search (:func:`smallvis.io.nndescent.approximate_neighbors`; for
        sparse rows or other metrics it hands over to pynndescent); ``"pynndescent"`` is
        pynndescent's (without it the search falls back to exact, with a warning).
    random_state : None, int or numpy Generator
        Seed of the approximate search (a Generator is asked for an int seed).
    exact_max_n : int or None
        Largest ``n`` searched exactly by ``"auto"`` (None: :data:`EXACT_MAX_N`).
    n_jobs : int or None
        Threads for pynndescent (the own search uses numba's thread count).
    metric : str, (name, kwds), callable or Metric
        The input metric (:func:`smallvis.io.metric.resolve_metric`); the approximate searches use
        the same metric, and every distance returned is recomputed by :mod:`smallvis.io.metric`.

    Returns
    -------
    indices : int64 ndarray (n, k)
        Nearest first; ties are broken by the lower index (as :meth:`InputData.knn`).
    distances : float64 ndarray (n, k)
        Distances under ``metric`` (Euclidean: not squared), increasing along each row.
    """
    from .metric import check_metric_data, check_sparse_metric, resolve_metric

    method = match_name(method, KNN_METHODS, "kNN method")
    metric = resolve_metric(metric)
    if precomputed:
        D = np.asarray(X, dtype=np.float64)
        if D.ndim != 2 or D.shape[0] != D.shape[1]:
            raise ValueError(f"precomputed=True needs a square distance matrix; got shape {D.shape}")
        n = D.shape[0]
    elif not hasattr(X, "tocsr"):
        from .preprocess import as_numeric_matrix

        X = as_numeric_matrix(X)
        n = X.shape[0]
    else:  # sparse rows, for a metric that reads them (or densified under a size limit)
        X = check_sparse_metric(metric, X.tocsr().astype(np.float64))
        n = X.shape[0]
    dense_euclidean = metric.euclidean and not hasattr(X, "tocsr")
    if not precomputed:
        check_metric_data(metric, X)
    k = check_neighbors_k(k, n)
    if precomputed:
        logger.info("kNN: exact, from the rows of the precomputed distance matrix, for %d points, "
                    "k = %d", n, k)
        return _exact_matrix(D, k)
    if method == "auto":
        method = auto_knn_method(n, k, X.shape[1], euclidean_rows=dense_euclidean,
                                 exact_max_n=exact_max_n)
    if method == "nndescent" and own_search_applies(X, metric):
        from .nndescent import approximate_neighbors

        logger.info("kNN: nndescent (the library's approximate search%s) for %d points, k = %d",
                    _named(metric), n, k)
        return approximate_neighbors(X, k, metric=metric, random_state=random_state)
    if method in ("nndescent", "pynndescent"):
        try:
            import pynndescent
        except ImportError:
            logger.warning("kNN: pynndescent is not installed (pip install smallvis[fast]); falling "
                           "back to exact brute force for %d points", n)
            method = "exact"
        else:
            logger.info("kNN: pynndescent (approximate%s%s) for %d points, k = %d",
                        _named(metric), ", sparse rows" if hasattr(X, "tocsr") else "", n, k)
            return _nndescent(X, k, random_state, n_jobs, pynndescent, metric)
    logger.info("kNN: exact brute force%s for %d points, k = %d", _named(metric), n, k)
    return _exact_coordinates(X, k) if dense_euclidean else _exact_metric(X, k, metric)
