"""Input distances other than Euclidean: the ``metric=`` of ``smallvis()``, ``SmallVis`` and the CLI.

A :class:`Metric` computes blocks of distances between rows (dense or scipy sparse) and the
distances of given pairs. The Euclidean metric keeps the dedicated paths of
:mod:`smallvis.io.distances` and :mod:`smallvis.io.neighbors` (exact, cancellation-free, the
original's numbers); every other metric goes through :meth:`Metric.pairwise`:

- scipy's ``cdist`` for dense rows (one C loop per pair: no cancellation, symmetric to the bit);
- scikit-learn's ``pairwise_distances`` for sparse rows, for the metrics it computes on sparse data
  (:data:`SPARSE_METRICS`); the others densify (under a size limit, see :func:`check_sparse_metric`);
- haversine (great-circle distance of (latitude, longitude) in radians) in NumPy;
- a numba-jitted ``f(x, y) -> float`` through a parallel numba loop compiled for it (not cached on
  disk: it closes over the user's function); any other Python callable through ``cdist`` (slow).

Which distance each affinity kernel reads: the Gaussian (perplexity) kernels ``exp(-beta d^2)`` the
metric's distance squared, the kNN kernels (umap's smooth kNN, step, ...) the distance itself;
distance-fitting methods (mmds, sammon, ...) fit the distance itself. So ``metric="sqeuclidean"``
gives a Gaussian on ``|x - y|^4``, as in umap-learn, where it is a metric like the others.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from .._util.names import match_name

__all__ = ["METRICS", "SPARSE_METRICS", "Metric", "parse_metric", "resolve_metric"]

METRICS = ("euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski", "cosine",
           "correlation", "hamming", "jaccard", "canberra", "braycurtis", "haversine")
ALIASES = {"l2": "euclidean", "l1": "manhattan", "cityblock": "manhattan", "taxicab": "manhattan",
           "linfinity": "chebyshev", "linf": "chebyshev", "infinity": "chebyshev"}
# computed on scipy sparse rows without densifying (scikit-learn's sparse paths)
SPARSE_METRICS = ("euclidean", "sqeuclidean", "manhattan", "cosine")
# keyword arguments each metric takes
_KWDS = {"minkowski": ("p",)}
_SCIPY_NAME = {"manhattan": "cityblock"}
# degenerate rows (all zero, or constant for correlation) have no direction: their distance is 1 to
# every other point and 0 to another degenerate row (scipy would give NaN; pynndescent's choice)
_DIRECTIONAL = ("cosine", "correlation")


@dataclass(frozen=True, eq=False)
class Metric:
    """A resolved input metric: ``name`` (one of :data:`METRICS`, or ``"callable"``), its keyword
    arguments and, for ``"callable"``, the function."""

    name: str
    kwds: dict = field(default_factory=dict)
    func: object = None

    @property
    def euclidean(self) -> bool:
        return self.name == "euclidean"

    def describe(self) -> str:
        if self.name == "callable":
            return f"callable {getattr(self.func, '__name__', repr(self.func))}"
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwds.items())
        return f"{self.name}({args})" if args else self.name

    # --- distances ------------------------------------------------------------------------------

    def pairwise(self, A, B) -> np.ndarray:
        """Distances (a, b), float64, between the rows of ``A`` and of ``B`` (dense or sparse)."""
        sparse = _is_sparse(A) or _is_sparse(B)
        if self.name == "callable":
            return _callable_pairwise(self.func, _dense(A), _dense(B))
        if self.name == "haversine":
            return _haversine(_dense(A), _dense(B))
        if sparse and self.name in SPARSE_METRICS:
            from sklearn.metrics import pairwise_distances

            name = {"sqeuclidean": "euclidean"}.get(self.name, self.name)
            D = pairwise_distances(A, B, metric=name, n_jobs=1)
            D = np.asarray(D, dtype=np.float64)
            if self.name == "sqeuclidean":
                D *= D
            if self.name == "cosine":
                _fix_degenerate(D, _row_norms(A) == 0, _row_norms(B) == 0)
            return D
        from scipy.spatial.distance import cdist

        A, B = _dense(A), _dense(B)
        D = cdist(A, B, metric=_SCIPY_NAME.get(self.name, self.name), **self.kwds)
        if self.name in _DIRECTIONAL:
            _fix_degenerate(D, _degenerate(A, self.name), _degenerate(B, self.name))
        elif self.name == "braycurtis":  # 0 / 0 (two zero rows): 0, as the sampling kernels
            D[np.isnan(D)] = 0.0
        return D

    def paired(self, X, a, b) -> np.ndarray:
        """Distances (m,), float64, of the pairs of rows ``(X[a[t]], X[b[t]])`` (dense or sparse
        ``X``), equal to the matching entries of :meth:`pairwise` up to rounding."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        if self.name == "callable":
            if _is_numba(self.func):
                return np.asarray(_numba_kernels(self.func)[1](_dense(X), a, b), dtype=np.float64)
            rows = _dense(X)
            return np.array([float(self.func(rows[i], rows[j])) for i, j in zip(a, b)])
        if _is_sparse(X) and self.name in SPARSE_METRICS:
            return _sparse_pairs(self.name, X, a, b)
        out = np.empty(a.size)
        step = max(1, (1 << 22) // max(1, X.shape[1]))  # two (step, p) blocks of 32 MiB
        for s in range(0, a.size, step):
            A, B = _dense(X[a[s:s + step]]), _dense(X[b[s:s + step]])
            out[s:s + step] = _paired_dense(self.name, self.kwds, A, B)
        return out

    def to_candidates(self, X, rows: np.ndarray, cand: np.ndarray) -> np.ndarray:
        """Distances (b, m) from ``X[rows[r]]`` to ``X[cand[r, j]]``, float64."""
        rows, cand = np.asarray(rows, dtype=np.int64), np.asarray(cand, dtype=np.int64)
        if self.name == "callable" and _is_numba(self.func):
            a = np.repeat(rows, cand.shape[1])
            return _numba_kernels(self.func)[1](_dense(X), a, cand.ravel()).reshape(cand.shape)
        if _is_sparse(X) and self.name in SPARSE_METRICS:
            return _sparse_pairs(self.name, X, np.repeat(rows, cand.shape[1]),
                                 cand.ravel()).reshape(cand.shape)
        out = np.empty(cand.shape)
        for r, i in enumerate(rows):
            out[r] = self.pairwise(X[i:i + 1], X[cand[r]])[0]
        return out


EUCLIDEAN = Metric("euclidean")


def kernel_rows(metric: Metric, X) -> tuple[np.ndarray, int, float]:
    """``(rows, code, p)`` for :func:`smallvis.io.metric_kernels.pair_distance`: the dense rows as
    that kernel reads them under ``metric`` (cosine and correlation: centred for correlation, unit
    length, plus a column flagging degenerate rows), the metric's code and minkowski's ``p``.
    Raises ``ValueError`` for a callable metric or sparse rows (they have no such kernel)."""
    from .metric_kernels import CODES

    if metric.name == "callable":
        raise ValueError(f"metric {metric.describe()!r}: a callable metric cannot be evaluated "
                         "inside the sampling kernels; give the distance matrix with "
                         "metric='precomputed', or use a named metric")
    if _is_sparse(X):
        raise ValueError(f"metric {metric.describe()!r} on sparse rows: the sampling kernels read "
                         "dense rows; densify X (or reduce it first, e.g. TruncatedSVD)")
    rows = np.ascontiguousarray(X, dtype=np.float64)
    if metric.name in _DIRECTIONAL:
        if metric.name == "correlation":
            rows = rows - rows.mean(axis=1, keepdims=True)
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
        degenerate = _degenerate(np.asarray(X, dtype=np.float64), metric.name)
        unit = np.divide(rows, norms[:, None], out=np.zeros_like(rows), where=~degenerate[:, None])
        rows = np.ascontiguousarray(np.hstack([unit, degenerate[:, None].astype(np.float64)]))
    return rows, CODES[metric.name], float(metric.kwds.get("p", 2.0))


def resolve_metric(metric="euclidean", metric_kwds=None) -> Metric:
    """The :class:`Metric` that ``metric`` names (a name of :data:`METRICS` or an alias, matched
    case-insensitively and by unique prefix; a ``(name, {kwds})`` pair; or a callable ``f(x, y)``,
    best a numba-jitted one) with ``metric_kwds``. Raises ``ValueError`` naming the valid names or
    keywords. ``"precomputed"`` is not a Metric: callers handle it before."""
    if isinstance(metric, Metric):
        return metric
    kwds = dict(metric_kwds or {})
    if isinstance(metric, (tuple, list)) and len(metric) == 2 and isinstance(metric[0], str):
        metric, extra = metric[0], dict(metric[1])
        kwds.update(extra)
    if callable(metric) and not isinstance(metric, str):
        if kwds:
            raise ValueError(f"metric_kwds {kwds!r} cannot be passed to a callable metric; bind "
                             "them in the function")
        return Metric("callable", {}, metric)
    if isinstance(metric, str):
        key = metric.strip().lower()
        metric = ALIASES.get(key, metric)
    name = match_name(metric, METRICS + SOURCES, "metric")
    if name in SOURCES:
        raise ValueError(f"metric={name!r} describes what X holds, not a metric of coordinates")
    allowed = _KWDS.get(name, ())
    unknown = sorted(set(kwds) - set(allowed))
    if unknown:
        raise ValueError(f"unknown metric_kwds {', '.join(map(repr, unknown))} for metric {name!r}; "
                         f"valid: {', '.join(allowed) if allowed else 'none'}")
    if name == "minkowski":
        p = kwds.setdefault("p", 2.0)
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) \
                or not np.isfinite(p) or p < 1:
            raise ValueError(f"metric 'minkowski' needs p >= 1 (a finite number); got p = {p!r}")
        kwds["p"] = float(p)
    return Metric(name, kwds)


