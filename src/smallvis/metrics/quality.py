"""Embedding quality metrics: arrays in, numbers out.

- :func:`knn_preservation` — mean neighbour preservation ``mnp@k`` as in the original's docs: the mean
  over points of the fraction of each point's ``k`` nearest input neighbours that are also among its
  ``k`` nearest output neighbours (1 = every neighbourhood kept).
- :func:`trustworthiness`, :func:`continuity` — Venna & Kaski's rank penalties for output neighbours
  that are far in the input (intrusions) and input neighbours that are far in the output
  (extrusions); 1 = none.
- :func:`rnx_curve`, :func:`rnx_auc` — Lee, Peluffo-Ordóñez & Verleysen's rescaled neighbourhood
  agreement ``R_NX(K)`` at every scale and its area under a log-``K`` axis.
- :func:`random_triplet_accuracy` — how often a random triplet keeps its distance order.
- :func:`pbic` — the pseudo-BIC of the original's perplexity page
  (docs/original.md#evaluation-helpers).
- :func:`compute_metrics` — a dictionary of these at one ``k``, as the command line and sweeps report.

The rank metrics (trustworthiness, continuity, R_NX; :mod:`smallvis.metrics.rank`) need every
point's full distance ranking: O(n^2 log n) time, computed in row blocks so memory stays
O(block x n). Above ``RANK_MAX_N`` points they can use a fixed seeded random subsample
(``RANK_SEED``).
"""

from __future__ import annotations

import numpy as np

from .._util.log import logger
from .._util.names import match_name
from .inputs import InputSpace
from .rank import (_BLOCK_BYTES, RANK_MAX_N, RANK_NAMES, RANK_SEED, _check, _check_k, continuity,
                   rank_metrics, rnx_auc, rnx_curve, trustworthiness)

__all__ = ["METRIC_K", "METRIC_NAMES", "RANK_MAX_N", "compute_metrics", "continuity",
           "knn_preservation", "pbic", "pbic_inputs", "random_triplet_accuracy", "rnx_auc",
           "rnx_curve", "trustworthiness"]


def _neighbours(Z: np.ndarray, k: int) -> np.ndarray:
    """Indices (n, k) of each point's k nearest neighbours, the point itself excluded."""
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=k).fit(Z).kneighbors(return_distance=False)


def knn_preservation(X, Y, k: int = 15, *, metric="euclidean") -> float:
    """Mean fraction of each point's ``k`` nearest input neighbours kept among its ``k`` output ones.

    .. math:: \\mathrm{mnp}(k) = \\frac{1}{n k} \\sum_i |N^X_k(i) \\cap N^Y_k(i)|

    Exact neighbours (scikit-learn's searches: brute force in row chunks for high-dimensional ``X``,
    a k-d tree for low-dimensional ``Y``), so memory stays bounded for large ``n``.

    Parameters
    ----------
    X : array (n, p)
        Input data (Euclidean distances).
    Y : array (n, d)
        Embedding.
    k : int
        Neighbourhood size, ``1 <= k < n``.
    metric : str, (str, dict) or callable
        The input's metric (:mod:`smallvis.io.metric`; Euclidean by default), or ``"precomputed"``
        (``X`` a distance matrix or a sparse kNN graph); with another metric than Euclidean ``X``
        may be scipy sparse and the input neighbours come from
        :func:`smallvis.io.neighbors.nearest_neighbors`.

    Returns
    -------
    float in [0, 1]
    """
    if not _euclidean(metric) or hasattr(X, "tocsr"):
        from ..io.neighbors import nearest_neighbors

        Y = np.asarray(Y, dtype=np.float64)
        k = int(k)
        if isinstance(metric, str) and metric.strip().lower() == "precomputed":
            if hasattr(X, "tocsr"):  # a kNN graph: its first k neighbours
                from ..io.graph import graph_neighbors

                nx = graph_neighbors(X)[0][:, :k]
            else:
                nx = nearest_neighbors(X, k, precomputed=True)[0]
        else:
            nx = nearest_neighbors(X, k, metric=metric, random_state=0)[0]
        ny = _neighbours(Y, k)
        both = np.sort(np.hstack([nx, ny]), axis=1)
        return float(np.count_nonzero(both[:, 1:] == both[:, :-1]) / nx.size)
    X, Y, k = _check(X, Y, k)
    nx, ny = _neighbours(X, k), _neighbours(Y, k)
    both = np.sort(np.hstack([nx, ny]), axis=1)  # a shared neighbour appears twice, side by side
    kept = np.count_nonzero(both[:, 1:] == both[:, :-1])
    return float(kept / nx.size)