SOURCES = ("precomputed", "affinities")


def parse_metric(metric="euclidean", metric_kwds=None) -> tuple[str, Metric | None]:
    """What ``X`` holds and its metric: ``("data", Metric)`` for coordinates, ``("precomputed",
    None)`` for distances (a matrix or a kNN graph), ``("affinities", None)`` for P itself."""
    if isinstance(metric, str) and not callable(metric):
        key = metric.strip().lower()
        name = match_name(ALIASES.get(key, key), METRICS + SOURCES, "metric")
        if name in SOURCES:
            if metric_kwds:
                raise ValueError(f"metric_kwds do not apply to metric={name!r}")
            return name, None
    return "data", resolve_metric(metric, metric_kwds)


def check_metric_data(metric: Metric, X) -> None:
    """Raise ``ValueError`` when ``X``'s shape does not suit ``metric`` (haversine: 2 columns)."""
    if metric.name == "haversine" and X.shape[1] != 2:
        raise ValueError(f"metric 'haversine' needs 2 columns (latitude, longitude in radians); "
                         f"the input has {X.shape[1]}")


def check_sparse_metric(metric: Metric, X, limit_bytes: float = 2 * 2**30):
    """``X`` (scipy sparse) as the metric reads it: CSR float64 for :data:`SPARSE_METRICS`, dense
    under ``limit_bytes`` otherwise, else a ``ValueError`` naming the sparse metrics."""
    if metric.name in SPARSE_METRICS:
        return X
    size = 8.0 * X.shape[0] * X.shape[1]
    if size > limit_bytes:
        raise ValueError(
            f"metric {metric.describe()!r} needs dense rows and the sparse input ({X.shape[0]} x "
            f"{X.shape[1]}) would take {size / 2**30:.1f} GiB dense; sparse input works with "
            f"{', '.join(SPARSE_METRICS)}, or reduce it first (e.g. TruncatedSVD)")
    from .._util.log import logger

    logger.info("metric %s: sparse input densified (%d x %d)", metric.describe(), *X.shape)
    return np.ascontiguousarray(X.toarray(), dtype=np.float64)


# --- helpers -----------------------------------------------------------------------------------


def _is_sparse(X) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _dense(A) -> np.ndarray:
    return np.ascontiguousarray(A.toarray() if _is_sparse(A) else A, dtype=np.float64)


def _row_norms(A) -> np.ndarray:
    if _is_sparse(A):
        return np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _sparse_pairs(name: str, X, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances of the pairs ``(X[a[m]], X[b[m]])`` of CSR rows, for :data:`SPARSE_METRICS`."""
    out = np.empty(a.size)
    step = 65536
    for s in range(0, a.size, step):
        A, B = X[a[s:s + step]], X[b[s:s + step]]
        if name == "cosine":
            dot = np.asarray(A.multiply(B).sum(axis=1)).ravel()
            na, nb = _row_norms(A), _row_norms(B)
            with np.errstate(invalid="ignore", divide="ignore"):
                d = 1.0 - dot / (na * nb)
            d[(na == 0) | (nb == 0)] = 1.0
            d[(na == 0) & (nb == 0)] = 0.0
            out[s:s + step] = np.clip(d, 0.0, 2.0)
            continue
        diff = A - B
        if name == "manhattan":
            out[s:s + step] = np.asarray(abs(diff).sum(axis=1)).ravel()
        else:
            sq = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
            out[s:s + step] = sq if name == "sqeuclidean" else np.sqrt(sq)
    return out


def _paired_dense(name: str, kwds: dict, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-by-row distances of ``A`` and ``B`` (m, p) under a named metric, as scipy's ``cdist``
    defines it (and this module's rule for degenerate rows under cosine and correlation)."""
    if name == "haversine":
        h = (np.sin(0.5 * (A[:, 0] - B[:, 0])) ** 2
             + np.cos(A[:, 0]) * np.cos(B[:, 0]) * np.sin(0.5 * (A[:, 1] - B[:, 1])) ** 2)
        return 2.0 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    if name in _DIRECTIONAL:
        if name == "correlation":
            A = A - A.mean(axis=1, keepdims=True)
            B = B - B.mean(axis=1, keepdims=True)
        na, nb = np.sqrt(np.einsum("ij,ij->i", A, A)), np.sqrt(np.einsum("ij,ij->i", B, B))
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.clip(1.0 - np.einsum("ij,ij->i", A, B) / (na * nb), 0.0, 2.0)
        deg_a, deg_b = _degenerate(A, name), _degenerate(B, name)
        if name == "correlation":  # a centred constant row is all zero
            deg_a, deg_b = ~np.any(A != 0, axis=1), ~np.any(B != 0, axis=1)
        d[deg_a | deg_b] = 1.0
        d[deg_a & deg_b] = 0.0
        return d
    diff = np.abs(A - B)
    if name in ("euclidean", "sqeuclidean"):
        sq = np.einsum("ij,ij->i", diff, diff)
        return sq if name == "sqeuclidean" else np.sqrt(sq)
    if name == "manhattan":
        return diff.sum(axis=1)
    if name == "chebyshev":
        return diff.max(axis=1, initial=0.0)
    if name == "minkowski":
        p = kwds.get("p", 2.0)
        return (diff ** p).sum(axis=1) ** (1.0 / p)
    if name == "hamming":
        return np.mean(A != B, axis=1)
    if name == "jaccard":
        nonzero = (A != 0) | (B != 0)
        union = nonzero.sum(axis=1)
        differ = ((A != B) & nonzero).sum(axis=1)
        return np.where(union > 0, differ / np.maximum(union, 1), 0.0)
    if name == "canberra":
        total = np.abs(A) + np.abs(B)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, diff / total, 0.0).sum(axis=1)
    if name == "braycurtis":
        total = np.abs(A + B).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, diff.sum(axis=1) / total, 0.0)  # 0 / 0: 0
    raise ValueError(f"no paired distances for metric {name!r}")  # pragma: no cover (METRICS)