def random_triplet_accuracy(X, Y, n_triplets: int = 100_000, random_state=RANK_SEED, *,
                            metric="euclidean") -> float:
    """Fraction of random triplets whose distance order is the same in the input and the output.

    Triplets ``(i, j, l)`` of distinct points are drawn uniformly (seeded by ``random_state``,
    reproducible); a triplet agrees when ``[d_X(i, j) < d_X(i, l)] == [d_Y(i, j) < d_Y(i, l)]``.
    1 = every order kept, about 0.5 for an unrelated embedding. The standard error is at most
    ``0.5 / sqrt(n_triplets)``.

    Parameters
    ----------
    X, Y : arrays (n, p), (n, d)
        Input data and embedding, ``n >= 3``. ``X`` may be scipy sparse, or an (n, n) distance
        matrix with ``metric="precomputed"``.
    n_triplets : int
        Number of triplets, at least 1.
    metric : str, (str, dict) or callable
        The input's metric (:mod:`smallvis.io.metric`; Euclidean by default) or ``"precomputed"``.

    Returns
    -------
    float in [0, 1]
    """
    X, Y, _ = _check(X, Y, None, metric, "random_triplet_accuracy")
    n = Y.shape[0]
    if n < 3:
        raise ValueError(f"random_triplet_accuracy needs at least 3 points; got {n}")
    if isinstance(n_triplets, bool) or not isinstance(n_triplets, (int, np.integer)) or n_triplets < 1:
        raise ValueError(f"n_triplets must be a whole number >= 1; got {n_triplets!r}")
    rng = np.random.default_rng(random_state)
    i = rng.integers(n, size=n_triplets)
    j = (i + rng.integers(1, n, size=n_triplets)) % n
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    h = rng.integers(n - 2, size=n_triplets)  # the third point: skip i and j
    h += h >= lo
    h += h >= hi
    if isinstance(X, InputSpace):
        closer_x = X.pairs(i, j) < X.pairs(i, h)
        closer_y = np.einsum("ij,ij->i", Y[i] - Y[j], Y[i] - Y[j]) < np.einsum(
            "ij,ij->i", Y[i] - Y[h], Y[i] - Y[h])
        return int(np.count_nonzero(closer_x == closer_y)) / n_triplets
    agree = 0
    step = max(1, _BLOCK_BYTES // (8 * max(X.shape[1], Y.shape[1])))
    for s in range(0, n_triplets, step):
        b = slice(s, s + step)
        closer = [np.einsum("ij,ij->i", Z[i[b]] - Z[j[b]], Z[i[b]] - Z[j[b]])
                  < np.einsum("ij,ij->i", Z[i[b]] - Z[h[b]], Z[i[b]] - Z[h[b]]) for Z in (X, Y)]
        agree += int(np.count_nonzero(closer[0] == closer[1]))
    return agree / n_triplets


def pbic(kl_cost: float, perplexity: float, n: int) -> float:
    """Pseudo-BIC for choosing a perplexity (Cao & Wang 2017; docs/original.md#evaluation-helpers).

    .. math:: \\mathrm{pBIC} = 2\\,\\mathrm{KL}(P \\| Q) + \\frac{\\mathrm{Perp}}{n} \\log n

    Parameters
    ----------
    kl_cost : float
        Final KL divergence of a t-SNE-like run (``res.cost``).
    perplexity : float
        The run's perplexity, > 0.
    n : int
        Number of points, >= 1.
    """
    if not np.isfinite(perplexity) or perplexity <= 0:
        raise ValueError(f"pbic needs a positive perplexity; got {perplexity!r}")
    if n < 1:
        raise ValueError(f"pbic needs n >= 1; got {n!r}")
    return float(2.0 * kl_cost + perplexity / n * np.log(n))



def pbic_inputs(res) -> dict:
    """``cost`` (the final KL) and ``perplexity`` for the pBIC metric of a result ``res`` when the
    method's cost is a plain KL divergence (gsne only with lambda 0) and the perplexity a single
    number; else nothing. ``compute_metrics(X, res.Y, **pbic_inputs(res))``."""
    from ..methods import build_method

    p = res.perplexity
    method = build_method(res.method)
    kl = getattr(getattr(method, "divergence", None), "name", None) == "kl"
    if not kl or getattr(method, "params", {}).get("lambda") or res.opt.get("name") == "sgd" \
            or isinstance(p, bool) or not isinstance(p, (int, float)):
        return {}
    return {"cost": res.cost, "perplexity": p}


# the neighbourhood size of the metrics the command line and sweeps report
METRIC_K = 15
METRIC_NAMES = ("knn_preservation", "trustworthiness", "continuity", "rnx_auc",
                "random_triplet_accuracy", "pbic")
K_METRICS = ("knn_preservation", "trustworthiness", "continuity")  # those that depend on k


def _is_graph(X, metric) -> bool:
    """``X`` a sparse kNN distance graph (``metric="precomputed"``, scipy sparse)."""
    return (hasattr(X, "tocsr") and isinstance(metric, str)
            and metric.strip().lower() == "precomputed")


def _euclidean(metric) -> bool:
    return metric is None or (isinstance(metric, str) and metric.strip().lower() in ("euclidean",
                                                                                     "l2"))


def compute_metrics(X, Y, k: int = METRIC_K, *, which=None, cost=None, perplexity=None,
                    metric="euclidean") -> dict:
    """Quality metrics of an embedding at ``k``, as a dictionary (with ``"k"``).

    Default (``which`` None): ``knn_preservation``; ``trustworthiness`` and ``continuity`` when
    ``n <= RANK_MAX_N`` and ``k < n / 2``; ``rnx_auc`` (on a random ``RANK_MAX_N`` points when
    there are more); ``pbic`` when ``cost`` (the final KL) and ``perplexity`` are given. Nothing when
    ``n <= k``.

    ``which`` names the metrics to compute (a list of names from ``METRIC_NAMES``, unique prefixes
    allowed); then trustworthiness and continuity above ``RANK_MAX_N`` points are computed on the
    same random subsample as ``rnx_auc``, and ``pbic`` requires ``cost`` and ``perplexity``. When a
    rank metric used a subsample, ``"rank_subsample"`` gives its size.

    ``metric``: the input's metric (:mod:`smallvis.io.metric`) or ``"precomputed"``; every metric
    reads the input distances under it. With a sparse kNN graph (``"precomputed"``, sparse ``X``)
    only ``knn_preservation`` (and ``pbic``) can be computed: the others need every pair.
    """
    names = None if which is None else [match_name(w, METRIC_NAMES, "metric")
                                        for w in ([which] if isinstance(which, str) else which)]
    if _is_graph(X, metric):
        out = {"k": k, "knn_preservation": knn_preservation(X, Y, k, metric=metric)}
        if names is not None and set(names) - {"knn_preservation", "pbic"}:
            logger.warning("metrics %s skipped: a kNN graph has only each point's nearest "
                           "distances", ", ".join(sorted(set(names) - {"knn_preservation", "pbic"})))
        if cost is not None and perplexity is not None:
            out["pbic"] = pbic(cost, perplexity, np.shape(Y)[0])
        return out
    X, Y, _ = _check(X, Y, None, metric)
    n = Y.shape[0]
    out = {"k": k}
    if k >= n:
        logger.warning("metrics skipped: need more than %d points", k)
        return out
    _check_k(k, n)
    if names is None:
        names = ["knn_preservation"]
        if n <= RANK_MAX_N and k < n / 2:
            names += ["trustworthiness", "continuity"]
        if n >= 3:
            names.append("rnx_auc")
        if cost is not None and perplexity is not None:
            names.append("pbic")
    raw = X.X if isinstance(X, InputSpace) else X
    if "knn_preservation" in names:
        out["knn_preservation"] = knn_preservation(raw, Y, k, metric=metric)
    rank = [name for name in RANK_NAMES if name in names]
    if rank:
        out.update(rank_metrics(X, Y, k, rank, max_n=RANK_MAX_N))
    if "random_triplet_accuracy" in names:
        out["random_triplet_accuracy"] = random_triplet_accuracy(raw, Y, metric=metric)
    if "pbic" in names:
        if cost is None or perplexity is None:
            raise ValueError("metric 'pbic' needs the final KL cost and a numeric perplexity")
        out["pbic"] = pbic(cost, perplexity, n)
    return out