def _degenerate(A: np.ndarray, name: str) -> np.ndarray:
    if name == "correlation":
        return np.ptp(A, axis=1) == 0
    return ~np.any(A != 0, axis=1)


def _fix_degenerate(D: np.ndarray, deg_a: np.ndarray, deg_b: np.ndarray) -> None:
    if deg_a.any() or deg_b.any():
        D[deg_a, :] = 1.0
        D[:, deg_b] = 1.0
        D[np.ix_(deg_a, deg_b)] = 0.0
    np.nan_to_num(D, copy=False, nan=1.0)


def _haversine(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Great-circle distances (radians on the unit sphere) of (latitude, longitude) rows in radians."""
    lat_a, lon_a = A[:, 0:1], A[:, 1:2]
    lat_b, lon_b = B[None, :, 0], B[None, :, 1]
    h = (np.sin(0.5 * (lat_a - lat_b)) ** 2
         + np.cos(lat_a) * np.cos(lat_b) * np.sin(0.5 * (lon_a - lon_b)) ** 2)
    return 2.0 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def _is_numba(func) -> bool:
    return hasattr(func, "py_func") and hasattr(func, "signatures")


_KERNELS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _numba_kernels(func):
    """A parallel pairwise loop and a pairs loop calling the jitted ``func`` (compiled once per
    function and process; rows are independent, so any thread count gives the same numbers)."""
    if func not in _KERNELS:
        from numba import prange

        from .._util.jit import njit

        @njit(parallel=True)
        def pairwise(A, B):
            out = np.empty((A.shape[0], B.shape[0]))
            for i in prange(A.shape[0]):
                for j in range(B.shape[0]):
                    out[i, j] = func(A[i], B[j])
            return out

        @njit(parallel=True)
        def paired(X, a, b):
            out = np.empty(a.shape[0])
            for m in prange(a.shape[0]):
                out[m] = func(X[a[m]], X[b[m]])
            return out

        _KERNELS[func] = (pairwise, paired)
    return _KERNELS[func]


def _callable_pairwise(func, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    if _is_numba(func):
        D = _numba_kernels(func)[0](A, B)
    else:
        from scipy.spatial.distance import cdist

        D = cdist(A, B, metric=lambda x, y: float(func(x, y)))
    D = np.asarray(D, dtype=np.float64)
    if not np.isfinite(D).all() or (D < 0).any():
        raise ValueError(f"the metric {getattr(func, '__name__', func)!r} returned negative or "
                         "non-finite distances")
    return D
